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
	resume := standby.slot.resume
	standby.slot.resume = nil // the reactivation reads and closes it
	g.r.trace(nil, pointReactivating, standby)
	g.r.wg.Add(1)
	go func() {
		defer g.r.wg.Done()
		defer g.r.trace(nil, pointReactivated, standby)
		g.reactivate(standby, lost, resume, t)
	}()
}

// reactivate makes a standby active again after its successor went away.
func (g *registry) reactivate(p, lost *plugin, resume *cursor, t *holdTicket) {
	r := g.r
	ctx := r.ctx
	start := time.Now()
	defer resume.close()
	g.mu.Lock()
	why := lostWhy(lost)
	g.mu.Unlock()
	err := g.reactivateHeld(p, lost, resume, t, why)
	if err != nil {
		if ctx.Err() == nil {
			r.log.Warnf(ctx, "failed to reactivate plugin %s: %v", p.describe(), err)
			g.recordHandover(p, "failed", start, time.Since(start))
		}
		p.shutdown(g.syncFailureReason(err), err.Error(), nil)
		return
	}
	r.log.Infof(ctx, "plugin %s reactivated after %s %s", p.describe(), lost.describe(), why)
	g.recordHandover(p, "reactivated", start, time.Since(start))
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

func (g *registry) reactivateHeld(p, lost *plugin, resume *cursor, t *holdTicket, why string) error {
	r := g.r
	ctx := r.ctx
	defer r.release(t)
	r.atFor(pointSwitch, p)
	if err := r.acquire(ctx, t); err != nil {
		return err
	}
	g.mu.Lock()
	lostPod := lost.podIdentity()
	g.mu.Unlock()
	takeover := &api.Takeover{PredecessorVersion: lost.version, PredecessorInstance: lost.instance,
		PredecessorGeneration: lost.generation, PredecessorPod: lostPod, Reactivation: true}
	d, ok := resume.since()
	if !ok {
		return errDisplaced
	}
	// Active from here, as a switch's successor is (switch.go): a candidate
	// registering meanwhile takes over from it.
	sw, err := g.swap(p)
	if err != nil {
		return err
	}
	err = g.reactivationRounds(ctx, p, lost, d, takeover, why)
	if err != nil {
		p.shutdown(g.syncFailureReason(err), err.Error(), nil)
		return err
	}
	_, err = g.activated(sw)
	return err
}

// reactivationRounds tells a reactivated standby what changed while it
// stood by, in a round marked as a reactivation (an instance without delta
// rounds stood by only in its successor's hold, where nothing changed), and
// that it is active again.
func (g *registry) reactivationRounds(ctx context.Context, p, lost *plugin, d *delta, takeover *api.Takeover, why string) error {
	if p.deltaSync() {
		updates, err := p.synchronizeDelta(ctx, d, takeover)
		if err != nil {
			return err
		}
		g.applyUpdatesLater(p, updates)
	}
	return g.tellRole(ctx, p, api.PluginRole_PLUGIN_ROLE_ACTIVE, lost, "active again: its successor "+why)
}

// applyUpdatesLater applies updates once the hold is released.
func (g *registry) applyUpdatesLater(p *plugin, updates []*api.ContainerUpdate) {
	if len(updates) > 0 && !g.r.hold.deferUpdate(p, updates) {
		g.applyUpdates(g.r.ctx, p, updates)
	}
}

func deleteID(ids []string, id string) []string {
	return slices.DeleteFunc(ids, func(x string) bool { return x == id })
}
