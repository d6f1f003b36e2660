package testruntime

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"google.golang.org/protobuf/proto"

	"github.com/nri-handover/nri/api"
	"github.com/nri-handover/nri/internal/adjust"
)

// lock serializes an operation and blocks plugin synchronization for its
// duration, as a CRI runtime does around each request it relays to NRI, then
// takes the NRI lock (containerd locking).
func (r *Runtime) lock() func() {
	r.opMu.Lock()
	blk := r.nri.BlockPluginSync()
	unlock := r.LockNRI()
	return func() {
		unlock()
		blk.Unblock()
		r.opMu.Unlock()
	}
}

// stamped returns copies of pod and container carrying the dispatch's
// sequence number; either may be nil.
func stamped(seq uint64, pod *api.PodSandbox, ctr *api.Container) (*api.PodSandbox, *api.Container) {
	s := strconv.FormatUint(seq, 10)
	if pod != nil {
		pod = proto.Clone(pod).(*api.PodSandbox)
		if pod.Annotations == nil {
			pod.Annotations = map[string]string{}
		}
		pod.Annotations[SeqAnnotation] = s
	}
	if ctr != nil {
		ctr = proto.Clone(ctr).(*api.Container)
		if ctr.Annotations == nil {
			ctr.Annotations = map[string]string{}
		}
		ctr.Annotations[SeqAnnotation] = s
	}
	return pod, ctr
}

// keepStamp stores the sequence number of the event just relayed for a pod
// (or a container) in the pod (or container) the runtime keeps, if it keeps
// it: as a real runtime's, the state SyncFn lists is what the last event
// about the object showed, and the adaptation's ledger, which records the
// events, compares equal with it.
func (r *Runtime) keepStamp(seq uint64, pod, ctr string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	var annotations *map[string]string
	if p, ok := r.pods[pod]; ok && ctr == "" {
		annotations = &p.Annotations
	} else if c, ok := r.ctrs[ctr]; ok {
		annotations = &c.Annotations
	}
	if annotations == nil {
		return
	}
	if *annotations == nil {
		*annotations = map[string]string{}
	}
	(*annotations)[SeqAnnotation] = strconv.FormatUint(seq, 10)
}

func (r *Runtime) podOf(id string) (*api.PodSandbox, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	p, ok := r.pods[id]
	if !ok {
		return nil, fmt.Errorf("pod %q not found", id)
	}
	return proto.Clone(p).(*api.PodSandbox), nil
}

func (r *Runtime) ctrOf(id string) (*api.PodSandbox, *api.Container, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	c, ok := r.ctrs[id]
	if !ok {
		return nil, nil, fmt.Errorf("container %q not found", id)
	}
	p, ok := r.pods[c.PodSandboxId]
	if !ok {
		return nil, nil, fmt.Errorf("pod %q of container %q not found", c.PodSandboxId, id)
	}
	return proto.Clone(p).(*api.PodSandbox), proto.Clone(c).(*api.Container), nil
}

// podEvent dispatches one pod event.
func (r *Runtime) podEvent(ev api.Event, pod *api.PodSandbox, call func(*api.PodSandbox) error) error {
	seq, slot := r.begin(ev, pod.Id, "")
	p, _ := stamped(seq, pod, nil)
	err := r.finish(slot, call(p))
	r.keepStamp(seq, pod.Id, "")
	if err != nil {
		return fmt.Errorf("%s of pod %q: %w", ev, pod.Id, err)
	}
	return nil
}

// ctrEvent dispatches one container event.
func (r *Runtime) ctrEvent(ev api.Event, pod *api.PodSandbox, ctr *api.Container, call func(*api.PodSandbox, *api.Container) error) error {
	seq, slot := r.begin(ev, pod.Id, ctr.Id)
	p, c := stamped(seq, pod, ctr)
	err := r.finish(slot, call(p, c))
	r.keepStamp(seq, "", ctr.Id)
	if err != nil {
		return fmt.Errorf("%s of container %q: %w", ev, ctr.Id, err)
	}
	return nil
}

