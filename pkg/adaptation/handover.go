package adaptation

// Joining: how an instance becomes the active one of its slot (registry.go),
// and how it stops being it.
//
// A configured plugin joins in one of three ways:
//
//	fresh         nobody holds its slot (every plugin written for upstream, and
//	              an opted-in plugin that is the first of its name): one full
//	              Synchronize under the sync gate, committed before the gate
//	              opens, as upstream does, so the next runtime operation that
//	              takes BlockPluginSync after its Synchronize returned reaches it.
//	              An opted-in plugin with delta rounds (api.FeatureDeltaSync)
//	              joins as a takeover does instead, with nobody serving
//	              meanwhile: phase 1 outside the gate, then only the commit.
//	takeover      an opted-in instance replaces the active instance of its name
//	              (or a plugin written for upstream with its name and index). If
//	              it supports delta rounds it synchronizes while the predecessor
//	              keeps serving (phase 1, no locks) and then gets, under the
//	              gate, what changed since; otherwise its one full Synchronize
//	              runs under the gate.
//	reactivation  the active instance was lost while a standby waited: the sync
//	              gate was reserved the moment the loss was noticed, and the
//	              standby is re-synchronized under it.
//
// Phase 1 of a plugin with delta rounds waits for runtime operations in
// flight without keeping anybody out, and so does its commit while another
// instance serves its events, bounded by the takeover patience (patience.go):
// a runtime holds BlockPluginSync across a whole graceful stop. A commit
// with nobody serving queues for the gate, as upstream's join does.
//
// Every way ends in commit: under the gate it brings the instance up to date,
// then under the adaptation's lock it switches the slot's active instance
// between two events and tells those involved (SUPERSEDED or STANDBY to the
// old instance before ACTIVE to the new one) before any further event is
// dispatched. An instance's life:
//
//	candidate --commit--> active --superseded--> standby --grace over--> closed
//	    |                   |                       |
//	    +--fails--> closed   +--lost--> closed       +--successor lost--> (re-sync) active
//
// Who may become a candidate is decided at registration (registry.place:
// handoverPolicy.mayClaim, and registry.maySupersede, which asks the
// SupersedePolicy about every instance the newcomer would evict); a newer
// candidate displaces a pending one.

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/nri-handover/nri/api"
)

// maxCatchUps bounds the delta rounds of one commit. Under the gate only
// events that bypass BlockPluginSync (a container exit) can change the
// runtime's state, so one extra round almost always suffices.
const maxCatchUps = 4

var errDisplaced = errors.New("displaced by a newer instance before it took over")

// handsOver tells whether the plugin takes part in handover: it asked for it,
// it is external, and the runtime offers it.
func (p *plugin) handsOver() bool {
	return p.r.handover && p.kind == kindExternal && api.HasFeature(p.features, api.FeatureHandover)
}

// deltaSync tells whether the plugin accepts more than one synchronization
// round on its connection.
func (p *plugin) deltaSync() bool {
	return p.handsOver() && api.HasFeature(p.features, api.FeatureDeltaSync)
}

// offeredFeatures are the protocol features the runtime offers p: only those
// p asked for.
func (p *plugin) offeredFeatures() []string {
	switch {
	case p.deltaSync():
		return []string{api.FeatureHandover, api.FeatureDeltaSync}
	case p.handsOver():
		return []string{api.FeatureHandover}
	}
	return nil
}

// describe names an instance for logs and errors.
func (p *plugin) describe() string {
	s := p.name()
	if p.version != "" {
		s += " version " + p.version
	}
	if p.instance != "" {
		s += " instance " + p.instance
	}
	if p.generation != 0 {
		s += " generation " + strconv.FormatUint(p.generation, 10)
	}
	return s
}

