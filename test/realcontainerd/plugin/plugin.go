package main

import (
	"context"
	"strings"

	"github.com/nri-handover/nri/api"
	"github.com/nri-handover/nri/pkg/stub"
)

// injected returns the environment variable and annotation names the
// plugin sets; run.sh looks for exactly these.
func injected(name string) (env, annotation string) {
	env = "NRI_" + strings.ToUpper(strings.NewReplacer("-", "_", ".", "_").Replace(name))
	return env, "nri-handover.test/" + name
}

// plugin reports every event it gets and adjusts created containers.
type plugin struct {
	out    *printer
	name   string
	adjust bool
}

func (p *plugin) event(ev string, pod *api.PodSandbox, ctr *api.Container) {
	switch {
	case ctr != nil:
		p.out.line("EVENT %s pod=%s container=%s", ev, pod.GetName(), ctr.GetName())
	case pod != nil:
		p.out.line("EVENT %s pod=%s", ev, pod.GetName())
	default:
		p.out.line("EVENT %s", ev)
	}
}

func (p *plugin) Configure(_ context.Context, _, runtime, version string) (api.EventMask, error) {
	p.out.line("EVENT Configure runtime=%s runtime-version=%s", runtime, version)
	return 0, nil
}

// SynchronizeRound takes the place of Synchronize, so that a plugin that
// opted into handover also supports delta rounds (api.FeatureDeltaSync).
func (p *plugin) SynchronizeRound(_ context.Context, info *stub.SyncInfo, pods []*api.PodSandbox, ctrs []*api.Container) ([]*api.ContainerUpdate, error) {
	p.out.line("EVENT Synchronize pods=%d containers=%d delta=%t takeover=%t", len(pods), len(ctrs), info.Delta, info.Takeover != nil)
	for _, pod := range pods {
		p.out.line("SYNC pod=%s", pod.GetName())
	}
	return nil, nil
}

func (p *plugin) Shutdown(context.Context) { p.event("Shutdown", nil, nil) }

func (p *plugin) ShutdownWithReason(_ context.Context, req *api.ShutdownRequest) {
	p.out.line("EVENT ShutdownWithReason reason=%s message=%q", req.GetReason(), req.GetMessage())
}

func (p *plugin) RoleChange(_ context.Context, req *api.RoleChangeRequest) error {
	p.out.line("ROLE %s", req.GetRole())
	return nil
}

func (p *plugin) RunPodSandbox(_ context.Context, pod *api.PodSandbox) error {
	p.event("RunPodSandbox", pod, nil)
	return nil
}

func (p *plugin) StopPodSandbox(_ context.Context, pod *api.PodSandbox) error {
	p.event("StopPodSandbox", pod, nil)
	return nil
}

func (p *plugin) RemovePodSandbox(_ context.Context, pod *api.PodSandbox) error {
	p.event("RemovePodSandbox", pod, nil)
	return nil
}

func (p *plugin) CreateContainer(_ context.Context, pod *api.PodSandbox, ctr *api.Container) (*api.ContainerAdjustment, []*api.ContainerUpdate, error) {
	p.event("CreateContainer", pod, ctr)
	if !p.adjust {
		return nil, nil, nil
	}
	adj := &api.ContainerAdjustment{}
	env, annotation := injected(p.name)
	adj.AddEnv(env, "injected-by-"+p.name)
	adj.AddAnnotation(annotation, "adjusted-by-"+p.name)
	return adj, nil, nil
}

func (p *plugin) PostCreateContainer(_ context.Context, pod *api.PodSandbox, ctr *api.Container) error {
	p.event("PostCreateContainer", pod, ctr)
	return nil
}

func (p *plugin) StartContainer(_ context.Context, pod *api.PodSandbox, ctr *api.Container) error {
	p.event("StartContainer", pod, ctr)
	return nil
}

func (p *plugin) PostStartContainer(_ context.Context, pod *api.PodSandbox, ctr *api.Container) error {
	p.event("PostStartContainer", pod, ctr)
	return nil
}

func (p *plugin) StopContainer(_ context.Context, pod *api.PodSandbox, ctr *api.Container) ([]*api.ContainerUpdate, error) {
	p.event("StopContainer", pod, ctr)
	return nil, nil
}

func (p *plugin) RemoveContainer(_ context.Context, pod *api.PodSandbox, ctr *api.Container) error {
	p.event("RemoveContainer", pod, ctr)
	return nil
}
