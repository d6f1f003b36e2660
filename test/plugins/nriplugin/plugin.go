package main

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/nri-handover/nri/api"
	"github.com/nri-handover/nri/pkg/stub"
	"github.com/nri-handover/nri/test/plugins/record"
)

// plugin implements every event handler; which events it actually receives
// is chosen by -events through Configure.
type plugin struct {
	o      *options
	rec    *record.Recorder
	stub   stub.Stub
	dialer *stallingDialer // set with -stop-reading-after

	mu    sync.Mutex
	ctrs  map[string]bool // containers known from sync and events
	hangs int
	gone  chan struct{} // closed when the current connection ends
}

func newPlugin(o *options, rec *record.Recorder) *plugin {
	return &plugin{o: o, rec: rec, ctrs: map[string]bool{}, gone: make(chan struct{})}
}

// connectionEnded releases the steps hung on the connection that ended.
func (p *plugin) connectionEnded() {
	p.mu.Lock()
	defer p.mu.Unlock()
	close(p.gone)
	p.gone = make(chan struct{})
}

func (p *plugin) connection() <-chan struct{} {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.gone
}

func is(step, name string) bool { return step != "" && strings.EqualFold(step, name) }

// behave applies -hang/-delay/-fail at a step; ctr is the event's container.
func (p *plugin) behave(ctx context.Context, step, ctr string) error {
	if p.o.onlyCtr != "" && ctr != p.o.onlyCtr {
		return nil
	}
	if is(p.o.stopReadingAfter, step) && p.dialer != nil {
		if c := p.dialer.current(); c != nil {
			// The request was read: its reply still goes out, nothing
			// after it is read.
			c.stall(func() { p.rec.Add(record.Line{Ev: record.Hang, Ctr: ctr, Detail: "unread:" + step}) })
			p.rec.Add(record.Line{Ev: record.Hang, Ctr: ctr, Detail: "stop-reading:" + step})
		}
	}
	if is(p.o.delayAt, step) && p.o.delay > 0 {
		select {
		case <-time.After(p.o.delay):
		case <-ctx.Done():
		}
	}
	if is(p.o.hangAt, step) && p.takeHang() {
		// A hung plugin does not answer at all, also not when its copy of
		// the request's deadline passes: an answer racing with the runtime's
		// own deadline is the plugin's error, not a timeout (as upstream NRI
		// treats it). It stays hung until the runtime drops it or it stops.
		gone := p.connection()
		p.rec.Add(record.Line{Ev: record.Hang, Ctr: ctr, Detail: step})
		<-gone
		return fmt.Errorf("plugin %s: hung in %s until the connection ended", p.o.name, step)
	}
	if is(p.o.failAt, step) {
		return fmt.Errorf("plugin %s: failing %s as told", p.o.name, step)
	}
	return nil
}

func (p *plugin) takeHang() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.hangs++
	return p.o.hangCount == 0 || p.hangs <= p.o.hangCount
}

// event records a pod or container event, then applies the step behaviour.
func (p *plugin) event(ctx context.Context, ev api.Event, pod *api.PodSandbox, ctr *api.Container) error {
	l := record.Line{Ev: ev.PrettyName(), Pod: pod.GetId(), Ctr: ctr.GetId()}
	if ctr != nil {
		l.Seq = record.SeqOf(ctr.GetAnnotations())
	} else {
		l.Seq = record.SeqOf(pod.GetAnnotations())
	}
	if err := p.behave(ctx, ev.PrettyName(), ctr.GetId()); err != nil {
		l.Err = err.Error()
		p.rec.Add(l)
		return err
	}
	p.rec.Add(l)
	if is(p.o.unsolicitedOn, ev.PrettyName()) && ctr != nil {
		go p.sendUnsolicited([]string{ctr.GetId()})
	}
	return nil
}

func (p *plugin) Configure(ctx context.Context, config, runtime, version string) (stub.EventMask, error) {
	p.rec.Add(record.Line{Ev: record.Configure, Config: config, Runtime: runtime + "/" + version})
	if err := p.behave(ctx, "configure", ""); err != nil {
		return 0, err
	}
	if p.o.events == "" {
		return 0, nil // every event the plugin handles
	}
	mask, err := api.ParseEventMask(p.o.events)
	// A conversion, so this compiles whether stub.EventMask is its own type
	// or (as upstream) an alias of api.EventMask.
	return stub.EventMask(mask), err
}

