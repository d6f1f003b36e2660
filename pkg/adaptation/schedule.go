package adaptation

import "context"

// Schedule perturbation, for tests.
//
// The handover's guarantees must hold on every interleaving a node
// produces, not only on the one a test happens to run. The registry calls
// at(point) at each boundary where another goroutine's step may come in
// between (a registration, the drain, the snapshot, each synchronization
// round, taking the gate, the switch, each notice, a grace timer, a
// disconnect); a test's hook can yield or pause there, driven by a seed, so
// that a failing schedule replays. Without a hook at costs a nil check.

// The boundaries passed to a schedule hook.
const (
	pointRegister   = "register"
	pointDrain      = "drain"
	pointSnapshot   = "snapshot"
	pointSynced     = "synced" // SyncFn returned to a join under the gate: an exit may come in here
	pointSyncRound  = "sync-round"
	pointGate       = "gate"
	pointSwitch     = "switch"
	pointSwap       = "swap" // a switch's or reactivation's hold is held; the registry not yet switched
	pointNotice     = "notice"
	pointActivate   = "activate"
	pointGrace      = "grace"      // a grace timer fired
	pointGraceDone  = "grace-done" // its graceOver returned
	pointDisconnect = "disconnect"
)

// WithScheduleHook calls hook at every boundary of plugin registration and
// handover, from the goroutine about to cross it, with no lock of the
// adaptation held. It exists for tests that perturb the schedule (a hook
// that yields or sleeps briefly, chosen by a seed); a runtime has no use
// for it. The hook must return.
func WithScheduleHook(hook func(point string)) Option {
	return func(r *Adaptation) error {
		r.hook = hook
		return nil
	}
}

// Points only the exploration sees (explore_test.go): they mark where an
// activity begins or ends, or a goroutine waits, so that it can tell when
// the system has settled without timing anything.
const (
	pointServed       = "served"       // serveConn returned
	pointLost         = "lost"         // a lost connection was taken out of its slot
	pointReactivating = "reactivating" // a reactivation, or a workload group member's join again, was started
	pointReactivated  = "reactivated"  // it ended
	pointHoldWait     = "hold-wait"    // an event waits for a hold (the hold's lock is held)
	pointUpdateWait   = "update-wait"  // a plugin's UpdateContainers waits for a hold (the hold's lock is held)
)

// at lets the schedule hook run at a boundary.
func (r *Adaptation) at(point string) { r.atFor(point, nil) }

// atFor is at for a boundary p crosses.
func (r *Adaptation) atFor(point string, p *plugin) {
	if h := r.hook; h != nil {
		h(point)
	}
	r.trace(nil, point, p)
}

// trace tells the exploration's probe, if any, about a point (ctx is the
// event's, for a wait).
func (r *Adaptation) trace(ctx context.Context, point string, p *plugin) {
	if pr := r.probe; pr != nil {
		pr(ctx, point, p)
	}
}