// screen places a registering plugin (registry.place), once the runtime
// placed its process if the rules need it (resolveIdentities), and
// disconnects a pending candidate it displaced.
func (g *registry) screen(ctx context.Context, p *plugin) error {
	g.r.at(pointRegister)
	g.resolveIdentities(ctx, p)
	displaced, err := g.place(p)
	if err != nil {
		if p.handsOver() {
			g.recordHandover(p, "rejected", time.Now(), 0)
		}
		return err
	}
	if where, ok := g.placed(p); ok {
		g.r.log.Infof(ctx, "plugin %s admitted: %s, uid %d", p.describe(), where, p.cred.UID)
	}
	if displaced != nil {
		g.r.log.Infof(g.r.ctx, "plugin %s displaces %s before it took over", p.describe(), displaced.describe())
		g.recordHandover(displaced, "displaced", time.Now(), 0)
		displaced.shutdown(api.ShutdownReason_SHUTDOWN_REASON_SUPERSEDED, "a newer instance registered before this one took over", p)
	}
	return nil
}

// admit brings a registered and configured plugin into event delivery. On
// failure the plugin has been disconnected.
func (g *registry) admit(ctx context.Context, p *plugin) error {
	r := g.r
	start := time.Now()
	if p.kind == kindBuiltin { // the others were placed when they registered
		if err := g.screen(ctx, p); err != nil {
			<-p.shutdown(api.ShutdownReason_SHUTDOWN_REASON_REGISTRATION_REJECTED, err.Error(), nil)
			return err
		}
	}
	takeover := g.takeoverFrom(p)
	if takeover != nil {
		r.log.Infof(ctx, "plugin %s takes over from version %q instance %q%s", p.describe(),
			takeover.PredecessorVersion, takeover.PredecessorInstance, g.podsOfTakeover(p, takeover))
	}

	// Phase 1, no locks, for a plugin with delta rounds: runtime operations
	// run and the predecessor, if any, keeps handling events meanwhile. The
	// others join as upstream's do, under the gate.
	var (
		cur     *cursor
		updates []*api.ContainerUpdate
		err     error
	)
	deadline := start.Add(r.takeoverPatience())
	if p.deltaSync() {
		if cur, updates, err = g.prepare(ctx, p, takeover, deadline); err != nil {
			return g.fail(p, start, err)
		}
	}
	defer cur.close()

	// Runtime operations wait from here until the switch. After phase 1 the
	// gate is taken at an instant no operation holds it while another
	// instance serves p's events: queued behind a long operation in flight,
	// it would keep every new one out until that ended. While nobody serves
	// them (a fresh join, or the active instance lost), it queues as
	// upstream's join does: an operation kept out for a while is better
	// than one that bypasses the plugin for good.
	r.at(pointGate)
	if cur != nil {
		unserved, done := g.unserved(p)
		err = g.await(ctx, p, deadline, waitIdleGate, func(ctx context.Context) error {
			return r.syncGate.lockIdleUntil(ctx, unserved)
		})
		done()
	} else {
		err = r.syncGate.Lock(ctx)
	}
	if err != nil {
		if ctx.Err() == nil {
			return g.fail(p, start, err)
		}
		p.shutdown(api.ShutdownReason_SHUTDOWN_REASON_RUNTIME_SHUTDOWN, "runtime is shutting down", nil)
		return fmt.Errorf("plugin %s not synchronized: %w", p.name(), err)
	}
	waitStart := time.Now()
	more, err := g.commit(ctx, p, cur, takeover)
	r.syncGate.Unlock()
	wait := time.Since(waitStart)
	if err != nil {
		return g.fail(p, start, err)
	}
	r.log.Infof(ctx, "plugin %s connected and synchronized", p.qualifiedName())
	if p.handsOver() {
		g.recordHandover(p, "completed", start, wait)
	}
	g.applyUpdates(ctx, p, append(updates, more...))
	return nil
}

// preGateRounds bounds the delta rounds a takeover sends before it takes the
// sync gate: each brings the successor closer, so that the round under the
// gate carries only what changed during the last one.
const preGateRounds = 2