// RunPod adds a pod and relays RunPodSandbox. On error the pod is dropped.
func (r *Runtime) RunPod(ctx context.Context, pod *api.PodSandbox) error {
	defer r.lock()()
	r.Seed([]*api.PodSandbox{pod}, nil)
	err := r.podEvent(api.Event_RUN_POD_SANDBOX, pod, func(p *api.PodSandbox) error {
		return r.nri.RunPodSandbox(ctx, &api.RunPodSandboxRequest{Pod: p})
	})
	if err != nil {
		r.mu.Lock()
		delete(r.pods, pod.Id)
		r.mu.Unlock()
	}
	return err
}

// UpdatePod relays UpdatePodSandbox then PostUpdatePodSandbox.
func (r *Runtime) UpdatePod(ctx context.Context, id string, overhead, res *api.LinuxResources) error {
	defer r.lock()()
	pod, err := r.podOf(id)
	if err != nil {
		return err
	}
	err = r.podEvent(api.Event_UPDATE_POD_SANDBOX, pod, func(p *api.PodSandbox) error {
		_, err := r.nri.UpdatePodSandbox(ctx, &api.UpdatePodSandboxRequest{
			Pod: p, OverheadLinuxResources: overhead, LinuxResources: res,
		})
		return err
	})
	if err != nil {
		return err
	}
	return r.podEvent(api.Event_POST_UPDATE_POD_SANDBOX, pod, func(p *api.PodSandbox) error {
		return r.nri.PostUpdatePodSandbox(ctx, &api.PostUpdatePodSandboxRequest{Pod: p})
	})
}

// StopPod relays StopPodSandbox.
func (r *Runtime) StopPod(ctx context.Context, id string) error {
	defer r.lock()()
	pod, err := r.podOf(id)
	if err != nil {
		return err
	}
	r.mu.Lock()
	r.stoppedPods[id] = true
	r.mu.Unlock()
	return r.podEvent(api.Event_STOP_POD_SANDBOX, pod, func(p *api.PodSandbox) error {
		return r.nri.StopPodSandbox(ctx, &api.StopPodSandboxRequest{Pod: p})
	})
}

// RemovePod relays RemovePodSandbox and drops the pod.
func (r *Runtime) RemovePod(ctx context.Context, id string) error {
	defer r.lock()()
	pod, err := r.podOf(id)
	if err != nil {
		return err
	}
	r.mu.Lock()
	delete(r.pods, id)
	delete(r.stoppedPods, id)
	r.mu.Unlock()
	return r.podEvent(api.Event_REMOVE_POD_SANDBOX, pod, func(p *api.PodSandbox) error {
		return r.nri.RemovePodSandbox(ctx, &api.RemovePodSandboxRequest{Pod: p})
	})
}

// CreateContainer relays CreateContainer, applies the merged adjustment to
// the new container and the returned updates to others, records evictions,
// then relays PostCreateContainer. It returns the adjustment as received.
// On error the container is not created.
func (r *Runtime) CreateContainer(ctx context.Context, ctr *api.Container) (*api.ContainerAdjustment, error) {
	defer r.lock()()
	pod, err := r.podOf(ctr.PodSandboxId)
	if err != nil {
		return nil, err
	}
	var rpl *api.CreateContainerResponse
	err = r.ctrEvent(api.Event_CREATE_CONTAINER, pod, ctr, func(p *api.PodSandbox, c *api.Container) error {
		var err error
		rpl, err = r.nri.CreateContainer(ctx, &api.CreateContainerRequest{Pod: p, Container: c})
		return err
	})
	if err != nil {
		return nil, err
	}

	created := proto.Clone(ctr).(*api.Container)
	created.State = api.ContainerState_CONTAINER_CREATED
	if err := adjust.Apply(created, rpl.GetAdjust()); err != nil {
		// As containerd: an adjustment its spec generator rejects fails the
		// creation, and the plugins are told the container is gone.
		err = fmt.Errorf("adjusting container %q: %w", ctr.Id, err)
		return nil, errors.Join(err, r.undoCreate(ctx, pod, ctr))
	}
	r.mu.Lock()
	r.ctrs[created.Id] = created
	r.applyUpdatesLocked(rpl.GetUpdate())
	for _, e := range rpl.GetEvict() {
		r.evictions = append(r.evictions, proto.Clone(e).(*api.ContainerEviction))
	}
	r.mu.Unlock()

	_, created, err = r.ctrOf(created.Id)
	if err != nil {
		return nil, err
	}
	err = r.ctrEvent(api.Event_POST_CREATE_CONTAINER, pod, created, func(p *api.PodSandbox, c *api.Container) error {
		return r.nri.PostCreateContainer(ctx, &api.PostCreateContainerRequest{Pod: p, Container: c})
	})
	return rpl.GetAdjust(), err
}

