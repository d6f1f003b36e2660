package stub

import (
	"context"
	"strconv"
	"sync"

	"github.com/nri-handover/nri/api"
)

// syncCall is one Synchronize call as the plugin saw it.
type syncCall struct {
	pods       []*api.PodSandbox
	containers []*api.Container
	info       *SyncInfo
	hasInfo    bool
}

// testPlugin implements every handler and records what reached it.
type testPlugin struct {
	mu        sync.Mutex
	mask      EventMask // returned by Configure
	cfgErr    error
	roleErr   error
	events    []string
	syncC     chan syncCall
	shutdownC chan *api.ShutdownRequest // ShutdownWithReason
	legacyC   chan struct{}             // Shutdown
	roleC     chan *api.RoleChangeRequest
}

func newTestPlugin() *testPlugin {
	return &testPlugin{
		syncC:     make(chan syncCall, 16),
		shutdownC: make(chan *api.ShutdownRequest, 4),
		legacyC:   make(chan struct{}, 4),
		roleC:     make(chan *api.RoleChangeRequest, 4),
	}
}

func (p *testPlugin) record(e string) {
	p.mu.Lock()
	p.events = append(p.events, e)
	p.mu.Unlock()
}

func (p *testPlugin) seen() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.events...)
}

func (p *testPlugin) Configure(context.Context, string, string, string) (EventMask, error) {
	return p.mask, p.cfgErr
}

func (p *testPlugin) Synchronize(ctx context.Context, pods []*api.PodSandbox, ctrs []*api.Container) ([]*api.ContainerUpdate, error) {
	info, ok := SyncInfoFrom(ctx)
	p.syncC <- syncCall{pods: pods, containers: ctrs, info: info, hasInfo: ok}
	return []*api.ContainerUpdate{{ContainerId: "synced"}}, nil
}

func (p *testPlugin) Shutdown(context.Context) { p.legacyC <- struct{}{} }

func (p *testPlugin) ShutdownWithReason(_ context.Context, req *api.ShutdownRequest) {
	p.shutdownC <- req
}

func (p *testPlugin) RoleChange(_ context.Context, req *api.RoleChangeRequest) error {
	p.roleC <- req
	return p.roleErr
}

func (p *testPlugin) RunPodSandbox(_ context.Context, pod *api.PodSandbox) error {
	p.record("RunPodSandbox:" + pod.GetId())
	return nil
}

func (p *testPlugin) UpdatePodSandbox(_ context.Context, pod *api.PodSandbox, _, _ *api.LinuxResources) error {
	p.record("UpdatePodSandbox:" + pod.GetId())
	return nil
}

func (p *testPlugin) PostUpdatePodSandbox(_ context.Context, pod *api.PodSandbox) error {
	p.record("PostUpdatePodSandbox:" + pod.GetId())
	return nil
}

func (p *testPlugin) StopPodSandbox(_ context.Context, pod *api.PodSandbox) error {
	p.record("StopPodSandbox:" + pod.GetId())
	return nil
}

func (p *testPlugin) RemovePodSandbox(_ context.Context, pod *api.PodSandbox) error {
	p.record("RemovePodSandbox:" + pod.GetId())
	return nil
}

func (p *testPlugin) CreateContainer(_ context.Context, _ *api.PodSandbox, c *api.Container) (*api.ContainerAdjustment, []*api.ContainerUpdate, error) {
	p.record("CreateContainer:" + c.GetId())
	if c.GetId() == "fail" {
		return nil, nil, errTest
	}
	return &api.ContainerAdjustment{Annotations: map[string]string{"adjusted-by": "test"}},
		[]*api.ContainerUpdate{{ContainerId: "other"}}, nil
}

func (p *testPlugin) PostCreateContainer(_ context.Context, _ *api.PodSandbox, c *api.Container) error {
	p.record("PostCreateContainer:" + c.GetId())
	return nil
}

func (p *testPlugin) StartContainer(_ context.Context, _ *api.PodSandbox, c *api.Container) error {
	p.record("StartContainer:" + c.GetId())
	return nil
}

func (p *testPlugin) PostStartContainer(_ context.Context, _ *api.PodSandbox, c *api.Container) error {
	p.record("PostStartContainer:" + c.GetId())
	return nil
}

func (p *testPlugin) UpdateContainer(_ context.Context, _ *api.PodSandbox, c *api.Container, _ *api.LinuxResources) ([]*api.ContainerUpdate, error) {
	p.record("UpdateContainer:" + c.GetId())
	return []*api.ContainerUpdate{{ContainerId: c.GetId()}}, nil
}

func (p *testPlugin) PostUpdateContainer(_ context.Context, _ *api.PodSandbox, c *api.Container) error {
	p.record("PostUpdateContainer:" + c.GetId())
	return nil
}

func (p *testPlugin) StopContainer(_ context.Context, _ *api.PodSandbox, c *api.Container) ([]*api.ContainerUpdate, error) {
	p.record("StopContainer:" + c.GetId())
	return []*api.ContainerUpdate{{ContainerId: "stopped-" + c.GetId()}}, nil
}

func (p *testPlugin) RemoveContainer(_ context.Context, _ *api.PodSandbox, c *api.Container) error {
	p.record("RemoveContainer:" + c.GetId())
	return nil
}

func (p *testPlugin) ValidateContainerAdjustment(_ context.Context, req *api.ValidateContainerAdjustmentRequest) error {
	p.record("Validate:" + req.GetContainer().GetId())
	if req.GetContainer().GetId() == "reject" {
		return errTest
	}
	return nil
}

// onlyCreate is a minimal upstream-style plugin: one handler, nothing else.
type onlyCreate struct{}

func (onlyCreate) CreateContainer(context.Context, *api.PodSandbox, *api.Container) (*api.ContainerAdjustment, []*api.ContainerUpdate, error) {
	return nil, nil, nil
}

func itoa(i int) string { return strconv.Itoa(i) }