// prepare synchronizes p outside the sync gate (phase 1): a takeover's
// successor while its predecessor keeps serving, or an opted-in plugin with
// delta rounds joining fresh. It opens a journal cursor, waits until the
// runtime operations in flight at that point are over (their effects are then
// in the runtime's state; the operations that start meanwhile are in the
// journal), sends the runtime's state in full and then what the journal
// recorded meanwhile. The wait keeps nobody out and lasts as long as those
// operations do (a graceful stop holds BlockPluginSync for the pod's grace
// period), up to deadline, p's patience: then p is refused (patience.go),
// never synchronized while runtime operations wait. If the journal overruns,
// phase 1 starts over, within the same patience.
func (g *registry) prepare(ctx context.Context, p *plugin, takeover *api.Takeover, deadline time.Time) (*cursor, []*api.ContainerUpdate, error) {
	r := g.r
	cur := r.journal.openCursor(r.dispatched.Load)
	r.at(pointDrain)
	if err := g.await(ctx, p, deadline, waitInFlight, r.syncGate.drain); err != nil {
		cur.close()
		return nil, nil, err
	}
	s, err := g.snapshot(ctx)
	var updates []*api.ContainerUpdate
	if err == nil {
		updates, err = p.synchronize(ctx, s.pods, s.ctrs, takeover)
	}
	for round := 0; err == nil && round < preGateRounds; round++ {
		var more []*api.ContainerUpdate
		var sent bool
		more, sent, err = g.catchUp(ctx, p, cur)
		updates = append(updates, more...)
		if !sent {
			break
		}
	}
	if errors.Is(err, errJournalOverrun) {
		cur.close()
		if time.Now().After(deadline) {
			return nil, nil, &patienceError{patience: r.takeoverPatience(), what: "a synchronization the journal could follow"}
		}
		r.log.Warnf(ctx, "plugin %s: %v; synchronizing it again, outside the sync gate", p.name(), err)
		cur, more, err := g.prepare(ctx, p, takeover, deadline)
		return cur, append(updates, more...), err
	}
	if err != nil {
		cur.close()
		return nil, nil, err
	}
	return cur, updates, nil
}

// commit brings p up to date and makes it the active instance of its slot.
// cur is where p's knowledge of the runtime's state ends; without one p gets
// its full round now. The caller holds the sync gate, so the work here is
// what changed since cur, not what the node holds: only events that bypass
// BlockPluginSync (a container exit) can change the runtime's state
// meanwhile, and if one is dispatched before the switch p gets another delta
// round, so it learns what the event changed.
func (g *registry) commit(ctx context.Context, p *plugin, cur *cursor, takeover *api.Takeover) ([]*api.ContainerUpdate, error) {
	r := g.r
	if !g.pending(p) {
		return nil, errDisplaced
	}
	var updates []*api.ContainerUpdate
	if cur != nil && takeover.GetReactivation() {
		// A standby knows the runtime's state up to its switch: its first
		// round is what changed since, with the takeover that says why.
		d, ok := cur.since()
		switch {
		case !p.deltaSync():
			// It takes no further round. It stood by only while its
			// successor's notices were under way, under the gate, where
			// only events that bypass it can change anything.
			if !ok || !d.empty() {
				r.log.Warnf(ctx, "plugin %s is reactivated without what changed while it stood by: it does not take delta rounds", p.name())
			}
			return g.switchTo(ctx, p, nil)
		case !ok:
			cur = nil // what it missed was not kept: a full round
		default:
			var err error
			if updates, err = p.synchronizeDelta(ctx, d, takeover); err != nil {
				return nil, err
			}
		}
	}
	if cur == nil {
		if p.deltaSync() { // no operation is in flight: nothing to drain
			cur = r.journal.openCursor(r.dispatched.Load)
			defer cur.close()
		}
		// Under the gate the plugin is synchronized from inside SyncFn, as
		// upstream does: nothing is copied.
		var serr error
		err := g.runtimeState(ctx, func(pods []*api.PodSandbox, ctrs []*api.Container) {
			updates, serr = p.synchronize(ctx, pods, ctrs, takeover)
		})
		if err == nil {
			err = serr
		}
		if err != nil {
			return nil, err
		}
		if cur == nil {
			more, err := g.switchTo(ctx, p, nil)
			return append(updates, more...), err
		}
	}
	for round := 0; ; round++ {
		more, _, err := g.catchUp(ctx, p, cur)
		if err != nil {
			return nil, err
		}
		updates = append(updates, more...)
		if round == maxCatchUps-1 {
			r.log.Warnf(ctx, "plugin %s: events bypassing BlockPluginSync kept changing the runtime's state; switching after %d rounds",
				p.name(), maxCatchUps)
			more, err = g.switchTo(ctx, p, nil)
			return append(updates, more...), err
		}
		more, err = g.switchTo(ctx, p, cur)
		if !errors.Is(err, errMissedEvent) {
			return append(updates, more...), err
		}
	}
}

