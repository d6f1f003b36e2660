package adaptation

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nri-handover/nri/api"
)

// Issue 17, finding 1, in-package: a joining instance with delta rounds
// waits for runtime operations in flight keeping nobody out, bounded by its
// patience and by Stop. test/handover ("Joining beside a long graceful
// stop") proves the same with plugin processes and containerd's locking.

func optInDelta(id string, gen uint64) func(*api.RegisterPluginRequest) {
	return func(q *api.RegisterPluginRequest) {
		q.InstanceId, q.Generation = id, gen
		q.Features = []string{api.FeatureHandover, api.FeatureDeltaSync}
	}
}

// connectDelta connects an instance of 10-p that opted in with delta rounds,
// identity id and generation gen; the caller closes it.
func connectDelta(t *testing.T, sock, id string, gen uint64, rec *recorder) *fakePlugin {
	t.Helper()
	f := newFakePlugin("10", "p", rec)
	f.regReq = optInDelta(id, gen)
	f.connect(t, sock)
	return f
}

// othersRun takes and releases BlockPluginSync on another goroutine and
// waits for it: it fails the test if the hold is kept out.
func othersRun(t *testing.T, r *Adaptation) {
	t.Helper()
	done := make(chan struct{})
	go func() { r.BlockPluginSync().Unblock(); close(done) }()
	receive(t, done, "another operation's BlockPluginSync")
}

// A takeover whose patience runs out while an operation in flight holds
// BlockPluginSync is refused with TIMEOUT; the predecessor stays active and
// other operations were never kept out.
func TestTakeoverPatienceRefusesWithTimeout(t *testing.T) {
	rt := newFakeRuntime()
	r, sock := startRuntime(t, rt, WithTakeoverPatience(200*time.Millisecond))
	defer r.Stop()
	rec := newRecorder()
	a := connectDelta(t, sock, "a", 1, rec)
	defer a.close()
	waitActive(t, r, "10-p")

	stop := r.BlockPluginSync()
	defer stop.Unblock()
	b := connectDelta(t, sock, "b", 2, nil)
	defer b.close()
	eventually(t, func() bool { return r.journal.open.Load() == 1 }, "b waiting in phase 1")
	othersRun(t, r)

	req := receive(t, b.shutdowns, "b's shutdown")
	if req.GetReason() != api.ShutdownReason_SHUTDOWN_REASON_TIMEOUT || !strings.Contains(req.GetMessage(), "patience") {
		t.Fatalf("b told %v (%q), want TIMEOUT naming the patience", req.GetReason(), req.GetMessage())
	}
	othersRun(t, r)
	if active := r.reg.active(); len(active) != 1 || active[0].instance != "a" {
		t.Fatalf("active after b's refusal: %v", active)
	}
	b.mu.Lock()
	synced := len(b.syncs)
	b.mu.Unlock()
	if synced != 0 {
		t.Fatalf("b got %d synchronization rounds, want none", synced)
	}
	pod := &api.PodSandbox{Id: "p1"}
	if err := r.RunPodSandbox(context.Background(), &RunPodSandboxRequest{Pod: pod}); err != nil {
		t.Fatal(err)
	}
	if got := rec.list(); len(got) == 0 || got[len(got)-1] != "10-p:RunPodSandbox" {
		t.Fatalf("a handled %v", got)
	}
}

// Stop ends the wait of a fresh opted-in join for an operation in flight at
// once, and tells the plugin the runtime shuts down.
func TestStopEndsAJoinWaitingForOperationsInFlight(t *testing.T) {
	rt := newFakeRuntime()
	r, sock := startRuntime(t, rt)
	stop := r.BlockPluginSync()
	defer stop.Unblock()

	f := connectDelta(t, sock, "a", 1, nil)
	defer f.close()
	eventually(t, func() bool { return r.journal.open.Load() == 1 }, "the fresh join waiting in phase 1, outside the gate")
	othersRun(t, r)

	stopped := make(chan struct{})
	go func() { r.Stop(); close(stopped) }()
	receive(t, stopped, "Stop while a join waits for a held block")
	req := receive(t, f.shutdowns, "shutdown")
	if req.GetReason() != api.ShutdownReason_SHUTDOWN_REASON_RUNTIME_SHUTDOWN {
		t.Fatalf("shutdown reason %v (%q), want RUNTIME_SHUTDOWN", req.GetReason(), req.GetMessage())
	}
	if len(r.reg.active()) != 0 {
		t.Fatal("the plugin became active although the runtime stopped")
	}
}

