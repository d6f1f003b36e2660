package adaptation

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/nri-handover/nri/api"
)

// An event that bypasses BlockPluginSync (containerd's container exit) and is
// dispatched while a takeover commits, after the commit read the runtime's
// state, reaches the retiring instance only. The commit must notice it and
// give the successor another delta round with what the event changed before
// switching (issue 10, finding 10).
func TestBypassingEventDuringCommitReachesSuccessorAsDelta(t *testing.T) {
	rt := newFakeRuntime()
	ctr := &api.Container{Id: "c1", PodSandboxId: "p1", State: api.ContainerState_CONTAINER_RUNNING}
	rt.pods = []*api.PodSandbox{{Id: "p1"}}
	rt.containers = []*api.Container{ctr}

	var (
		r     *Adaptation
		calls atomic.Int32 // SyncFn calls since armed
		armed atomic.Bool
	)
	exited := make(chan error, 1)
	// The container exits right after the commit's SyncFn call handed over
	// the state before the exit: the exit's StopContainer is dispatched (to
	// the active instance; containerd does not take BlockPluginSync for it)
	// between the commit's reading of the state and its switch.
	rt.afterSync = func() {
		if !armed.Load() || calls.Add(1) != 2 { // 1: B's first phase, 2: B's commit
			return
		}
		stopped := &api.Container{Id: "c1", PodSandboxId: "p1", State: api.ContainerState_CONTAINER_STOPPED}
		rt.mu.Lock()
		rt.containers = []*api.Container{stopped}
		rt.mu.Unlock()
		_, err := r.StopContainer(context.Background(), &StopContainerRequest{Pod: rt.pods[0], Container: stopped})
		exited <- err
	}
	r, sock := startRuntime(t, rt)
	defer r.Stop()

	optIn := func(id string, gen uint64) func(*api.RegisterPluginRequest) {
		return func(q *api.RegisterPluginRequest) {
			q.InstanceId, q.Generation = id, gen
			q.Features = []string{api.FeatureHandover, api.FeatureDeltaSync}
		}
	}
	rec := newRecorder()
	a := newFakePlugin("10", "p", rec)
	a.regReq = optIn("a", 1)
	a.connect(t, sock)
	defer a.close()
	waitActive(t, r, "10-p")

	armed.Store(true)
	b := newFakePlugin("10", "p", nil)
	b.regReq = optIn("b", 2)
	b.connect(t, sock)
	defer b.close()
	if err := receive(t, exited, "the exit's StopContainer"); err != nil {
		t.Fatalf("StopContainer: %v", err)
	}
	eventually(t, func() bool {
		active := r.reg.active()
		return len(active) == 1 && active[0].instance == "b"
	}, "b active")

	var deltas []*api.SynchronizeRequest
	b.mu.Lock()
	for _, s := range b.syncs {
		if s.GetDelta() {
			deltas = append(deltas, s)
		}
	}
	b.mu.Unlock()
	if len(deltas) == 0 {
		t.Fatal("b got no delta round: it never learned that c1 stopped")
	}
	last := deltas[len(deltas)-1].GetContainers()
	if len(last) != 1 || last[0].GetId() != "c1" || last[0].GetState() != api.ContainerState_CONTAINER_STOPPED {
		t.Fatalf("b's last delta round carries %v, want c1 stopped", last)
	}
}
