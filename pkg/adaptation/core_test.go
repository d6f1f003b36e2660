package adaptation

import (
	"context"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nri-handover/nri/api"
)

// Issue 30's findings, each against the redesigned core (ledger + hold).

// optedInWithout is a fake plugin that opted into handover without delta rounds.
func optedInWithout(idx, name, id string, gen uint64, rec *recorder) *fakePlugin {
	f := newFakePlugin(idx, name, rec)
	f.regReq = func(q *api.RegisterPluginRequest) {
		q.InstanceId, q.Generation = id, gen
		q.Features = []string{api.FeatureHandover}
	}
	return f
}

// holdFullRound makes f's full Synchronize wait: inSync is closed once it
// is in it, and closing release lets it answer.
func holdFullRound(f *fakePlugin) (inSync, release chan struct{}) {
	inSync, release = make(chan struct{}), make(chan struct{})
	f.onSync = func(req *api.SynchronizeRequest) {
		if !req.GetDelta() {
			close(inSync)
			<-release
		}
	}
	return inSync, release
}

// Finding 0: a takeover commits although runtime operations hold
// BlockPluginSync without a gap (overlapping holds, one of them a long
// graceful stop): it waits for no idle instant and keeps nobody out but for
// its own hold.
func TestTakeoverCommitsWhileOperationsAlwaysHoldTheBlock(t *testing.T) {
	rt := newFakeRuntime()
	r, sock := startRuntime(t, rt)
	defer r.Stop()
	a := handoverPlugin("10", "p", "a", 1, nil)
	a.connect(t, sock)
	defer a.close()
	waitOnlyActive(t, r, "a", "a active")

	stop := r.BlockPluginSync() // a graceful stop, held throughout
	defer stop.Unblock()
	other := r.BlockPluginSync()
	for _, f := range []func(string, string, string, uint64, *recorder) *fakePlugin{handoverPlugin, optedInWithout} {
		id := "b"
		if len(r.reg.active()) == 1 && r.reg.active()[0].instance == "b" {
			id = "c"
		}
		gen := uint64(2)
		if id == "c" {
			gen = 3
		}
		succ := f("10", "p", id, gen, nil)
		succ.connect(t, sock)
		defer succ.close()
		waitOnlyActive(t, r, id, id+" active while operations hold the block")
		next := r.BlockPluginSync() // overlapping: the block is never free
		other.Unblock()
		other = next
	}
	other.Unblock()
}

