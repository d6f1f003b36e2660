package adaptation

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Calls into the runtime (SyncFn, UpdateFn) and Stop.
//
// Runtimes take their own locks in these callbacks, and hold the same locks
// around Stop: containerd's internal/nri holds one mutex around Stop() and
// takes it inside its SyncFn and UpdateFn (CRI-O and moby hold theirs around
// Stop too). A goroutine of ours that calls back while the runtime is stopping
// therefore blocks until Stop returns, and Stop must not wait for it. So:
//
//   - no callback is called once Stop has begun (the adaptation's context is
//     cancelled first thing in Stop);
//   - a callback runs on a goroutine of its own, and whoever called it stops
//     waiting when Stop begins, unless the runtime is inside our SyncCB at
//     that moment: the SyncCB is our code, bounded by the request timeout,
//     and waiting for it keeps its results from being written while the
//     caller reads them;
//   - a SyncCB the runtime calls after its caller gave up refuses to run.
//
// A runtime's callback still blocked when Stop returns finishes whenever the
// runtime lets it, and then touches nothing of ours.

// errNoListing: the runtime's SyncFn returned without calling our SyncCB.
var errNoListing = errors.New("runtime returned no snapshot")

// errGateBusy: a round that does not wait found the sync gate taken.
var errGateBusy = errors.New("the sync gate is taken")

// gateRound is what one call of the runtime's SyncFn under the sync gate
// does besides seeding the ledger; every step may be nil.
type gateRound struct {
	// noWait takes the gate only if it is free at once (errGateBusy).
	noWait bool
	// held runs once the gate is taken, before SyncFn: an error ends the
	// round before it calls the runtime.
	held func() error
	// listing takes the runtime's state in, inside SyncFn, while the ledger
	// is compared and seeded with it (both only read it); the runtime
	// applies the updates it returns once SyncFn returns.
	listing func(ctx context.Context, pods []*PodSandbox, ctrs []*Container) []*ContainerUpdate
	// synced runs after SyncFn returned, with its error, the gate still
	// held: a join switches there, so the next operation reaches it.
	synced func(error) error
}

// syncRound is the one place SyncFn is called: it takes the sync gate, reads
// the ledger's version, calls SyncFn and seeds the ledger with its listing
// (compared first: reseed) while rd.listing takes the listing in. Start, a
// join under the gate and a comparison of the ledger are its rounds. The
// gate held, runtime operations wait, so the listing is the runtime's state
// when the plugins synchronized with it start receiving events; SyncFn is
// never called without it (a runtime's SyncFn may rewrite its own
// per-container state, which an operation in flight still needs).
func (r *Adaptation) syncRound(ctx context.Context, rd gateRound) error {
	if rd.noWait {
		if !r.syncGate.TryLock() {
			return errGateBusy
		}
	} else if err := r.syncGate.Lock(ctx); err != nil {
		return err
	}
	defer r.syncGate.Unlock()
	if rd.held != nil {
		if err := rd.held(); err != nil {
			return err
		}
	}
	from := r.ledger.Version()
	r.at(pointSnapshot)
	var handed []*ContainerUpdate
	called := false
	err := r.callSyncFn(ctx, func(ctx context.Context, pods []*PodSandbox, ctrs []*Container) ([]*ContainerUpdate, error) {
		called = true
		seeded := make(chan struct{})
		go func() {
			defer close(seeded)
			r.reseed(from, pods, ctrs)
		}()
		if rd.listing != nil {
			handed = rd.listing(ctx, pods, ctrs)
		}
		<-seeded // seeded before anything else goes on
		return handed, nil
	})
	if err == nil && !called {
		err = errNoListing
	}
	if err == nil && len(handed) > 0 {
		// The runtime applies them once our SyncCB returns, telling us of
		// no failure.
		r.ledger.Applied(handed, nil)
	}
	if rd.synced != nil {
		err = rd.synced(err)
	}
	return err
}

// reseed compares the ledger with what SyncFn returned, says what differs
// (the log and LedgerMetrics), and records the listing. It runs inside a
// SyncCB, under the sync gate; from is the ledger's version read before
// SyncFn was called.
func (r *Adaptation) reseed(from uint64, pods []*PodSandbox, ctrs []*Container) {
	c := r.ledger.Seed(from, pods, ctrs)
	if !c.Done {
		return
	}
	if c.Differ == 0 {
		r.log.Infof(r.ctx, "ledger compared with SyncFn: 0 differ")
	} else {
		r.log.Warnf(r.ctx, "ledger compared with SyncFn: %d differ (%s); takeovers join under the sync gate until a comparison finds none",
			c.Differ, strings.Join(c.Sample, ", "))
	}
	if m, ok := r.metrics.(LedgerMetrics); ok {
		m.RecordLedgerComparison(c.Differ)
	}
}

// checkWait bounds how long checkLedger's caller waits for the comparison.
// Once the gate is taken, a hold queued meanwhile (an instance lost, a
// switch) can keep out an event that holds the runtime's own lock, which
// SyncFn takes; that hold may be waiting for the caller. The comparison
// goes on without the caller then, holding the gate until SyncFn returns.
const checkWait = 500 * time.Millisecond

