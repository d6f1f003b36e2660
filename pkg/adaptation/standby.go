package adaptation

// The standby: with a grace period (WithStandbyGrace), a superseded instance
// that takes delta rounds stays connected, receiving no events, until the
// grace period is over; if its successor is lost meanwhile it is reactivated
// at once. Its reactivation holds the dispatch from the moment the loss is
// noticed (registry.remove), tells it what changed since it stood by (its
// resume cursor), and switches to it (switch.go): no event passes while
// nobody serves. A candidate joining meanwhile plays no part in it: it takes
// over from the reactivated instance when its own switch comes.

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/nri-handover/nri/api"
)

// keepsStandby tells whether a superseded instance stays as the standby for
// the grace period once its successor is active.
func (g *registry) keepsStandby(old *plugin) bool {
	return g.policy.grace > 0 && old.deltaSync()
}

// startGrace starts the standby's grace period; its resume cursor was
// opened when it became the standby (swap). g.mu is held.
func (g *registry) startGrace(s *slot, p *plugin) {
	s.graceSeq++
	seq := s.graceSeq
	s.graceT = time.AfterFunc(g.policy.grace, func() { g.graceOver(s, p, seq) })
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
	s.resume.close()
	s.resume = nil
}

func (s *slot) stopGrace() {
	s.graceSeq++
	if s.graceT != nil {
		s.graceT.Stop()
		s.graceT = nil
	}
}

// startReactivation holds the dispatch for standby, whose successor lost
// was just removed, and reactivates it in the background. g.mu is held.
func (g *registry) startReactivation(standby, lost *plugin) {
	t := g.r.hold.enqueueUrgent()
	g.r.trace(nil, pointReactivating, standby)
	g.r.wg.Add(1)
	go func() {
		defer g.r.wg.Done()
		defer g.r.trace(nil, pointReactivated, standby)
		g.reactivate(standby, lost, t)
	}()
}

// errReactivationStale drops a reactivation whose reason, nobody serving the
// slot, was gone by the time it ran.
var errReactivationStale = errors.New("its slot is served again")

// reactivate makes a standby active again after its successor went away.
func (g *registry) reactivate(p, lost *plugin, t *holdTicket) {
	r := g.r
	ctx := r.ctx
	start := time.Now()
	g.mu.Lock()
	why := lostWhy(lost)
	g.mu.Unlock()
	updates, err := g.reactivateHeld(p, lost, t, why)
	switch {
	case errors.Is(err, errReactivationStale):
		r.log.Infof(ctx, "reactivation of plugin %s after %s %s dropped: %v", p.describe(), lost.describe(), why, err)
		return
	case err != nil:
		if ctx.Err() == nil {
			r.log.Warnf(ctx, "failed to reactivate plugin %s: %v", p.describe(), err)
			g.recordHandover(p, "failed", start, time.Since(start))
		}
		p.shutdown(g.syncFailureReason(err), err.Error(), nil)
		return
	}
	r.log.Infof(ctx, "plugin %s reactivated after %s %s", p.describe(), lost.describe(), why)
	g.recordHandover(p, "reactivated", start, time.Since(start))
	g.applyUpdates(ctx, p, updates)
}

// lostWhy says why a standby's successor is gone, for the log and the
// standby's notice: it "left" once its switch completed, or "failed to
// join" in it (the standby may not even have heard it stands by). g.mu is
// held.
func lostWhy(lost *plugin) string {
	if lost.switched {
		return "left"
	}
	return "failed to join"
}

// reactivateHeld reactivates p in the hold t and returns the updates its
// round asked for, to apply once the hold is released. Whatever p or the
// ledger hold, it fails rather than panics: it runs on a goroutine of its
// own, inside the runtime.
func (g *registry) reactivateHeld(p, lost *plugin, t *holdTicket, why string) (updates []*api.ContainerUpdate, err error) {
	r := g.r
	ctx := r.ctx
	defer r.release(t)
	defer p.recoverPanic(ctx, "reactivating it", &err)
	r.atFor(pointSwitch, p)
	if err := r.acquire(ctx, t); err != nil {
		return nil, err
	}
	r.atFor(pointSwap, p)
	resume, err := g.takeResume(p)
	if err != nil {
		return nil, err
	}
	defer resume.close()
	g.mu.Lock()
	lostPod := lost.podIdentity()
	g.mu.Unlock()
	takeover := &api.Takeover{PredecessorVersion: lost.version, PredecessorInstance: lost.instance,
		PredecessorGeneration: lost.generation, PredecessorPod: lostPod, Reactivation: true}
	d, ok := resume.since()
	if !ok {
		return nil, errDisplaced
	}
	// Active from here, as a switch's successor is (switch.go): a candidate
	// registering meanwhile takes over from it.
	sw, err := g.swap(p)
	if err != nil {
		return nil, err
	}
	r.hold.switchesTo(t, p)
	updates, err = g.reactivationRounds(ctx, p, lost, d, takeover, why)
	if err != nil {
		p.shutdown(g.syncFailureReason(err), err.Error(), nil)
		return nil, err
	}
	_, err = g.activated(sw)
	return updates, err
}

// takeResume checks, in the reactivation's hold, that its reason still
// holds (p stands by and nobody serves its slot) and takes p's resume
// cursor. A reactivation queued behind a switch that completed meanwhile
// finds that switch's instance active: it is dropped, and p, standing by
// for an instance that is gone, is retired. One queued by a second loss
// finds p active again (an earlier reactivation ran) or gone: it is
// dropped. The cursor is read here, not when the reactivation was queued:
// the one that runs takes it, and one that finds none fails instead of
// reading nothing.
func (g *registry) takeResume(p *plugin) (*cursor, error) {
	g.mu.Lock()
	s := p.slot
	if (p.state != stateStandby || s.standby != p) && !bugStaleReactivation {
		g.mu.Unlock()
		return nil, fmt.Errorf("%w: plugin %s is %s", errReactivationStale, p.name(), p.state)
	}
	if succ := s.active; succ != nil && !bugStaleReactivation {
		g.move(p, s, stateGone)
		g.mu.Unlock()
		p.shutdown(api.ShutdownReason_SHUTDOWN_REASON_SUPERSEDED, "a newer instance took over before it was reactivated", succ)
		return nil, fmt.Errorf("%w: %s is active", errReactivationStale, succ.describe())
	}
	resume := s.resume
	s.resume = nil
	g.mu.Unlock()
	if resume == nil {
		return nil, errors.New("its record of the runtime's state was closed")
	}
	return resume, nil
}

// reactivationRounds tells a reactivated standby what changed while it
// stood by, in a round marked as a reactivation (an instance without delta
// rounds stood by only in its successor's hold, where nothing changed), and
// that it is active again.
func (g *registry) reactivationRounds(ctx context.Context, p, lost *plugin, d *delta, takeover *api.Takeover, why string) ([]*api.ContainerUpdate, error) {
	var updates []*api.ContainerUpdate
	if p.deltaSync() {
		var err error
		if updates, err = p.synchronizeDelta(ctx, d, takeover); err != nil {
			return nil, err
		}
	}
	return updates, g.tellRole(ctx, p, api.PluginRole_PLUGIN_ROLE_ACTIVE, lost, "active again: its successor "+why)
}

func deleteID(ids []string, id string) []string {
	return slices.DeleteFunc(ids, func(x string) bool { return x == id })
}
