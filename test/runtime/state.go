package testruntime

import (
	"sort"

	"google.golang.org/protobuf/proto"

	"github.com/nri-handover/nri/api"
	"github.com/nri-handover/nri/internal/adjust"
)

// NewPod returns a minimal pod with the given id.
func NewPod(id string) *api.PodSandbox {
	return &api.PodSandbox{
		Id:        id,
		Name:      id,
		Uid:       "uid-" + id,
		Namespace: "default",
		Labels:    map[string]string{"app": id},
	}
}

// NewContainer returns a minimal container of pod with the given id.
func NewContainer(pod, id string) *api.Container {
	return &api.Container{
		Id:           id,
		PodSandboxId: pod,
		Name:         id,
		Labels:       map[string]string{"container": id},
		Annotations:  map[string]string{},
		Args:         []string{"/bin/" + id},
		Linux:        &api.LinuxContainer{Resources: &api.LinuxResources{}},
	}
}

// Seed puts pods and containers into the state without dispatching events,
// e.g. to build a snapshot for synchronization.
func (r *Runtime) Seed(pods []*api.PodSandbox, ctrs []*api.Container) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, p := range pods {
		r.pods[p.Id] = proto.Clone(p).(*api.PodSandbox)
	}
	for _, c := range ctrs {
		r.ctrs[c.Id] = proto.Clone(c).(*api.Container)
	}
}

// Snapshot returns copies of all pods and containers, sorted by id.
func (r *Runtime) Snapshot() ([]*api.PodSandbox, []*api.Container) {
	r.mu.Lock()
	defer r.mu.Unlock()
	pods := make([]*api.PodSandbox, 0, len(r.pods))
	for _, p := range r.pods {
		pods = append(pods, proto.Clone(p).(*api.PodSandbox))
	}
	ctrs := make([]*api.Container, 0, len(r.ctrs))
	for _, c := range r.ctrs {
		ctrs = append(ctrs, proto.Clone(c).(*api.Container))
	}
	sort.Slice(pods, func(i, j int) bool { return pods[i].Id < pods[j].Id })
	sort.Slice(ctrs, func(i, j int) bool { return ctrs[i].Id < ctrs[j].Id })
	return pods, ctrs
}

// Pod returns a copy of a pod, or nil.
func (r *Runtime) Pod(id string) *api.PodSandbox {
	r.mu.Lock()
	defer r.mu.Unlock()
	if p, ok := r.pods[id]; ok {
		return proto.Clone(p).(*api.PodSandbox)
	}
	return nil
}

// Container returns a copy of a container, or nil.
func (r *Runtime) Container(id string) *api.Container {
	r.mu.Lock()
	defer r.mu.Unlock()
	if c, ok := r.ctrs[id]; ok {
		return proto.Clone(c).(*api.Container)
	}
	return nil
}

// MemoryLimit returns a container's memory limit (0 if unset or unknown).
func (r *Runtime) MemoryLimit(id string) int64 {
	c := r.Container(id)
	return c.GetLinux().GetResources().GetMemory().GetLimit().GetValue()
}

// Unsolicited returns the updates received through the update callback.
func (r *Runtime) Unsolicited() []*api.ContainerUpdate {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]*api.ContainerUpdate, 0, len(r.unsolicited))
	for _, u := range r.unsolicited {
		out = append(out, cloneUpdate(u))
	}
	return out
}

// Evictions returns the evictions plugins requested.
func (r *Runtime) Evictions() []*api.ContainerEviction {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]*api.ContainerEviction, 0, len(r.evictions))
	for _, e := range r.evictions {
		out = append(out, proto.Clone(e).(*api.ContainerEviction))
	}
	return out
}

// Syncs returns how many plugin synchronizations completed.
func (r *Runtime) Syncs() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.syncs
}

func cloneUpdate(u *api.ContainerUpdate) *api.ContainerUpdate {
	return proto.Clone(u).(*api.ContainerUpdate)
}

// applyUpdatesLocked merges updates into containers and returns those that
// could not be applied (unknown or stopped containers).
func (r *Runtime) applyUpdatesLocked(updates []*api.ContainerUpdate) []*api.ContainerUpdate {
	var failed []*api.ContainerUpdate
	for _, u := range updates {
		c, ok := r.ctrs[u.GetContainerId()]
		if !ok || c.State == api.ContainerState_CONTAINER_STOPPED {
			if !u.GetIgnoreFailure() {
				failed = append(failed, cloneUpdate(u))
			}
			continue
		}
		adjust.MergeResources(c, u.GetLinux().GetResources())
	}
	return failed
}