// catchUp sends p what the journal recorded since cur, if anything, and
// moves cur past it; sent tells whether it sent a round.
func (g *registry) catchUp(ctx context.Context, p *plugin, cur *cursor) (updates []*api.ContainerUpdate, sent bool, err error) {
	d, ok := cur.since()
	if !ok {
		return nil, false, errJournalOverrun
	}
	if d.empty() {
		return nil, false, nil
	}
	updates, err = p.synchronizeDelta(ctx, d, nil)
	return updates, true, err
}

var errJournalOverrun = fmt.Errorf("more than %d objects changed while the plugin was being synchronized", maxJournal)

var errMissedEvent = errors.New("an event was dispatched after the state the plugin knows")

// switchover is what one switch changes, for the notices and the
// activation that follow it.
type switchover struct {
	to      *plugin
	from    *plugin   // the slot's previous active instance, standing by until to is active
	legacy  []*plugin // plugins written for upstream to takes over
	dropped *plugin   // an earlier standby this switch retires
}

// switchTo makes p the active instance of its slot. The caller holds the sync
// gate. The adaptation's lock is taken only to change the registry between
// two events, never across a round trip to a plugin: a plugin's handler may
// call back into the runtime (UpdateContainers, and the runtime's UpdateFn),
// which may need a lock of the runtime's that an event waiting for the
// adaptation's lock holds (containerd's NRI mutex; a container exit takes it
// without BlockPluginSync). For an opted-in p, three steps:
//
//  1. swap, under the adaptation's lock: admission decides again (the rules
//     take effect here), p becomes its slot's active instance but is still
//     activating, so no event reaches it yet, and the old active instance
//     becomes a standby, so none reaches it either.
//  2. notices, no lock held: the old instance hears STANDBY, then p hears
//     ACTIVE. If p does not take it, p is removed and the standby
//     reactivated (registry.remove): a failed notice never leaves nobody.
//  3. activate, under the adaptation's lock: p receives events from the
//     next one on, the plugins written for upstream it takes over stop
//     receiving them, and the old instance is superseded (or stays the
//     standby for the grace period). Events dispatched during the notices
//     (only events that bypass the gate can be) reach p after its answer,
//     or, if it takes delta rounds, in a delta round before it is activated.
//
// A plugin that did not opt in is active at step 1 and told nothing, as
// upstream does. If cur is set and an event was dispatched before step 1 that
// cur's reader was not told about, nothing changes and errMissedEvent is
// returned.
func (g *registry) switchTo(ctx context.Context, p *plugin, cur *cursor) ([]*api.ContainerUpdate, error) {
	r := g.r
	r.at(pointSwitch)
	r.Lock()
	if cur != nil && !cur.knows(r.dispatched.Load()) {
		r.Unlock()
		return nil, errMissedEvent
	}
	sw, err := g.swap(p)
	r.Unlock()
	if err != nil || !p.handsOver() {
		return nil, err
	}
	if err := g.tell(ctx, sw); err != nil {
		return nil, err
	}
	return g.activate(ctx, sw, cur)
}

// swap changes the registry for a switch to p. The caller holds the
// adaptation's lock: no event is in flight.
func (g *registry) swap(p *plugin) (*switchover, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	s := p.slot
	switch {
	case s.candidate != p && s.standby != p:
		return nil, errDisplaced
	case s.standby == p && s.active != nil:
		return nil, fmt.Errorf("plugin %s was superseded again before it was reactivated", p.name())
	}
	legacy, err := g.admitSwitch(p)
	if err != nil {
		return nil, err
	}
	sw := &switchover{to: p, from: s.active, legacy: legacy}
	if s.candidate == p {
		s.candidate = nil
	}
	if s.standby == p {
		s.resume = nil // its reactivation reads and closes it
		s.leaveStandby()
		s.retired = slices.DeleteFunc(s.retired, func(id string) bool { return id == p.instance })
	} else if s.standby != nil {
		sw.dropped = s.standby
		s.leaveStandby()
	}
	s.active = p
	if p.handsOver() {
		p.role = api.PluginRole_PLUGIN_ROLE_ACTIVE
		p.activating = make(chan struct{})
	}
	if old := sw.from; old != nil {
		s.retire(old.instance)
		// A standby until p is active: if p does not take the role, the
		// old instance is reactivated. No event is in flight, so it knows
		// every event dispatched so far.
		s.standby, old.role = old, api.PluginRole_PLUGIN_ROLE_STANDBY
		s.resume = g.r.journal.openCursor(g.r.dispatched.Load)
	}
	g.rebuild()
	if !s.shared() || sw.from == nil {
		g.logOrder(g.plugins)
	}
	return sw, nil
}