// undoCreate relays StopContainer and RemoveContainer for a container whose
// creation failed after CreateContainer (containerd's UndoCreateContainer).
func (r *Runtime) undoCreate(ctx context.Context, pod *api.PodSandbox, ctr *api.Container) error {
	stopped := proto.Clone(ctr).(*api.Container)
	stopped.State = api.ContainerState_CONTAINER_STOPPED
	stop := r.ctrEvent(api.Event_STOP_CONTAINER, pod, stopped, func(p *api.PodSandbox, c *api.Container) error {
		_, err := r.nri.StopContainer(ctx, &api.StopContainerRequest{Pod: p, Container: c})
		return err
	})
	remove := r.ctrEvent(api.Event_REMOVE_CONTAINER, pod, stopped, func(p *api.PodSandbox, c *api.Container) error {
		return r.nri.RemoveContainer(ctx, &api.RemoveContainerRequest{Pod: p, Container: c})
	})
	return errors.Join(stop, remove)
}

// StartContainer relays StartContainer then PostStartContainer.
func (r *Runtime) StartContainer(ctx context.Context, id string) error {
	defer r.lock()()
	pod, ctr, err := r.ctrOf(id)
	if err != nil {
		return err
	}
	err = r.ctrEvent(api.Event_START_CONTAINER, pod, ctr, func(p *api.PodSandbox, c *api.Container) error {
		return r.nri.StartContainer(ctx, &api.StartContainerRequest{Pod: p, Container: c})
	})
	if err != nil {
		return err
	}
	r.setState(id, api.ContainerState_CONTAINER_RUNNING)
	if _, ctr, err = r.ctrOf(id); err != nil {
		return err
	}
	return r.ctrEvent(api.Event_POST_START_CONTAINER, pod, ctr, func(p *api.PodSandbox, c *api.Container) error {
		return r.nri.PostStartContainer(ctx, &api.PostStartContainerRequest{Pod: p, Container: c})
	})
}

// UpdateContainer relays UpdateContainer with the requested resources,
// applies the updates plugins return (an update of this container replaces
// the requested one), then relays PostUpdateContainer.
func (r *Runtime) UpdateContainer(ctx context.Context, id string, res *api.LinuxResources) error {
	defer r.lock()()
	pod, ctr, err := r.ctrOf(id)
	if err != nil {
		return err
	}
	var rpl *api.UpdateContainerResponse
	err = r.ctrEvent(api.Event_UPDATE_CONTAINER, pod, ctr, func(p *api.PodSandbox, c *api.Container) error {
		var err error
		rpl, err = r.nri.UpdateContainer(ctx, &api.UpdateContainerRequest{Pod: p, Container: c, LinuxResources: res})
		return err
	})
	if err != nil {
		return err
	}
	r.mu.Lock()
	own := false
	for _, u := range rpl.GetUpdate() {
		own = own || u.GetContainerId() == id
	}
	if !own {
		if c, ok := r.ctrs[id]; ok {
			adjust.MergeResources(c, res)
		}
	}
	r.applyUpdatesLocked(rpl.GetUpdate())
	for _, e := range rpl.GetEvict() {
		r.evictions = append(r.evictions, proto.Clone(e).(*api.ContainerEviction))
	}
	r.mu.Unlock()
	if _, ctr, err = r.ctrOf(id); err != nil {
		return err
	}
	return r.ctrEvent(api.Event_POST_UPDATE_CONTAINER, pod, ctr, func(p *api.PodSandbox, c *api.Container) error {
		return r.nri.PostUpdateContainer(ctx, &api.PostUpdateContainerRequest{Pod: p, Container: c})
	})
}