// A journal that overruns during a takeover's phase 1 makes phase 1 start
// over, outside the gate, instead of synchronizing the successor in full
// while runtime operations wait.
func TestJournalOverrunInPhaseOneStartsOverOutsideTheGate(t *testing.T) {
	withTimeouts(t, 20*time.Second, 20*time.Second) // filling the journal takes a while under -race
	rt := newFakeRuntime()
	r, sock := startRuntime(t, rt)
	defer r.Stop()
	a := connectDelta(t, sock, "a", 1, nil)
	defer a.close()
	waitActive(t, r, "10-p")
	// an event, so that the journal's sequence numbers (from 1) have begun
	if err := r.RunPodSandbox(context.Background(), &RunPodSandboxRequest{Pod: &api.PodSandbox{Id: "p1"}}); err != nil {
		t.Fatal(err)
	}

	var (
		mu    sync.Mutex
		full  int
		gated []string // full rounds that ran under the gate
	)
	b := newFakePlugin("10", "p", nil)
	b.regReq = optInDelta("b", 2)
	b.onSync = func(req *api.SynchronizeRequest) {
		r.syncGate.mu.Lock()
		w := r.syncGate.writer
		r.syncGate.mu.Unlock()
		mu.Lock()
		first := !req.GetDelta() && full == 0
		if !req.GetDelta() {
			full++
			if w {
				gated = append(gated, "full round "+strconv.Itoa(full))
			}
		}
		mu.Unlock()
		if first { // more objects change than the journal keeps
			seq := r.dispatched.Load()
			for i := 0; i <= maxJournal; i++ {
				c := &api.Container{Id: "c" + strconv.Itoa(i)}
				r.journal.note(seq, api.Event_POST_START_CONTAINER, &api.PostStartContainerRequest{Container: c}, nil, false)
			}
		}
	}
	b.connect(t, sock)
	defer b.close()
	waitOnlyActive(t, r, "b", "b active")

	mu.Lock()
	defer mu.Unlock()
	if full != 2 {
		t.Fatalf("b got %d full rounds, want 2 (the second after the overrun)", full)
	}
	if len(gated) != 0 {
		t.Fatalf("%v ran under the sync gate, while runtime operations waited", gated)
	}
}

// A candidate past phase 1 waits for an idle instant to commit, keeping
// nobody out, only while another instance serves its events. Once the active
// instance is lost it queues for the gate as upstream's join does: it commits
// as soon as the operation in flight ends, and an operation that starts
// after the loss waits for the commit, so that its event reaches the
// successor instead of nobody (the kill -9 of make e2e-kubernetes: a
// synchronized candidate waited 8 s for an idle instant on a busy node while
// containers were created unhandled).
func TestCandidateQueuesForTheGateOnceNobodyServes(t *testing.T) {
	var (
		r      *Adaptation
		armed  atomic.Bool
		once   sync.Once
		inGate = make(chan *PluginSyncBlock, 1)
	)
	hook := func(point string) {
		if point == pointGate && armed.Load() {
			// an operation in flight when b is ready to commit
			once.Do(func() { inGate <- r.BlockPluginSync() })
		}
	}
	rt := newFakeRuntime()
	r, sock := startRuntime(t, rt, WithScheduleHook(hook))
	defer r.Stop()
	a := connectDelta(t, sock, "a", 1, newRecorder())
	waitActive(t, r, "10-p")

	armed.Store(true)
	recB := newRecorder()
	b := connectDelta(t, sock, "b", 2, recB)
	defer b.close()
	inFlight := receive(t, inGate, "an operation in flight at b's commit")
	defer inFlight.Unblock()
	eventually(t, func() bool { return r.syncGate.writersWaiting() == 1 }, "b waiting for the gate")
	othersRun(t, r) // a serves: nobody is kept out

	a.close()
	eventually(t, func() bool { return r.syncGate.queued() == 1 }, "b queued for the gate once a was lost")
	created := make(chan error, 1)
	go func() {
		blk := r.BlockPluginSync() // as a runtime takes it around an operation
		defer blk.Unblock()
		created <- r.RunPodSandbox(context.Background(), &RunPodSandboxRequest{Pod: &api.PodSandbox{Id: "after-loss"}})
	}()
	inFlight.Unblock()
	if err := receive(t, created, "the operation that started after the loss"); err != nil {
		t.Fatal(err)
	}
	if active := r.reg.active(); len(active) != 1 || active[0].instance != "b" {
		t.Fatalf("active: %v, want b", active)
	}
	if got := recB.list(); !slices.Contains(got, "10-p:RunPodSandbox") {
		t.Fatalf("b handled %v; the pod created after a was lost reached nobody", got)
	}
}

// A takeover that commits while its predecessor serves leaves no vacancy
// watch behind in the slot: that state lives only while a candidate waits.
func TestTakeoverLeavesNoVacancyWatch(t *testing.T) {
	rt := newFakeRuntime()
	r, sock := startRuntime(t, rt)
	defer r.Stop()
	a := connectDelta(t, sock, "a", 1, nil)
	defer a.close()
	waitActive(t, r, "10-p")
	b := connectDelta(t, sock, "b", 2, nil)
	defer b.close()
	bp := waitOnlyActive(t, r, "b", "b active")
	r.reg.mu.Lock()
	left := bp.slot.vacated
	r.reg.mu.Unlock()
	if left != nil {
		t.Fatal("the slot keeps a vacancy channel after the commit")
	}
}