// tell carries out a switch's notices, with no lock held, in the order a
// plugin that keeps state on the host needs: the old instance hears it
// stands by (and gets to acknowledge, bounded by the request timeout) before
// the new one hears it is active. If p does not take the role it is
// disconnected; the error says why.
func (g *registry) tell(ctx context.Context, sw *switchover) error {
	p := sw.to
	if d := sw.dropped; d != nil {
		d.shutdown(api.ShutdownReason_SHUTDOWN_REASON_SUPERSEDED, "a newer instance took over while this one stood by", p)
	}
	if old := sw.from; old != nil {
		g.r.log.Infof(ctx, "plugin %s superseded by %s", old.describe(), p.describe())
		msg := "superseded, standing by until the successor is active"
		if g.keepsStandby(old) {
			msg = fmt.Sprintf("superseded, standing by for %s", g.policy.grace)
		}
		if err := g.tellRole(ctx, old, api.PluginRole_PLUGIN_ROLE_STANDBY, p, msg); err != nil {
			old.shutdown(g.failureReason(err, api.ShutdownReason_SHUTDOWN_REASON_SUPERSEDED),
				fmt.Sprintf("did not take the standby role: %v", err), p)
		}
	}
	err := g.tellRole(ctx, p, api.PluginRole_PLUGIN_ROLE_ACTIVE, sw.from, "active")
	if err == nil && p.isClosed() {
		err = fmt.Errorf("plugin %s closed before it became active", p.name())
	}
	if err != nil {
		// Removes p at once and, with it, reactivates the standby.
		p.shutdown(g.failureReason(err, api.ShutdownReason_SHUTDOWN_REASON_UNSPECIFIED),
			fmt.Sprintf("did not take the active role: %v", err), nil)
	}
	close(p.activating) // events waiting for the answer go on: to p, or past it
	return err
}

// keepsStandby tells whether a superseded instance stays as the standby for
// the grace period once its successor is active.
func (g *registry) keepsStandby(old *plugin) bool {
	return g.policy.grace > 0 && old.deltaSync()
}

// activate lets p, which took the active role, receive events. If an event
// was dispatched that p's knowledge (cur) does not cover, p first gets a
// delta round with what it changed (bounded: only events that bypass the
// gate can be dispatched meanwhile).
func (g *registry) activate(ctx context.Context, sw *switchover, cur *cursor) ([]*api.ContainerUpdate, error) {
	r, p := g.r, sw.to
	var updates []*api.ContainerUpdate
	for round := 0; ; round++ {
		r.at(pointActivate)
		r.Lock()
		if cur != nil && round < maxCatchUps && !cur.knows(r.dispatched.Load()) {
			r.Unlock()
			more, _, err := g.catchUp(ctx, p, cur)
			if err != nil {
				p.shutdown(g.syncFailureReason(err), err.Error(), nil)
				return nil, err
			}
			updates = append(updates, more...)
			continue
		}
		if round == maxCatchUps {
			r.log.Warnf(ctx, "plugin %s: events bypassing BlockPluginSync kept changing the runtime's state; activating it after %d rounds",
				p.name(), maxCatchUps)
		}
		retire, err := g.activated(sw)
		r.Unlock()
		if err != nil {
			return nil, err
		}
		for _, q := range sw.legacy {
			g.r.log.Infof(ctx, "plugin %s takes over from %s, which does not support handover", p.describe(), q.qualifiedName())
			q.shutdown(api.ShutdownReason_SHUTDOWN_REASON_SUPERSEDED, "superseded by "+p.describe(), p)
		}
		if retire != nil {
			retire.shutdown(api.ShutdownReason_SHUTDOWN_REASON_SUPERSEDED, "superseded by "+p.describe(), p)
		}
		return updates, nil
	}
}

