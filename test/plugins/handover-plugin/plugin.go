package main

import (
	"context"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"github.com/nri-handover/nri/api"
	"github.com/nri-handover/nri/pkg/stub"
	"github.com/nri-handover/nri/test/plugins/record"
)

// plugin handles every pod and container event and records it.
type plugin struct {
	o    *options
	rec  *record.Recorder
	stub stub.HandoverStub

	mu       sync.Mutex
	events   int             // pod and container events handled
	roles    map[string]int  // role changes received, by role
	ctrs     map[string]bool // containers known from sync and events
	armed    bool            // die when superseded
	releaseC chan struct{}   // closed by SIGUSR2 to release a hold
	unreadyC chan struct{}   // poked when readiness may have dropped
	goneC    chan struct{}   // closed when the current connection ends
}

func newPlugin(o *options, rec *record.Recorder) *plugin {
	return &plugin{
		o: o, rec: rec,
		ctrs:     map[string]bool{},
		roles:    map[string]int{},
		releaseC: make(chan struct{}),
		unreadyC: make(chan struct{}, 1),
		goneC:    make(chan struct{}),
	}
}

func (p *plugin) stubOptions() []stub.Option {
	opts := []stub.Option{
		stub.WithPluginName(p.o.name),
		stub.WithPluginIdx(p.o.idx),
		stub.WithOnClose(func() {
			p.rec.Add(record.Line{Ev: Closed})
			p.connectionEnded()
			p.pokeUnready()
		}),
	}
	if p.o.socket != "" {
		opts = append(opts, stub.WithSocketPath(p.o.socket))
	}
	if p.o.version != "" {
		opts = append(opts, stub.WithPluginVersion(p.o.version))
	}
	if p.o.instance != "" {
		opts = append(opts, stub.WithInstanceID(p.o.instance))
	}
	if p.o.generation != 0 {
		opts = append(opts, stub.WithGeneration(p.o.generation))
	}
	if p.o.readyFile != "" {
		opts = append(opts, stub.WithReadyFile(p.o.readyFile))
	}
	switch {
	case !p.o.legacy:
		opts = append(opts, stub.WithHandover())
	case p.o.instance != "" || p.o.generation != 0:
		// The stub takes an identity only from a plugin that opted in: a
		// legacy instance with one is a plugin whose handover the operator
		// turned off, which registers it without the feature.
		os.Setenv(stub.HandoverEnvVar, "off")
		opts = append(opts, stub.WithHandover())
	}
	return opts
}

func (p *plugin) pokeUnready() {
	select {
	case p.unreadyC <- struct{}{}:
	default:
	}
}

func (p *plugin) waitUnready(ctx context.Context) bool {
	for {
		select {
		case <-p.unreadyC:
			if !p.stub.Ready() {
				return true
			}
		case <-ctx.Done():
			return false
		}
	}
}

// connectionEnded ends the holds of events on the connection that ended.
func (p *plugin) connectionEnded() {
	p.mu.Lock()
	defer p.mu.Unlock()
	close(p.goneC)
	p.goneC = make(chan struct{})
}

// holdEnds returns what ends a hold at step besides SIGUSR2. An event held
// does not answer at all, also not when its copy of the request's deadline
// passes: an answer racing with the runtime's own deadline is the plugin's
// error, not a timeout (as upstream NRI treats it), so the hold lasts until
// the runtime drops the connection. Other steps end with their request.
func (p *plugin) holdEnds(ctx context.Context, step string) (<-chan struct{}, func() error) {
	if !strings.HasPrefix(step, "event:") {
		return ctx.Done(), ctx.Err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.goneC, func() error { return fmt.Errorf("held at %s until the connection ended", step) }
}

func (p *plugin) release() {
	p.mu.Lock()
	defer p.mu.Unlock()
	select {
	case <-p.releaseC:
	default:
		close(p.releaseC)
	}
}

func (p *plugin) arm() {
	p.mu.Lock()
	p.armed = true
	p.mu.Unlock()
	p.rec.Add(record.Line{Ev: Armed})
}

func (p *plugin) isArmed() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.armed
}

// die records the step and kills the process the way kill -9 does.
func (p *plugin) die(step string) {
	p.rec.Add(record.Line{Ev: Die, Detail: kv("step", step)})
	_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
	select {} // never reached: SIGKILL cannot be caught
}

// step applies the failure injections configured for a step.
func (p *plugin) step(ctx context.Context, step string) error {
	if p.o.dieAt == step {
		p.die(step)
	}
	if p.o.crashAt == step {
		p.rec.Add(record.Line{Ev: Die, Detail: kv("step", step) + ";" + kv("crash", "true")})
		os.Exit(3)
	}
	if p.o.hangAt == step {
		ends, why := p.holdEnds(ctx, step)
		p.rec.Add(record.Line{Ev: record.Hang, Detail: kv("step", step)})
		select {
		case <-p.releaseC:
			p.rec.Add(record.Line{Ev: record.Hang, Detail: kv("step", step) + ";" + kv("done", "true")})
		case <-ends:
			return why()
		}
	}
	if p.o.failAt == step {
		return fmt.Errorf("plugin %s instance %s: failing at %s as told", p.o.name, p.o.instance, step)
	}
	return nil
}

