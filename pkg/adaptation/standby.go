package adaptation

// The standby: a superseded opted-in instance that stays connected,
// receiving no events, while its reason lasts, and is reactivated at once
// if its successor is lost (it leaves, crashes or fails to join) with no
// successor of its own. Its reason lasts:
//
//   - in a pod the runtime placed it in, as long as its connection: the
//     pod's deletion ends its process, and until then it is the plugin the
//     node has if a rollout's new pod goes (deleted before or after its
//     plugin took over: issue 39 finding 8). No timer ends it; one closes
//     its resume cursor after resumeBound.
//   - elsewhere, for the grace period (WithStandbyGrace), if it takes
//     delta rounds; with none (the default) it is disconnected once its
//     successor is active.
//
// Its reactivation holds the dispatch from the moment the loss is noticed
// (registry.serveNext), tells it what changed since it stood by (its resume
// cursor) and switches to it (switchIn): no event passes while nobody
// serves. What it is told depends on what it takes: a delta round if it
// takes delta rounds; else nothing if nothing changed, or one full round, a
// reactivation's, from the ledger if the ledger is exact (usable) or, if it
// is not, under the sync gate from SyncFn, as upstream's join (events pass
// it meanwhile: a hold may not wait for the gate). A candidate joining
// meanwhile plays no part in it: it takes over from the reactivated
// instance when its own switch comes.

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/nri-handover/nri/api"
	"github.com/nri-handover/nri/pkg/adaptation/internal/ledger"
)

// standbyTerm tells whether superseded old stays as the standby once its
// successor is active, and for how long: grace 0 is for as long as its
// connection lives (it runs in a pod), else the grace period. g.mu is held.
func (g *registry) standbyTerm(old *plugin) (keep bool, grace time.Duration) {
	switch {
	case !old.handsOver():
		return false, 0
	case old.inPod():
		return true, 0
	case g.policy.grace > 0 && old.deltaSync():
		return true, g.policy.grace
	}
	return false, 0
}

// inPod tells whether the runtime placed p's process in a pod. g.mu is held.
func (p *plugin) inPod() bool {
	return p.ident != nil && p.ident.place == PeerInPod
}

// standsBy makes q, an active opted-in instance that a plugin that did not
// opt in takes over (turnsOff), the standby of its slot if
// standbyTerm keeps it, and tells whether it did: a rollback to a build
// without handover whose pod goes leaves the node its plugin. The standby
// before it, which stood by for q, is retired with the rest. g.mu is held.
func (g *registry) standsBy(q *plugin) bool {
	s := q.slot
	keep, grace := g.standbyTerm(q)
	if !keep || q.state != stateActive || s.active != q || q.isClosed() {
		return false
	}
	if prev := s.standby; prev != nil {
		g.move(prev, s, stateGone)
	}
	g.move(q, s, stateStandby)
	s.resume = g.r.ledger.OpenCursor()
	g.timeStandby(s, q, grace)
	return true
}

// standbysServeAgain runs when lost, a plugin that did not opt in, was
// active and nobody of its slot serves next: the opted-in instances it took
// over that stand by in a slot nobody else serves or joins are reactivated.
// g.mu is held.
func (g *registry) standbysServeAgain(lost *plugin) {
	for _, s := range g.named[lost.base] {
		if q := s.standby; q != nil && q.idx == lost.idx && s.active == nil && s.candidate == nil {
			s.stopGrace()
			g.startReactivation(q, lost, lostWhy(lost))
		}
	}
}

// resumeBound is how long a standby without a grace period (one in a pod,
// which stands by for as long as its pod runs) keeps its resume cursor: an
// open cursor keeps every change the ledger records, removals included,
// which would otherwise grow the ledger for as long as the pod. Past it, a
// reactivation is told the whole state (reactivation.round).
const resumeBound = 5 * time.Minute

// timeStandby starts standby p's timer, its resume cursor opened when it
// became the standby: with a grace period, the one that retires it; else
// the one that closes its cursor after resumeBound (the policy's, if a
// test set one). g.mu is held.
func (g *registry) timeStandby(s *slot, p *plugin, grace time.Duration) {
	s.graceSeq++
	seq := s.graceSeq
	if grace > 0 {
		s.graceT = time.AfterFunc(grace, func() { g.graceOver(s, p, seq) })
		return
	}
	bound := cmp.Or(g.policy.resumeBound, resumeBound)
	s.graceT = time.AfterFunc(bound, func() { g.resumeOver(s, p, seq) })
}

// resumeOver closes the resume cursor of standby p, which stands by with no
// grace period, once resumeBound passed. seq names the timer, as
// graceOver's.
func (g *registry) resumeOver(s *slot, p *plugin, seq uint64) {
	g.r.atFor(pointGrace, p)
	defer g.r.atFor(pointGraceDone, p)
	g.mu.Lock()
	defer g.mu.Unlock()
	if s.standby != p || s.graceSeq != seq || s.graceT == nil {
		return
	}
	s.graceT = nil
	s.resume.Close()
	s.resume = nil
}