// StopContainer relays StopContainer and applies the returned updates.
func (r *Runtime) StopContainer(ctx context.Context, id string) error {
	defer r.lock()()
	return r.stopContainer(ctx, id)
}

// NotifyContainerExit relays StopContainer for a container that exited on
// its own the way containerd does: without BlockPluginSync, so a plugin may
// be synchronizing meanwhile (with containerd locking, under the NRI lock).
// containerd runs it on a goroutine of its own; callers may do the same.
func (r *Runtime) NotifyContainerExit(ctx context.Context, id string) error {
	r.opMu.Lock()
	defer r.opMu.Unlock()
	defer r.LockNRI()()
	return r.stopContainer(ctx, id)
}

func (r *Runtime) stopContainer(ctx context.Context, id string) error {
	pod, ctr, err := r.ctrOf(id)
	if err != nil {
		return err
	}
	r.setState(id, api.ContainerState_CONTAINER_STOPPED)
	ctr.State = api.ContainerState_CONTAINER_STOPPED
	var rpl *api.StopContainerResponse
	err = r.ctrEvent(api.Event_STOP_CONTAINER, pod, ctr, func(p *api.PodSandbox, c *api.Container) error {
		var err error
		rpl, err = r.nri.StopContainer(ctx, &api.StopContainerRequest{Pod: p, Container: c})
		return err
	})
	if err != nil {
		return err
	}
	r.mu.Lock()
	r.applyUpdatesLocked(rpl.GetUpdate())
	r.mu.Unlock()
	return nil
}

// RemoveContainer relays RemoveContainer and drops the container.
func (r *Runtime) RemoveContainer(ctx context.Context, id string) error {
	defer r.lock()()
	pod, ctr, err := r.ctrOf(id)
	if err != nil {
		return err
	}
	r.mu.Lock()
	delete(r.ctrs, id)
	r.mu.Unlock()
	return r.ctrEvent(api.Event_REMOVE_CONTAINER, pod, ctr, func(p *api.PodSandbox, c *api.Container) error {
		return r.nri.RemoveContainer(ctx, &api.RemoveContainerRequest{Pod: p, Container: c})
	})
}

func (r *Runtime) setState(id string, st api.ContainerState) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if c, ok := r.ctrs[id]; ok {
		c.State = st
	}
}

// Lifecycle runs a pod with one container through every event: run pod,
// create, start, update, update pod, stop, remove container, stop and remove
// pod (thirteen events in all, including the post-events).
func (r *Runtime) Lifecycle(ctx context.Context, podID, ctrID string) error {
	steps := []func() error{
		func() error { return r.RunPod(ctx, NewPod(podID)) },
		func() error { _, err := r.CreateContainer(ctx, NewContainer(podID, ctrID)); return err },
		func() error { return r.StartContainer(ctx, ctrID) },
		func() error { return r.UpdateContainer(ctx, ctrID, MemoryResources(256<<20)) },
		func() error { return r.UpdatePod(ctx, podID, nil, MemoryResources(512<<20)) },
		func() error { return r.StopContainer(ctx, ctrID) },
		func() error { return r.RemoveContainer(ctx, ctrID) },
		func() error { return r.StopPod(ctx, podID) },
		func() error { return r.RemovePod(ctx, podID) },
	}
	for _, step := range steps {
		if err := step(); err != nil {
			return err
		}
	}
	return nil
}

// MemoryResources returns resources with only a memory limit.
func MemoryResources(limit int64) *api.LinuxResources {
	return &api.LinuxResources{Memory: &api.LinuxMemory{Limit: &api.OptionalInt64{Value: limit}}}
}

// Barrier returns once nothing holds the adaptation's sync lock (the lock
// BlockPluginSync shares), as at the start of every operation. A plugin
// synchronized under that lock (upstream's way, and ours for plugins without
// handover) has been committed or rejected when it returns; our adaptation
// synchronizes handover-capable plugins before taking the lock, and applies
// every plugin's synchronization updates after it: WaitSynchronized waits for
// both.
func (r *Runtime) Barrier() {
	r.nri.BlockPluginSync().Unblock()
}