func (p *plugin) Configure(ctx context.Context, config, runtime, version string) (stub.EventMask, error) {
	p.rec.Add(record.Line{Ev: record.Configure, Config: config, Runtime: runtime + "/" + version})
	return 0, p.step(ctx, "configure")
}

// deltaPlugin is the plugin with delta-aware synchronization; fullPlugin has
// only upstream's Synchronize.
type (
	deltaPlugin struct{ *plugin }
	fullPlugin  struct{ *plugin }
)

func (p deltaPlugin) SynchronizeRound(ctx context.Context, info *stub.SyncInfo, pods []*api.PodSandbox, ctrs []*api.Container) ([]*api.ContainerUpdate, error) {
	return p.synchronize(ctx, info, pods, ctrs)
}

func (p fullPlugin) Synchronize(ctx context.Context, pods []*api.PodSandbox, ctrs []*api.Container) ([]*api.ContainerUpdate, error) {
	info, _ := stub.SyncInfoFrom(ctx)
	return p.synchronize(ctx, info, pods, ctrs)
}

// stubPlugin is what the stub is given: the synchronization interface
// decides whether the plugin asks for delta rounds.
func (p *plugin) stubPlugin() stub.Plugin {
	if p.o.noDelta || p.o.legacy {
		return fullPlugin{p}
	}
	return deltaPlugin{p}
}

func (p *plugin) synchronize(ctx context.Context, info *stub.SyncInfo, pods []*api.PodSandbox, ctrs []*api.Container) ([]*api.ContainerUpdate, error) {
	kind, step := "full", "synchronize"
	detail := []string{}
	if info != nil && info.Delta {
		kind, step = "delta", "delta"
	}
	detail = append(detail, kv("kind", kind))
	if info != nil && info.Takeover != nil {
		t := info.Takeover
		detail = append(detail, kv("pred", t.GetPredecessorInstance()), kv("predver", t.GetPredecessorVersion()),
			kv("predgen", strconv.FormatUint(t.GetPredecessorGeneration(), 10)),
			kv("react", strconv.FormatBool(t.GetReactivation())))
	}
	if info != nil {
		detail = append(detail, kv("rmpods", strconv.Itoa(len(info.RemovedPods))),
			kv("rmctrs", strconv.Itoa(len(info.RemovedContainers))))
	}
	p.mu.Lock()
	if kind == "full" {
		p.ctrs = map[string]bool{}
	}
	for _, c := range ctrs {
		p.ctrs[c.GetId()] = true
	}
	if info != nil {
		for _, id := range info.RemovedContainers {
			delete(p.ctrs, id)
		}
	}
	p.mu.Unlock()
	p.rec.Add(record.Line{Ev: record.Synchronize, Pods: len(pods), Ctrs: len(ctrs), Detail: strings.Join(detail, ";")})
	return nil, p.step(ctx, step)
}

func (p *plugin) ShutdownWithReason(ctx context.Context, req *api.ShutdownRequest) {
	p.rec.Add(record.Line{Ev: record.Shutdown, Err: req.GetMessage(), Detail: strings.Join([]string{
		kv("reason", req.GetReason().String()), kv("succ", req.GetSuccessorInstance()),
		kv("succver", req.GetSuccessorVersion()),
		kv("succgen", strconv.FormatUint(req.GetSuccessorGeneration(), 10)),
	}, ";")})
	p.pokeUnready()
	if req.GetReason() == api.ShutdownReason_SHUTDOWN_REASON_SUPERSEDED && p.isArmed() {
		p.die("supersede")
	}
	_ = p.step(ctx, "shutdown")
	if req.GetReason() == api.ShutdownReason_SHUTDOWN_REASON_SUPERSEDED {
		_ = p.step(ctx, "supersede")
	}
}

func (p *plugin) RoleChange(ctx context.Context, req *api.RoleChangeRequest) error {
	role := "ACTIVE"
	step := "active"
	if req.GetRole() == api.PluginRole_PLUGIN_ROLE_STANDBY {
		role, step = "STANDBY", "standby"
	}
	p.rec.Add(record.Line{Ev: record.RoleChange, Err: req.GetMessage(), Detail: strings.Join([]string{
		kv("role", role), kv("peer", req.GetPeerInstance()), kv("peerver", req.GetPeerVersion()),
		kv("peergen", strconv.FormatUint(req.GetPeerGeneration(), 10)),
	}, ";")})
	p.mu.Lock()
	p.roles[role]++
	nth := step + ":" + strconv.Itoa(p.roles[role])
	p.mu.Unlock()
	if err := p.step(ctx, nth); err != nil {
		return err
	}
	if role == "STANDBY" {
		p.pokeUnready()
		if p.isArmed() {
			p.die("supersede")
		}
		if err := p.step(ctx, "supersede"); err != nil {
			return err
		}
	}
	return p.step(ctx, step)
}

