package adaptation

import (
	"context"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/nri-handover/nri/api"
)

// turnRuntime is a runtime whose SyncFn counts the calls in flight and can
// hold one call (by its number, from 1) until released.
type turnRuntime struct {
	*fakeRuntime
	hold     int64         // the call to hold, 0 for none
	held     chan struct{} // closed when the held call is inside SyncFn
	release  chan struct{} // releases the held call
	overlap  chan struct{} // closed when a call finds another in flight
	calls    atomic.Int64
	inFlight atomic.Int64
	once     sync.Once
}

func newTurnRuntime(hold int64) *turnRuntime {
	return &turnRuntime{fakeRuntime: newFakeRuntime(), hold: hold,
		held: make(chan struct{}), release: make(chan struct{}), overlap: make(chan struct{})}
}

func (rt *turnRuntime) sync(ctx context.Context, cb SyncCB) error {
	n := rt.calls.Add(1)
	if rt.inFlight.Add(1) > 1 {
		rt.once.Do(func() { close(rt.overlap) })
	}
	defer rt.inFlight.Add(-1)
	if n == rt.hold {
		close(rt.held)
		select {
		case <-rt.release:
		case <-rt.overlap:
		}
	}
	return rt.fakeRuntime.sync(ctx, cb)
}

func startTurnRuntime(t *testing.T, rt *turnRuntime) (*Adaptation, string) {
	t.Helper()
	sock := shortSocket(t)
	r, err := New("test-runtime", "v0.0.1", rt.sync, rt.update,
		WithLogger(testLogger()),
		WithSocketPath(sock),
		WithPluginPath(filepath.Join(filepath.Dir(sock), "no-plugins")),
		WithPluginConfigPath(filepath.Join(filepath.Dir(sock), "no-conf")),
		// These tests count SyncFn calls of joins and phase 1; the workload
		// rule's listing at registration, one more per opted-in plugin, takes
		// the same turn (callSyncFn).
		WithWorkloadIdentity(false),
	)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	if err := r.Start(); err != nil {
		t.Fatalf("Start: %v", err)
	}
	return r, sock
}

// startTakeoverBesideJoin holds a takeover's phase-1 snapshot inside SyncFn
// (call 3: Start's is call 1, A's join call 2) and lets a plain join of another plugin reach
// its own SyncFn call, under the sync gate. It returns when the join's call
// is either inside SyncFn beside the held one (the failure) or waiting for
// its turn.
func startTakeoverBesideJoin(t *testing.T, rt *turnRuntime, r *Adaptation, sock string) (a, b, c *fakePlugin) {
	t.Helper()
	optIn := func(id string, gen uint64) func(*api.RegisterPluginRequest) {
		return func(q *api.RegisterPluginRequest) {
			q.InstanceId, q.Generation = id, gen
			q.Features = []string{api.FeatureHandover, api.FeatureDeltaSync}
		}
	}
	a = newFakePlugin("10", "p", nil)
	a.regReq = optIn("a", 1)
	a.connect(t, sock)
	t.Cleanup(a.close)
	waitActive(t, r, "10-p")

	b = newFakePlugin("10", "p", nil) // takes over from a: phase 1 is SyncFn call 3
	b.regReq = optIn("b", 2)
	b.connect(t, sock)
	t.Cleanup(b.close)
	receive(t, rt.held, "the takeover's phase-1 snapshot inside SyncFn")

	c = newFakePlugin("20", "other", nil) // a plain join: commit under the gate, SyncFn call 4
	c.connect(t, sock)
	t.Cleanup(c.close)
	overlapped := func() bool {
		select {
		case <-rt.overlap:
			return true
		default:
			return false
		}
	}
	eventually(t, func() bool { return overlapped() || r.syncFnTurn.waiting.Load() == 1 },
		"the join's SyncFn call beside the held one, or waiting for its turn")
	if overlapped() {
		t.Fatal("the join's commit called SyncFn while a takeover's phase-1 snapshot was inside it")
	}
	return a, b, c
}

// SyncFn never runs twice at once: a join's commit, which holds the sync
// gate, waits for a takeover's phase-1 snapshot, which runs beside runtime
// operations, to return from SyncFn. Both then complete.
func TestSyncFnCallsNeverOverlap(t *testing.T) {
	rt := newTurnRuntime(3)
	r, sock := startTurnRuntime(t, rt)
	defer r.Stop()

	_, _, c := startTakeoverBesideJoin(t, rt, r, sock)
	close(rt.release)
	receive(t, c.synced, "the join's synchronization")
	eventually(t, func() bool {
		n := 0
		for _, p := range r.reg.active() {
			if p.name() == "20-other" || p.instance == "b" {
				n++
			}
		}
		return n == 2
	}, "the join and the takeover both done")
	select {
	case <-rt.overlap:
		t.Fatal("two SyncFn calls overlapped")
	default:
	}
	if got := rt.calls.Load(); got != 4 {
		t.Fatalf("SyncFn called %d times, want 4 (Start, a's join, b's phase 1, c's join)", got)
	}
}

// A call waiting for its SyncFn turn gives up when Stop begins: runtimes
// hold around Stop the lock their SyncFn takes, so the call holding the turn
// may not return before Stop does.
func TestStopDoesNotWaitForASyncFnTurn(t *testing.T) {
	rt := newTurnRuntime(3)
	r, sock := startTurnRuntime(t, rt)
	defer close(rt.release) // the held SyncFn returns only after Stop

	_, _, c := startTakeoverBesideJoin(t, rt, r, sock)
	stopped := make(chan struct{})
	go func() {
		r.Stop()
		close(stopped)
	}()
	receive(t, stopped, "Stop to return while a SyncFn call holds the turn")
	receive(t, c.lost, "the waiting plugin disconnected")
}