// activated ends p's activation in the registry: p receives events, the
// plugins written for upstream it took over do not, and the old instance
// stays the standby for the grace period or is returned for retiring. The
// caller holds the adaptation's lock.
func (g *registry) activated(sw *switchover) (retire *plugin, err error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	p, s := sw.to, sw.to.slot
	if s.active != p {
		return nil, fmt.Errorf("plugin %s was lost before it became active", p.name())
	}
	p.activating = nil
	for _, q := range sw.legacy {
		if q.slot.active == q {
			q.slot.active = nil
		}
	}
	if old := sw.from; old != nil && s.standby == old {
		if g.keepsStandby(old) {
			s.graceSeq++
			seq := s.graceSeq
			s.graceT = time.AfterFunc(g.policy.grace, func() { g.graceOver(s, old, seq) })
		} else {
			s.leaveStandby()
			retire = old
		}
	}
	g.rebuild()
	return retire, nil
}

// tellRole tells an opted-in plugin its role, bounded by the request timeout.
// Role notices are sent only by tell, under the sync gate, so they reach a
// plugin in the order they were decided.
func (g *registry) tellRole(ctx context.Context, p *plugin, role api.PluginRole, peer *plugin, msg string) error {
	if !p.handsOver() || p.isClosed() {
		return nil
	}
	g.r.at(pointNotice)
	req := &api.RoleChangeRequest{Role: role, Message: msg}
	if peer != nil {
		req.PeerVersion, req.PeerInstance, req.PeerGeneration = peer.version, peer.instance, peer.generation
	}
	rctx, cancel := context.WithTimeout(ctx, getRequestTimeout())
	defer cancel()
	_, err := p.svc.RoleChange(rctx, req)
	if err = requestError(rctx, err); err != nil {
		g.r.log.Warnf(ctx, "plugin %s did not take role %s: %v", p.name(), role, err)
	}
	return err
}

// takeoverFrom describes the instance p is about to replace, if any.
func (g *registry) takeoverFrom(p *plugin) *api.Takeover {
	g.mu.Lock()
	defer g.mu.Unlock()
	s := p.slot
	if s == nil || !s.shared() {
		return nil
	}
	if a := s.active; a != nil {
		return &api.Takeover{PredecessorVersion: a.version, PredecessorInstance: a.instance, PredecessorGeneration: a.generation,
			PredecessorPod: a.podIdentity()}
	}
	if len(g.legacyVictims(p)) > 0 {
		return &api.Takeover{}
	}
	return nil
}

// unserved returns a channel that is closed once nobody handles the events
// of p's name: at once if nobody does now, else when the instance that does
// (its slot's active instance, or a plugin written for upstream that p takes
// over) leaves without a successor. done ends the watch: the slot keeps no
// channel once nobody waits on it.
func (g *registry) unserved(p *plugin) (c <-chan struct{}, done func()) {
	g.mu.Lock()
	defer g.mu.Unlock()
	var q *plugin
	if s := p.slot; s != nil && s.active != nil && s.active != p {
		q = s.active
	} else if v := g.legacyVictims(p); len(v) > 0 {
		q = v[0]
	}
	if q == nil {
		vacant := make(chan struct{})
		close(vacant)
		return vacant, func() {}
	}
	s := q.slot
	if s.vacated == nil {
		s.vacated = make(chan struct{})
	}
	ch := s.vacated
	return ch, func() {
		g.mu.Lock()
		if s.vacated == ch {
			s.vacated = nil
		}
		g.mu.Unlock()
	}
}

// pending tells whether p is still waiting to become active in its slot.
func (g *registry) pending(p *plugin) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return p.slot != nil && (p.slot.candidate == p || p.slot.standby == p)
}

// startReactivation reserves the sync gate for standby, whose successor lost
// was just removed, and re-synchronizes it in the background. g.mu is held.
func (g *registry) startReactivation(standby, lost *plugin) {
	ticket := g.r.syncGate.enqueue()
	resume := standby.slot.resume
	g.r.wg.Add(1)
	go func() {
		defer g.r.wg.Done()
		g.reactivate(standby, lost, resume, ticket)
	}()
}