// event records one pod or container event and applies the injections.
func (p *plugin) event(ctx context.Context, ev api.Event, pod *api.PodSandbox, ctr *api.Container) error {
	l := record.Line{Ev: ev.PrettyName(), Pod: pod.GetId(), Ctr: ctr.GetId()}
	if ctr != nil {
		l.Seq = record.SeqOf(ctr.GetAnnotations())
	} else {
		l.Seq = record.SeqOf(pod.GetAnnotations())
	}
	p.mu.Lock()
	p.events++
	n := p.events
	switch ev {
	case api.Event_CREATE_CONTAINER:
		p.ctrs[ctr.GetId()] = true
	case api.Event_REMOVE_CONTAINER:
		delete(p.ctrs, ctr.GetId())
	}
	p.mu.Unlock()

	at := "event:" + strconv.Itoa(n)
	if p.o.dieAt == at {
		if p.o.dieRecorded {
			p.rec.Add(l)
		}
		p.die(at)
	}
	if err := p.step(ctx, at); err != nil {
		l.Err = err.Error()
		p.rec.Add(l)
		return err
	}
	p.rec.Add(l)
	return nil
}

func (p *plugin) RunPodSandbox(ctx context.Context, pod *api.PodSandbox) error {
	return p.event(ctx, api.Event_RUN_POD_SANDBOX, pod, nil)
}

func (p *plugin) UpdatePodSandbox(ctx context.Context, pod *api.PodSandbox, _, _ *api.LinuxResources) error {
	return p.event(ctx, api.Event_UPDATE_POD_SANDBOX, pod, nil)
}

func (p *plugin) PostUpdatePodSandbox(ctx context.Context, pod *api.PodSandbox) error {
	return p.event(ctx, api.Event_POST_UPDATE_POD_SANDBOX, pod, nil)
}

func (p *plugin) StopPodSandbox(ctx context.Context, pod *api.PodSandbox) error {
	return p.event(ctx, api.Event_STOP_POD_SANDBOX, pod, nil)
}

func (p *plugin) RemovePodSandbox(ctx context.Context, pod *api.PodSandbox) error {
	return p.event(ctx, api.Event_REMOVE_POD_SANDBOX, pod, nil)
}

func (p *plugin) CreateContainer(ctx context.Context, pod *api.PodSandbox, ctr *api.Container) (*api.ContainerAdjustment, []*api.ContainerUpdate, error) {
	return nil, nil, p.event(ctx, api.Event_CREATE_CONTAINER, pod, ctr)
}

func (p *plugin) PostCreateContainer(ctx context.Context, pod *api.PodSandbox, ctr *api.Container) error {
	return p.event(ctx, api.Event_POST_CREATE_CONTAINER, pod, ctr)
}

func (p *plugin) StartContainer(ctx context.Context, pod *api.PodSandbox, ctr *api.Container) error {
	return p.event(ctx, api.Event_START_CONTAINER, pod, ctr)
}

func (p *plugin) PostStartContainer(ctx context.Context, pod *api.PodSandbox, ctr *api.Container) error {
	return p.event(ctx, api.Event_POST_START_CONTAINER, pod, ctr)
}

func (p *plugin) UpdateContainer(ctx context.Context, pod *api.PodSandbox, ctr *api.Container, _ *api.LinuxResources) ([]*api.ContainerUpdate, error) {
	return nil, p.event(ctx, api.Event_UPDATE_CONTAINER, pod, ctr)
}

func (p *plugin) PostUpdateContainer(ctx context.Context, pod *api.PodSandbox, ctr *api.Container) error {
	return p.event(ctx, api.Event_POST_UPDATE_CONTAINER, pod, ctr)
}

func (p *plugin) StopContainer(ctx context.Context, pod *api.PodSandbox, ctr *api.Container) ([]*api.ContainerUpdate, error) {
	return nil, p.event(ctx, api.Event_STOP_CONTAINER, pod, ctr)
}

func (p *plugin) RemoveContainer(ctx context.Context, pod *api.PodSandbox, ctr *api.Container) error {
	return p.event(ctx, api.Event_REMOVE_CONTAINER, pod, ctr)
}

// sendUnsolicited asks the runtime to set the memory limit of every known
// container, outside of any event, and records the answer.
func (p *plugin) sendUnsolicited() {
	p.mu.Lock()
	ids := make([]string, 0, len(p.ctrs))
	for id := range p.ctrs {
		ids = append(ids, id)
	}
	p.mu.Unlock()
	sort.Strings(ids)
	var updates []*api.ContainerUpdate
	for _, id := range ids {
		updates = append(updates, &api.ContainerUpdate{
			ContainerId: id,
			Linux: &api.LinuxContainerUpdate{Resources: &api.LinuxResources{
				Memory: &api.LinuxMemory{Limit: &api.OptionalInt64{Value: p.o.unsolicitedMem}},
			}},
		})
	}
	failed, err := p.stub.UpdateContainers(updates)
	l := record.Line{Ev: record.Unsolicited, Detail: fmt.Sprintf("sent=%d;failed=%d", len(updates), len(failed))}
	if err != nil {
		l.Err = err.Error()
	}
	p.rec.Add(l)
}