// Finding 5: SyncFn is called only while no runtime operation holds
// BlockPluginSync (under the gate), on every path: Start, a fresh join, a
// takeover with and without delta rounds, identity placement, a standby's
// reactivation. Takeovers call it not at all.
func TestSyncFnOnlyUnderTheGate(t *testing.T) {
	rt := newFakeRuntime()
	var r *Adaptation
	var calls, outside atomic.Int32
	sync := func(ctx context.Context, cb SyncCB) error {
		calls.Add(1)
		if r.syncGate.inFlight() != 0 || !r.syncGate.exclusive() {
			outside.Add(1)
		}
		return rt.sync(ctx, cb)
	}
	sock := shortSocket(t)
	var err error
	r, err = New("test-runtime", "v0", sync, rt.update, WithLogger(testLogger()), WithSocketPath(sock),
		WithPluginPath(t.TempDir()), WithPluginConfigPath(t.TempDir()), WithStandbyGrace(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Start(); err != nil {
		t.Fatal(err)
	}
	defer r.Stop()
	if calls.Load() != 1 {
		t.Fatalf("Start called SyncFn %d times, want once (as upstream)", calls.Load())
	}
	relayedRemoval(t, r)
	a := handoverPlugin("10", "p", "a", 1, nil)
	a.connect(t, sock)
	defer a.close()
	waitOnlyActive(t, r, "a", "a active")

	op := r.BlockPluginSync() // an operation in flight during every takeover
	b := handoverPlugin("10", "p", "b", 2, nil)
	b.connect(t, sock)
	defer b.close()
	waitOnlyActive(t, r, "b", "b active")
	b.close() // a, the standby, is reactivated
	waitOnlyActive(t, r, "a", "a reactivated")
	c := optedInWithout("10", "p", "c", 3, nil)
	c.connect(t, sock)
	defer c.close()
	waitOnlyActive(t, r, "c", "c active")
	op.Unblock()

	if n := outside.Load(); n != 0 {
		t.Fatalf("SyncFn called %d times while an operation held BlockPluginSync", n)
	}
	if n := calls.Load(); n != 2 {
		t.Fatalf("SyncFn called %d times, want 2 (Start, a's fresh join): takeovers and reactivations use the ledger", n)
	}
}

// Finding 6: an opted-in plugin with delta rounds joining with nobody
// serving its name joins as upstream's do: a creation that begins while it
// joins waits for it and reaches it as the event, never only as state.
func TestFreshJoinHoldsCreationsAsUpstream(t *testing.T) {
	rt := newFakeRuntime()
	pod := &api.PodSandbox{Id: "p1"}
	rt.pods = []*api.PodSandbox{pod}
	r, sock := startRuntime(t, rt)
	defer r.Stop()

	inFlight := r.BlockPluginSync()
	rec := newRecorder()
	a := handoverPlugin("10", "p", "a", 1, rec)
	configured := make(chan struct{})
	a.configure = func() { close(configured) }
	a.connect(t, sock)
	defer a.close()
	receive(t, configured, "a configured")
	eventually(t, func() bool { return r.syncGate.queued() == 1 }, "a queued for the gate")

	created := make(chan error, 1)
	go func() {
		b := r.BlockPluginSync() // waits behind a's join, as upstream's
		defer b.Unblock()
		_, err := r.CreateContainer(context.Background(), &CreateContainerRequest{Pod: pod, Container: &api.Container{Id: "c1", PodSandboxId: "p1"}})
		created <- err
	}()
	inFlight.Unblock()
	if err := receive(t, created, "the creation"); err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(rec.list(), "10-p:CreateContainer") {
		t.Fatalf("a creation begun while the plugin joined bypassed it: %v", rec.list())
	}
}

// Finding 2: the active instance lost while a standby waits and a newer
// candidate is still synchronizing: the standby serves from the next event
// (no refusal for the pending candidate), and the candidate then takes over
// from it.
func TestStandbyReactivatedBesidePendingCandidate(t *testing.T) {
	rt := newFakeRuntime()
	pod := &api.PodSandbox{Id: "p1"}
	rt.pods = []*api.PodSandbox{pod}
	r, sock := startRuntime(t, rt, WithStandbyGrace(time.Minute))
	defer r.Stop()
	recA := newRecorder()
	a := handoverPlugin("10", "p", "a", 1, recA)
	a.connect(t, sock)
	defer a.close()
	waitOnlyActive(t, r, "a", "a active")
	b := handoverPlugin("10", "p", "b", 2, nil)
	b.connect(t, sock)
	waitOnlyActive(t, r, "b", "b active, a standing by")

	c := handoverPlugin("10", "p", "c", 3, nil)
	inSync, release := holdFullRound(c)
	c.connect(t, sock)
	defer c.close()
	receive(t, inSync, "c synchronizing")
	b.close()
	waitOnlyActive(t, r, "a", "a reactivated although c is pending")
	if err := r.RunPodSandbox(context.Background(), &RunPodSandboxRequest{Pod: pod}); err != nil {
		t.Fatal(err)
	}
	if got := recA.list(); len(got) == 0 || got[len(got)-1] != "10-p:RunPodSandbox" {
		t.Fatalf("the reactivated standby did not handle the next event: %v", got)
	}
	close(release)
	waitOnlyActive(t, r, "c", "c takes over from the reactivated a")
}

// Finding 3 (and the case the vacancy watch served): the active instance
// lost, no standby, while a candidate synchronizes from the ledger: events
// wait for the candidate instead of reaching nobody.
func TestEventsWaitForTheCandidateOnceNobodyServes(t *testing.T) {
	rt := newFakeRuntime()
	pod := &api.PodSandbox{Id: "p1"}
	rt.pods = []*api.PodSandbox{pod}
	r, sock := startRuntime(t, rt)
	defer r.Stop()
	a := handoverPlugin("10", "p", "a", 1, nil)
	a.connect(t, sock)
	waitOnlyActive(t, r, "a", "a active")

	recB := newRecorder()
	b := handoverPlugin("10", "p", "b", 2, recB)
	inSync, release := holdFullRound(b)
	b.connect(t, sock)
	defer b.close()
	receive(t, inSync, "b synchronizing")
	a.close()
	eventually(t, func() bool { return len(r.reg.active()) == 0 }, "a gone")
	ran := make(chan error, 1)
	go func() { ran <- r.RunPodSandbox(context.Background(), &RunPodSandboxRequest{Pod: pod}) }()
	close(release)
	if err := receive(t, ran, "the event"); err != nil {
		t.Fatal(err)
	}
	waitOnlyActive(t, r, "b", "b active")
	if !slices.Contains(recB.list(), "10-p:RunPodSandbox") {
		t.Fatalf("an event dispatched while nobody served reached nobody: b handled %v", recB.list())
	}
}

// The active instance lost while its successor's switch is queued behind
// another hold: the queued switch becomes urgent (it must not wait behind a
// second hold reserved for it, which nobody would take), and the successor
// becomes active.
func TestActiveLostWhileSuccessorSwitchIsQueued(t *testing.T) {
	rt := newFakeRuntime()
	r, sock := startRuntime(t, rt)
	defer r.Stop()
	a := handoverPlugin("10", "p", "a", 1, nil)
	a.connect(t, sock)
	waitOnlyActive(t, r, "a", "a active")

	other := r.hold.enqueue() // another switch holding the dispatch
	if err := r.acquire(context.Background(), other); err != nil {
		t.Fatal(err)
	}
	b := handoverPlugin("10", "p", "b", 2, nil)
	b.connect(t, sock)
	defer b.close()
	eventually(t, func() bool {
		r.reg.mu.Lock()
		defer r.reg.mu.Unlock()
		for q := range r.reg.all {
			if q.instance == "b" && q.slot != nil && q.slot.switching != nil {
				return true
			}
		}
		return false
	}, "b's switch queued")
	a.close()
	eventually(t, func() bool { return len(r.reg.active()) == 0 }, "a gone")
	r.release(other)
	waitOnlyActive(t, r, "b", "b active after a was lost while its switch was queued")
}