// graceOver retires a standby whose successor survived the grace period. seq
// names the timer: one that fired while stopGrace stopped it (the successor
// was lost and the standby's reactivation queued) must not retire it.
func (g *registry) graceOver(s *slot, p *plugin, seq uint64) {
	g.r.atFor(pointGrace, p)
	defer g.r.atFor(pointGraceDone, p)
	g.mu.Lock()
	if s.standby != p || s.graceSeq != seq || s.graceT == nil {
		g.mu.Unlock()
		return
	}
	g.move(p, s, stateGone)
	succ := s.active
	g.mu.Unlock()
	p.shutdown(api.ShutdownReason_SHUTDOWN_REASON_SUPERSEDED, "standby grace period over", succ)
}

// leaveStandby ends the slot's standby and what was kept for it.
func (s *slot) leaveStandby() {
	s.standby = nil
	s.stopGrace()
	s.resume.Close()
	s.resume = nil
}

func (s *slot) stopGrace() {
	s.graceSeq++
	if s.graceT != nil {
		s.graceT.Stop()
		s.graceT = nil
	}
}

// reactivation is a standby's way back to active after its successor lost
// went (why: lostWhy), in the urgent hold t queued when it went: it takes
// its resume cursor (takeResume), gets its round (round: what changed since,
// or the whole state), switches, or is dropped if its slot is served
// again meanwhile (retireStale).
type reactivation struct {
	g       *registry
	p, lost *plugin
	why     string
	t       *holdTicket
}

// startReactivation holds the dispatch for standby, whose successor lost
// was just removed (why: lostWhy), and reactivates it in the background.
// g.mu is held.
func (g *registry) startReactivation(standby, lost *plugin, why string) {
	t := g.r.hold.enqueueUrgent()
	g.r.trace(nil, pointReactivating, standby)
	g.r.wg.Add(1)
	go func() {
		defer g.r.wg.Done()
		defer g.r.trace(nil, pointReactivated, standby)
		(&reactivation{g: g, p: standby, lost: lost, why: why, t: t}).run()
	}()
}

// errReactivationStale drops a reactivation whose reason, nobody serving the
// slot, was gone by the time it ran.
var errReactivationStale = errors.New("its slot is served again")

// errUnderGate sends a reactivation to the sync gate: the standby takes no
// delta rounds, the runtime's state changed while it stood by, and the
// ledger is not known to be exact, so its full round comes from SyncFn.
var errUnderGate = errors.New("the runtime's state recorded is not known to be exact")

// run makes the standby active again after its successor went away.
func (re *reactivation) run() {
	g, p, lost, why := re.g, re.p, re.lost, re.why
	r := g.r
	ctx := r.ctx
	start := time.Now()
	g.mu.Lock()
	takeover := &api.Takeover{PredecessorVersion: lost.version, PredecessorInstance: lost.instance,
		PredecessorGeneration: lost.generation, PredecessorPod: lost.podIdentity(), Reactivation: true}
	g.mu.Unlock()
	updates, err := re.held(takeover)
	if errors.Is(err, errUnderGate) {
		r.log.Infof(ctx, "plugin %s is synchronized again under the sync gate: %v", p.describe(), err)
		updates, err = joinOf(g, p).underGate(ctx, takeover)
	}
	var nj *notJoined
	switch {
	case errors.Is(err, errReactivationStale):
		r.log.Infof(ctx, "reactivation of plugin %s after %s %s dropped: %v", p.describe(), lost.describe(), why, err)
		re.retireStale()
		return
	case errors.As(err, &nj): // disconnected where it failed
		g.r.recordHandover(p, "failed", start, time.Since(start))
		return
	case err != nil:
		if ctx.Err() == nil {
			r.log.Warnf(ctx, "failed to reactivate plugin %s: %v", p.describe(), err)
			g.r.recordHandover(p, "failed", start, time.Since(start))
		}
		p.shutdown(g.r.syncFailureReason(err), err.Error(), nil)
		return
	}
	r.log.Infof(ctx, "plugin %s reactivated after %s %s", p.describe(), lost.describe(), why)
	g.r.recordHandover(p, "reactivated", start, time.Since(start))
	g.r.applyUpdates(ctx, p, updates)
}

// lostWhy says why a standby's successor is gone, for the log and the
// standby's notice, when it goes: it "failed to join" in its switch (the
// standby may not even have heard it stands by), or "left" once its switch
// completed. g.mu is held.
func lostWhy(lost *plugin) string {
	if lost.join.switching() {
		return "failed to join"
	}
	return "left"
}