// reactivate makes a standby active again after its successor went away,
// under the gate reserved by ticket, so that no runtime operation starts
// between the loss and the standby's return. It is told what changed since
// it became the standby (resume), in a round marked as a reactivation.
func (g *registry) reactivate(p, lost *plugin, resume *cursor, ticket *gateTicket) {
	r := g.r
	ctx := r.ctx
	start := time.Now()
	if err := r.syncGate.lockTicket(ctx, ticket); err != nil {
		return
	}
	defer resume.close()
	waitStart := time.Now()
	g.mu.Lock()
	lostPod := lost.podIdentity()
	g.mu.Unlock()
	takeover := &api.Takeover{PredecessorVersion: lost.version, PredecessorInstance: lost.instance,
		PredecessorGeneration: lost.generation, PredecessorPod: lostPod, Reactivation: true}
	updates, err := g.commit(ctx, p, resume, takeover)
	r.syncGate.Unlock()
	if err != nil {
		r.log.Warnf(ctx, "failed to reactivate plugin %s: %v", p.describe(), err)
		g.recordHandover(p, "failed", start, time.Since(waitStart))
		p.shutdown(g.syncFailureReason(err), err.Error(), nil)
		return
	}
	r.log.Infof(ctx, "plugin %s reactivated after %s left", p.describe(), lost.describe())
	g.recordHandover(p, "reactivated", start, time.Since(waitStart))
	g.applyUpdates(ctx, p, updates)
}

// graceOver retires a standby whose successor survived the grace period. seq
// names the timer: one that fired while stopGrace stopped it (the successor
// was lost and the standby's reactivation queued) must not retire it.
func (g *registry) graceOver(s *slot, p *plugin, seq uint64) {
	g.r.at(pointGrace)
	defer g.r.at(pointGraceDone)
	g.mu.Lock()
	if s.standby != p || s.graceSeq != seq || s.graceT == nil {
		g.mu.Unlock()
		return
	}
	s.graceT = nil
	s.leaveStandby()
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

// fail disconnects a plugin that could not join, with the reason.
func (g *registry) fail(p *plugin, start time.Time, err error) error {
	if p.handsOver() {
		g.recordHandover(p, "failed", start, 0)
	}
	reason := g.syncFailureReason(err)
	if errors.Is(err, errDisplaced) {
		reason = api.ShutdownReason_SHUTDOWN_REASON_SUPERSEDED
	}
	p.shutdown(reason, err.Error(), nil)
	return fmt.Errorf("plugin %s: %w", p.name(), err)
}

// syncFailureReason tells a plugin why joining failed.
func (g *registry) syncFailureReason(err error) api.ShutdownReason {
	return g.failureReason(err, api.ShutdownReason_SHUTDOWN_REASON_SYNCHRONIZATION_FAILED)
}

// failureReason tells a plugin why a request to it failed, or fallback. A
// stopping runtime cancels every request, which is not the plugin's failure.
func (g *registry) failureReason(err error, fallback api.ShutdownReason) api.ShutdownReason {
	if g.r.ctx.Err() != nil || errors.Is(err, errStopped) {
		return api.ShutdownReason_SHUTDOWN_REASON_RUNTIME_SHUTDOWN
	}
	if reason := shutdownReasonFor(err); reason != api.ShutdownReason_SHUTDOWN_REASON_UNSPECIFIED {
		return reason
	}
	return fallback
}

func (g *registry) recordHandover(p *plugin, outcome string, start time.Time, wait time.Duration) {
	if m, ok := g.r.metrics.(HandoverMetrics); ok {
		m.RecordHandover(p.base, outcome, time.Since(start), wait)
	}
}

func (g *registry) applyUpdates(ctx context.Context, p *plugin, updates []*api.ContainerUpdate) {
	if len(updates) == 0 {
		return
	}
	if s := g.r.startState.Load(); s != nil { // Start returns them from SyncFn
		s.updates = append(s.updates, updates...)
		return
	}
	failed, err := g.r.updateContainers(ctx, updates)
	if err != nil || len(failed) > 0 {
		g.r.log.Warnf(ctx, "runtime failed to apply %d of %d updates from plugin %s synchronization: %v",
			len(failed), len(updates), p.name(), err)
	}
}