// checkLedger compares the ledger with SyncFn, and reseeds it, if the sync
// gate can be taken at once and no hold is queued (while one is, an event
// waiting for it may hold the runtime's lock, which SyncFn takes): it never
// waits for the runtime's operations, and calls SyncFn only under the gate,
// as everywhere. It is called before a takeover would be synchronized from
// the ledger, where a join would cost a SyncFn call anyway, and by a
// registration that finds the ledger dropped.
func (r *Adaptation) checkLedger(ctx context.Context) {
	if !r.handover || !r.hold.idle() {
		return
	}
	done := make(chan struct{})
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		defer close(done)
		err := r.syncRound(r.ctx, gateRound{noWait: true})
		if err != nil && !errors.Is(err, errGateBusy) && r.ctx.Err() == nil {
			r.log.Warnf(r.ctx, "failed to compare the ledger with SyncFn: %v", err)
		}
	}()
	t := time.NewTimer(checkWait)
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
		r.log.Infof(ctx, "comparing the ledger with SyncFn takes longer than %v: going on without it", checkWait)
	case <-ctx.Done():
	}
}

// callSyncFn calls the runtime's SyncFn with cb, within the rules above, and
// never while another call of SyncFn runs (syncFnTurn).
func (r *Adaptation) callSyncFn(ctx context.Context, cb SyncCB) error {
	c := &runtimeCall{}
	guarded := func(ctx context.Context, pods []*PodSandbox, ctrs []*Container) ([]*ContainerUpdate, error) {
		c.mu.Lock()
		defer c.mu.Unlock()
		if c.abandoned || r.stopping() {
			return nil, errStopped
		}
		return cb(ctx, pods, ctrs)
	}
	_, err := callRuntime(r, c, func() (struct{}, error) {
		// The turn is taken and given back on the call's own goroutine:
		// a caller that stops waiting at Stop leaves it held until the
		// runtime's SyncFn returns, so no second call can start beside
		// one still running (none can start after Stop anyway).
		if err := r.syncFnTurn.take(ctx, r.stopBegun()); err != nil {
			return struct{}{}, err
		}
		defer r.syncFnTurn.give()
		return struct{}{}, r.syncFn(ctx, guarded)
	})
	return err
}

// syncFnTurn lets one call of the runtime's SyncFn run at a time. Upstream
// v0.12.5 calls SyncFn from Start and then from its one accept loop, holding
// its sync lock exclusively, so never twice at once; runtimes rely on that
// (containerd's and CRI-O's SyncFn rewrite their own per-container state).
// Every call here is under the sync gate held exclusively too, so the turn
// is a second guard: a call whose caller stopped waiting (at Stop, or a
// ledger check that gave up: checkLedger) still holds it until the
// runtime's SyncFn returns.
//
// Where the turn sits among the locks (see the package comment): after the
// sync gate, and before anything the runtime takes inside SyncFn. It is held
// only across the runtime's SyncFn, taken on the goroutine that calls it and
// given back when it returns. While it is held our SyncCB seeds the ledger,
// synchronizes plugins over their connections and, in a join under the
// gate, waits for the hold: neither its holders nor the events it waits for
// call SyncFn. So a wait for the turn
// ends when the runtime's SyncFn in progress returns. The exception is Stop: runtimes hold the lock their
// SyncFn takes around Stop, so the call holding the turn may return only
// after Stop does. Stop does not wait for it (callRuntime stops waiting when
// Stop begins), and a wait for the turn gives up then too (or when ctx
// ends), as a wait for the sync gate does, so that no goroutine is left
// waiting behind a SyncFn the runtime holds.
type syncFnTurn struct {
	once    sync.Once
	ch      chan struct{} // holds a token while a call runs
	waiting atomic.Int32  // callers waiting for the turn, for tests
}

func (t *syncFnTurn) init() { t.once.Do(func() { t.ch = make(chan struct{}, 1) }) }

// take waits for the turn, or gives up when ctx is done or stop is closed.
func (t *syncFnTurn) take(ctx context.Context, stop <-chan struct{}) error {
	t.init()
	select {
	case t.ch <- struct{}{}:
		return nil
	default:
	}
	t.waiting.Add(1)
	defer t.waiting.Add(-1)
	select {
	case t.ch <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-stop:
		return errStopped
	}
}

// give hands the turn back.
func (t *syncFnTurn) give() { <-t.ch }

// callUpdateFn calls the runtime's UpdateFn, within the rules above.
func (r *Adaptation) callUpdateFn(ctx context.Context, updates []*ContainerUpdate) ([]*ContainerUpdate, error) {
	return callRuntime(r, &runtimeCall{}, func() ([]*ContainerUpdate, error) {
		return r.updateFn(ctx, updates)
	})
}

// runtimeCall is one call into the runtime. mu is held while our SyncCB runs
// inside it; abandoned is set when the caller stopped waiting.
type runtimeCall struct {
	mu        sync.Mutex
	abandoned bool
}

type callResult[T any] struct {
	val T
	err error
}

// callRuntime runs call on its own goroutine and waits for it, or until Stop
// begins; then it returns errStopped without waiting for the runtime.
func callRuntime[T any](r *Adaptation, c *runtimeCall, call func() (T, error)) (T, error) {
	var zero T
	if r.stopping() {
		return zero, errStopped
	}
	done := make(chan callResult[T], 1)
	go func() {
		v, err := call()
		done <- callResult[T]{v, err}
	}()
	select {
	case res := <-done:
		return res.val, res.err
	case <-r.stopBegun():
	}
	c.mu.Lock() // waits for a SyncCB in progress, which is ours and bounded
	c.abandoned = true
	c.mu.Unlock()
	select {
	case res := <-done: // finished meanwhile: its answer is as good as any
		return res.val, res.err
	default:
		return zero, errStopped
	}
}

// stopBegun is closed when Stop begins: it cancels the adaptation's context.
func (r *Adaptation) stopBegun() <-chan struct{} {
	if r.ctx == nil { // an Adaptation not made by New, in tests
		return nil
	}
	return r.ctx.Done()
}

func (r *Adaptation) stopping() bool {
	select {
	case <-r.stopBegun():
		return true
	default:
		return false
	}
}