// held reactivates p in the hold t and returns the updates its
// round asked for, to apply once the hold is released. Whatever p or the
// ledger hold, it fails rather than panics: it runs on a goroutine of its
// own, inside the runtime.
func (re *reactivation) held(takeover *api.Takeover) (updates []*api.ContainerUpdate, err error) {
	g, p, lost, why, t := re.g, re.p, re.lost, re.why, re.t
	r := g.r
	ctx := r.ctx
	defer r.release(t)
	defer p.recoverPanic(ctx, "reactivating it", &err)
	r.atFor(pointSwitch, p)
	if err := r.acquire(ctx, t); err != nil {
		return nil, err
	}
	r.atFor(pointSwap, p)
	resume, err := re.takeResume()
	if err != nil {
		return nil, err
	}
	defer resume.Close()
	round, err := re.round(resume)
	if err != nil {
		return nil, err
	}
	// Active from here, as a switch's successor is (switchIn): a candidate
	// registering meanwhile takes over from it.
	sw, err := g.swap(p)
	if err != nil {
		return nil, err
	}
	r.hold.switchesTo(t, p)
	if round != nil {
		updates, err = round(ctx, takeover)
	}
	if err == nil {
		err = p.tellRole(ctx, api.PluginRole_PLUGIN_ROLE_ACTIVE, lost, "active again: its successor "+why)
	}
	if err != nil {
		p.shutdown(g.r.syncFailureReason(err), err.Error(), nil)
		return nil, err
	}
	_, err = sw.activate()
	return updates, err
}

// takeResume checks, in the reactivation's hold, that its reason still
// holds (p stands by and nobody serves its slot: standbyPending) and takes
// p's resume cursor. A reactivation queued behind a switch that completed
// meanwhile finds that switch's instance active; one queued by a second
// loss finds p active again (an earlier reactivation ran) or gone: each is
// dropped. The cursor is read here, not when the reactivation was queued:
// the one that runs takes it.
func (re *reactivation) takeResume() (*ledger.Cursor, error) {
	g, p := re.g, re.p
	g.mu.Lock()
	s := p.slot
	if (p.state != stateStandby || s.standby != p) && !bugStaleReactivation {
		g.mu.Unlock()
		return nil, fmt.Errorf("%w: plugin %s is %s", errReactivationStale, p.name(), p.state)
	}
	if err := standbyPending(p); err != nil {
		g.mu.Unlock()
		return nil, err
	}
	resume := s.resume // nil past resumeBound: the whole state is told
	s.resume = nil
	g.mu.Unlock()
	return resume, nil
}

// standbyPending tells whether standby p may still become active: only
// while nobody serves its slot, which is what its reactivation is for. g.mu
// is held.
func standbyPending(p *plugin) error {
	if succ := p.slot.active; succ != nil && succ != p && !bugStaleReactivation {
		return fmt.Errorf("%w: %s is active", errReactivationStale, succ.describe())
	}
	return nil
}

// retireStale retires a standby whose reactivation was dropped because
// another instance serves its slot: it stood by for an instance that is
// gone, and is told who took over.
func (re *reactivation) retireStale() {
	g, p := re.g, re.p
	g.mu.Lock()
	s := p.slot
	if p.state != stateStandby || s == nil || s.standby != p || s.active == nil {
		g.mu.Unlock()
		return
	}
	succ := s.active
	g.move(p, s, stateGone)
	g.mu.Unlock()
	p.shutdown(api.ShutdownReason_SHUTDOWN_REASON_SUPERSEDED, "a newer instance took over before it was reactivated", succ)
}

// round chooses, in the reactivation's hold, what the standby
// is told before it is active again (nil: nothing): what was relayed since
// it stood by, in a delta round marked as the reactivation's (empty, it
// still tells the plugin it serves again), if it takes them; else nothing if
// nothing was, so it knows what an instance active all along would; else
// the whole state in one full round from the ledger, if that is exact, or
// errUnderGate.
func (re *reactivation) round(resume *ledger.Cursor) (func(context.Context, *api.Takeover) ([]*api.ContainerUpdate, error), error) {
	g, p := re.g, re.p
	var d *ledger.Delta
	ok := false
	if resume != nil {
		d, ok = resume.Since()
	}
	switch {
	case ok && p.deltaSync():
		return func(ctx context.Context, takeover *api.Takeover) ([]*api.ContainerUpdate, error) {
			return p.synchronizeDelta(ctx, d, takeover)
		}, nil
	case ok && d.Empty():
		return nil, nil
	case !g.r.ledger.Usable():
		return nil, errUnderGate
	}
	pods, ctrs, ok := g.r.ledger.State()
	if !ok {
		return nil, errUnderGate
	}
	return func(ctx context.Context, takeover *api.Takeover) ([]*api.ContainerUpdate, error) {
		return p.synchronize(ctx, pods, ctrs, takeover)
	}, nil
}

func deleteID(ids []string, id string) []string {
	return slices.DeleteFunc(ids, func(x string) bool { return x == id })
}