func (p *plugin) Synchronize(ctx context.Context, pods []*api.PodSandbox, ctrs []*api.Container) ([]*api.ContainerUpdate, error) {
	p.mu.Lock()
	ids := make([]string, 0, len(ctrs))
	for _, c := range ctrs {
		p.ctrs[c.GetId()] = true
		ids = append(ids, c.GetId())
	}
	p.mu.Unlock()
	p.rec.Add(record.Line{Ev: record.Synchronize, Pods: len(pods), Ctrs: len(ctrs)})
	if err := p.behave(ctx, "synchronize", ""); err != nil {
		return nil, err
	}
	if is(p.o.unsolicitedOn, "synchronize") {
		go p.sendUnsolicited(ids)
	}
	return nil, nil
}

func (p *plugin) ShutdownWithReason(_ context.Context, req *api.ShutdownRequest) {
	p.rec.Add(record.Line{Ev: record.Shutdown, Detail: req.GetReason().String(), Err: req.GetMessage()})
}

func (p *plugin) RoleChange(_ context.Context, req *api.RoleChangeRequest) error {
	p.rec.Add(record.Line{Ev: record.RoleChange, Detail: req.GetRole().String()})
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
	if err := p.event(ctx, api.Event_CREATE_CONTAINER, pod, ctr); err != nil {
		return nil, nil, err
	}
	p.mu.Lock()
	p.ctrs[ctr.GetId()] = true
	p.mu.Unlock()
	adj := &api.ContainerAdjustment{}
	if len(p.o.annotate) > 0 {
		adj.Annotations = map[string]string{}
		for k, v := range p.o.annotate {
			adj.Annotations[k] = v
		}
	}
	keys := make([]string, 0, len(p.o.env))
	for k := range p.o.env {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		adj.Env = append(adj.Env, &api.KeyValue{Key: k, Value: p.o.env[k]})
	}
	if p.o.memoryLimit != 0 {
		adj.Linux = &api.LinuxContainerAdjustment{Resources: memory(p.o.memoryLimit)}
	}
	return adj, nil, nil
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
	if err := p.event(ctx, api.Event_UPDATE_CONTAINER, pod, ctr); err != nil {
		return nil, err
	}
	if p.o.updateMemory == 0 {
		return nil, nil
	}
	return []*api.ContainerUpdate{{
		ContainerId: ctr.GetId(),
		Linux:       &api.LinuxContainerUpdate{Resources: memory(p.o.updateMemory)},
	}}, nil
}

func (p *plugin) PostUpdateContainer(ctx context.Context, pod *api.PodSandbox, ctr *api.Container) error {
	return p.event(ctx, api.Event_POST_UPDATE_CONTAINER, pod, ctr)
}

func (p *plugin) StopContainer(ctx context.Context, pod *api.PodSandbox, ctr *api.Container) ([]*api.ContainerUpdate, error) {
	return nil, p.event(ctx, api.Event_STOP_CONTAINER, pod, ctr)
}

func (p *plugin) RemoveContainer(ctx context.Context, pod *api.PodSandbox, ctr *api.Container) error {
	p.mu.Lock()
	delete(p.ctrs, ctr.GetId())
	p.mu.Unlock()
	return p.event(ctx, api.Event_REMOVE_CONTAINER, pod, ctr)
}

// sendUnsolicited asks the runtime to set the memory limit of containers.
// It runs outside any handler: the runtime may be busy relaying the event
// that triggered it.
func (p *plugin) sendUnsolicited(ids []string) {
	if len(ids) == 0 {
		p.mu.Lock()
		for id := range p.ctrs {
			ids = append(ids, id)
		}
		p.mu.Unlock()
		sort.Strings(ids)
	}
	var updates []*api.ContainerUpdate
	for _, id := range ids {
		updates = append(updates, &api.ContainerUpdate{
			ContainerId: id,
			Linux:       &api.LinuxContainerUpdate{Resources: memory(p.o.unsolicitedMem)},
		})
	}
	failed, err := p.stub.UpdateContainers(updates)
	l := record.Line{Ev: record.Unsolicited, Detail: fmt.Sprintf("sent=%d failed=%d", len(updates), len(failed))}
	if err != nil {
		l.Err = err.Error()
	}
	p.rec.Add(l)
}

func memory(limit int64) *api.LinuxResources {
	return &api.LinuxResources{Memory: &api.LinuxMemory{Limit: &api.OptionalInt64{Value: limit}}}
}
