package adaptation

import (
	"context"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/nri-handover/nri/api"
)

// An event that bypasses BlockPluginSync (containerd's container exit) and is
// dispatched while a takeover commits, after the commit read what changed,
// reaches the retiring instance only. The commit must notice it and give the
// successor another delta round with what the event changed before
// switching (issue 10, finding 10).
//
// The test makes the commit send a delta round under the gate (a runtime
// operation ends after the successor's rounds outside the gate), and while
// the successor handles that round the container exits.
func TestBypassingEventDuringCommitReachesSuccessorAsDelta(t *testing.T) {
	rt := newFakeRuntime()
	pod := &api.PodSandbox{Id: "p1"}
	ctr := &api.Container{Id: "c1", PodSandboxId: "p1", State: api.ContainerState_CONTAINER_RUNNING}
	rt.pods = []*api.PodSandbox{pod}
	rt.containers = []*api.Container{ctr}
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

	// b's full round: a runtime operation starts (and holds the gate off)
	// while b synchronizes outside the gate.
	var (
		block   *PluginSyncBlock
		rounds  atomic.Int32
		exited  = make(chan error, 1)
		started = make(chan struct{})
	)
	recB := newRecorder()
	b := newFakePlugin("10", "p", recB)
	b.regReq = optIn("b", 2)
	b.onSync = func(req *api.SynchronizeRequest) {
		switch {
		case !req.GetDelta():
			block = r.BlockPluginSync()
			close(started)
		case rounds.Add(1) == 1: // the commit's round under the gate
			stopped := &api.Container{Id: "c1", PodSandboxId: "p1", State: api.ContainerState_CONTAINER_STOPPED}
			_, err := r.StopContainer(context.Background(), &StopContainerRequest{Pod: pod, Container: stopped})
			exited <- err
		}
	}
	b.connect(t, sock)
	defer b.close()
	receive(t, started, "b's full round")
	eventually(t, func() bool { return r.syncGate.writersWaiting() == 1 }, "b's commit waiting for the gate")
	c2 := &api.Container{Id: "c2", PodSandboxId: "p1"}
	if _, err := r.CreateContainer(context.Background(), &CreateContainerRequest{Pod: pod, Container: c2}); err != nil {
		t.Fatalf("CreateContainer: %v", err)
	}
	block.Unblock()
	if err := receive(t, exited, "the exit's StopContainer"); err != nil {
		t.Fatalf("StopContainer: %v", err)
	}
	waitOnlyActive(t, r, "b", "b active")

	// The exit reached the retiring instance as the event, and the
	// successor only as the delta round below (both record as 10-p).
	if !slices.Contains(rec.list(), "10-p:StopContainer") {
		t.Fatalf("the retiring instance saw %q, want the exit's StopContainer", rec.list())
	}
	if slices.Contains(recB.list(), "10-p:StopContainer") {
		t.Fatalf("the successor got the exit as an event before its switch: %q", recB.list())
	}

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
