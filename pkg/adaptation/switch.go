package adaptation

// The switch: making an instance the active one of its slot, between two
// events, with every event dispatched before it known to the instance and
// every one after it delivered to it alone.
//
// A plugin written for upstream (or any plugin that did not opt in) joins
// as upstream's do: it is added to the dispatch list under the adaptation's
// lock, after its Synchronize, under the sync gate; a workload group's
// member in the hold its join took inside SyncFn (joining.underGate), the
// member it replaces going idle. Both take over the opted-in instances they
// turn handover off for (turnsOff), told why. An opted-in instance
// switches in a hold of the dispatch (hold), in this order:
//
//  1. under the registry's lock, admission decides again (the rules take
//     effect here: decide); the new instance becomes the active one
//     and the old one the standby (no event reaches either in the hold);
//  2. its last round: what the ledger recorded since its cursor (an
//     instance with delta rounds) or, for one without, its one full round
//     from the ledger: no event passes meanwhile, so it knows them all;
//  3. the old active instance hears STANDBY, then the new one ACTIVE;
//  4. the old instance stays the standby (in a pod while it runs, elsewhere
//     for the grace period: standbyTerm) or goes; the plugins written for
//     upstream the new one takes over stop receiving events; release.
//
// Every step is a round trip bounded by the request timeout, none under the
// adaptation's lock. If the new instance fails step 2 or 3 it is
// disconnected before the release, and the old instance, standing by, is
// reactivated in the next hold (startReactivation): no event passed meanwhile.

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nri-handover/nri/api"
	"github.com/nri-handover/nri/pkg/adaptation/internal/ledger"
)

// switchTo makes p the active instance of its slot; cur, if set, is where
// p's knowledge of the runtime's state ends, and named the predecessor its
// rounds so far named. held is how long an opted-in p's switch held events,
// from its hold's queueing to its release (HandoverMetrics' eventWait).
func (j *joining) switchTo(ctx context.Context, cur *ledger.Cursor, named *api.Takeover) (updates []*api.ContainerUpdate, held time.Duration, err error) {
	g, p := j.g, j.p
	if !p.handsOver() {
		updates, err = j.switchHeld(ctx, cur, named, nil)
		return updates, 0, err
	}
	g.r.atFor(pointSwitch, p)
	t := j.holdFor()
	defer j.switchDone(t)
	if err := g.r.acquire(ctx, t); err != nil {
		return nil, 0, err
	}
	updates, err = j.switchIn(ctx, cur, named, t)
	return updates, time.Since(t.queued), err
}

// switchHeld is switchTo in the hold t, already acquired, if it is set (an
// opted-in p's always is).
func (j *joining) switchHeld(ctx context.Context, cur *ledger.Cursor, named *api.Takeover, t *holdTicket) ([]*api.ContainerUpdate, error) {
	g, p := j.g, j.p
	g.r.atFor(pointSwitch, p)
	if !p.handsOver() {
		sw, err := j.switchBetweenEvents(ctx, t)
		if sw != nil {
			sw.dropStandby()
		}
		if err == nil {
			sw.turnedOff(ctx)
		}
		return nil, err
	}
	return j.switchIn(ctx, cur, named, t)
}

// switchIn switches an opted-in p in the hold t, acquired, and releases it.
func (j *joining) switchIn(ctx context.Context, cur *ledger.Cursor, named *api.Takeover, t *holdTicket) ([]*api.ContainerUpdate, error) {
	g, p := j.g, j.p
	r := g.r
	defer r.release(t)
	r.atFor(pointSwap, p)
	sw, err := g.swap(p)
	if err != nil {
		return nil, err
	}
	r.hold.switchesTo(t, p)
	sw.dropStandby()
	updates, err := sw.lastRound(ctx, cur, named)
	if err == nil {
		err = sw.tell(ctx)
	}
	if err != nil {
		// Out before the hold ends: its predecessor, standing by, is
		// reactivated in the next hold (registry.serveNext). Said here,
		// before the disconnect, and not again by the caller.
		err = &notJoined{fmt.Errorf("plugin %s not joined: %w", p.describe(), err)}
		g.r.log.Warnf(ctx, "%v", err)
		p.disconnect(g.r.syncFailureReason(err), errors.Unwrap(err.(*notJoined).err).Error(), nil, false, true)
		return nil, err
	}
	retire, err := sw.activate()
	if err != nil {
		return nil, err
	}
	for _, q := range sw.legacy {
		r.log.Infof(ctx, "plugin %s takes over from %s, which does not support handover", p.describe(), q.qualifiedName())
		q.shutdown(api.ShutdownReason_SHUTDOWN_REASON_SUPERSEDED, successorActive, p)
	}
	for _, q := range sw.idled {
		r.log.Infof(ctx, "plugin %s takes over from %s, which does not support handover: a member of its workload group, it stays connected and receives no events",
			p.describe(), q.qualifiedName())
	}
	if retire != nil {
		retire.shutdown(api.ShutdownReason_SHUTDOWN_REASON_SUPERSEDED, successorActive, p)
	}
	return updates, nil
}

// switchBetweenEvents switches p, which did not opt in, as upstream adds a
// plugin: between two events, under the adaptation's lock, or in the hold t
// its join took inside SyncFn (a workload group's member). No role notice
// is sent, so nothing is waited for meanwhile.
func (j *joining) switchBetweenEvents(ctx context.Context, t *holdTicket) (*switchover, error) {
	g, p := j.g, j.p
	if t != nil {
		defer g.r.release(t)
	} else {
		g.r.Lock()
		defer g.r.Unlock()
	}
	sw, err := g.swap(p)
	if err == nil {
		_, err = sw.activate()
	}
	if err == nil {
		// Logged before the next event, so that the log orders the
		// switch with the events around it.
		sw.logTurnedOff(ctx)
	}
	return sw, err
}

// successorActive is a superseded instance's Shutdown message: the reason
// says it was superseded and the request's successor fields by whom, so the
// message says only what a plugin cannot tell from them.
const successorActive = "its successor is active"

// switchover is one switch, made by swap: what it changes, and its steps
// that follow in the hold: its last round, its notices (tell), its
// activation (activate).
type switchover struct {
	g      *registry
	to     *plugin
	from   *plugin   // the slot's active instance it replaces, standing by until to is active
	legacy []*plugin // plugins written for upstream it takes over; once activated, those it retires
	// idled are the workload group members it takes over (activate): as
	// a newer member's switch leaves them, connected and idle, not told.
	idled []*plugin
	// optedIn are the opted-in instances a plugin that did not opt in takes
	// over: handover was turned off for a rollout of their workload
	// (turnsOff); once activated, those it retires.
	optedIn []*plugin
	// standing are the active ones among them that stand by in their slot
	// instead (standbyTerm): if to leaves, they serve again (serveNext).
	standing []*plugin
	// dropped is the standby for from, retired by the switch that
	// replaces from.
	dropped *plugin
}

// dropStandby disconnects the standby a switch retired, if any.
func (sw *switchover) dropStandby() {
	if q := sw.dropped; q != nil {
		q.shutdown(api.ShutdownReason_SHUTDOWN_REASON_SUPERSEDED, "the instance it stood by for was superseded", sw.to)
	}
}

// turnedOff tells the opted-in instances a switch to a plugin that did not
// opt in took over that they were superseded, or that they stand by. They
// received no event since the switch; p, joined as upstream's plugins join,
// gets no role notice, so there is no order between their last write and
// p's first.
func (sw *switchover) turnedOff(ctx context.Context) {
	g := sw.g
	for _, q := range sw.optedIn {
		q.shutdown(api.ShutdownReason_SHUTDOWN_REASON_SUPERSEDED, "its successor does not use handover", sw.to)
	}
	for _, q := range sw.standing {
		if err := q.tellRole(ctx, api.PluginRole_PLUGIN_ROLE_STANDBY, sw.to, "superseded by an instance that does not use handover, standing by"); err != nil {
			q.shutdown(g.r.failureReason(err, api.ShutdownReason_SHUTDOWN_REASON_SUPERSEDED),
				fmt.Sprintf("did not take the standby role: %v", err), sw.to)
		}
	}
}

func (sw *switchover) logTurnedOff(ctx context.Context) {
	g := sw.g
	for _, q := range sw.optedIn {
		g.r.log.Infof(ctx, "plugin %s superseded by %s, which does not use handover: its successors join beside it as upstream's plugins do",
			q.describe(), sw.to.describe())
	}
	for _, q := range sw.standing {
		g.r.log.Infof(ctx, "plugin %s superseded by %s, which does not use handover: it stands by while its pod runs",
			q.describe(), sw.to.describe())
	}
}

// swap switches p's slot to p: admission decides again, now that it takes
// effect; p becomes the active instance and the one it replaces the standby
// (a workload group's: idle, admission's newer row). An opted-in p's switch
// holds the dispatch, so no event reaches either before the notices are
// over; if p fails them it is removed and the standby reactivated, having
// missed nothing. The opted-in instances a p that did not opt in takes over
// (turnsOff) are the same whatever kind of slot p is in.
func (g *registry) swap(p *plugin) (*switchover, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if err := g.pendingErr(p); err != nil {
		return nil, err
	}
	s := p.slot
	legacy, err := g.admitSwitch(p)
	if errors.Is(err, errIdled) {
		g.move(p, s, stateIdle) // a member no newer than the active one (admission's newer rule)
	}
	if err != nil {
		return nil, err
	}
	sw := &switchover{g: g, to: p, from: s.active, legacy: legacy}
	if !p.handsOver() {
		sw.legacy, sw.optedIn = nil, legacy
		if bugGroupKeepsOptedIn && s.group != "" {
			sw.optedIn = nil
		}
	}
	if old := sw.from; old != nil && s.group != "" {
		// A member has no notion of standing by: the instance it
		// replaces stays connected, idle.
		g.move(old, s, stateIdle)
		g.r.log.Infof(g.r.ctx, "plugin %s takes over from %s of its workload, which stays connected and receives no events",
			g.policy.who(p), g.policy.who(old))
	} else if old != nil {
		// A standby stands by for the active instance it was replaced
		// by: once that one is replaced in turn, its reason is gone.
		if prev := s.standby; prev != nil && prev != p {
			g.move(prev, s, stateGone)
			sw.dropped = prev
		}
		s.retire(old.instance)
		g.move(old, s, stateStandby)
		s.resume = g.r.ledger.OpenCursor()
	}
	if p.state == stateStandby { // reactivated
		s.retired = deleteID(s.retired, p.instance)
	}
	g.move(p, s, stateActive)
	return sw, nil
}

// activate completes a switch whose notices were taken: the old instance
// stays the standby for the grace period or is returned for retiring, and the
// plugins written for upstream the new one takes over stop receiving events.
func (sw *switchover) activate() (retire *plugin, err error) {
	g := sw.g
	g.mu.Lock()
	defer g.mu.Unlock()
	p, s := sw.to, sw.to.slot
	if p.state != stateActive {
		return nil, fmt.Errorf("plugin %s was lost before it became active", p.name())
	}
	if p.join.switching() {
		p.join = joinSwitched
	}
	if old := sw.from; old != nil && old.state == stateStandby && s.standby == old {
		if keep, grace := g.standbyTerm(old); keep && !old.isClosed() {
			g.timeStandby(s, old, grace)
		} else {
			g.move(old, s, stateGone)
			retire = old
		}
	}
	var gone []*plugin
	for _, q := range sw.legacy {
		switch {
		case q.state != stateActive: // lost meanwhile
		case q.slot.group != "":
			g.move(q, q.slot, stateIdle)
			sw.idled = append(sw.idled, q)
		default:
			g.move(q, q.slot, stateGone)
			gone = append(gone, q)
		}
	}
	sw.legacy = gone
	var retired []*plugin
	for _, q := range sw.optedIn {
		if g.standsBy(q) {
			sw.standing = append(sw.standing, q)
		} else {
			g.move(q, q.slot, stateGone)
			retired = append(retired, q)
		}
	}
	sw.optedIn = retired
	g.logOrder(g.plugins)
	return retire, nil
}

// holdFor is the hold ticket p's switch uses: the one reserved for it when
// its predecessor was lost, or a new one.
func (j *joining) holdFor() *holdTicket {
	g, p := j.g, j.p
	g.mu.Lock()
	defer g.mu.Unlock()
	s := p.slot
	if s.candidate == p && s.reserved != nil {
		t := s.reserved
		s.reserved = nil
		return t
	}
	t := g.r.hold.enqueue()
	if s.candidate == p {
		s.switching = t
	}
	return t
}

// switchDone forgets p's switch ticket once it is released.
func (j *joining) switchDone(t *holdTicket) {
	g, p := j.g, j.p
	g.mu.Lock()
	defer g.mu.Unlock()
	if s := p.slot; s != nil && s.switching == t {
		s.switching = nil
	}
}

// lastRound brings p up to date in the hold: what changed since cur, or, for
// an instance without delta rounds that joins from the ledger, its one full
// round. If the instance it replaces is not the one its rounds named (that
// one was lost and its standby reactivated meanwhile), the round names it.
func (sw *switchover) lastRound(ctx context.Context, cur *ledger.Cursor, named *api.Takeover) ([]*api.ContainerUpdate, error) {
	g := sw.g
	p := sw.to
	var takeover *api.Takeover
	if sw.from != nil {
		g.mu.Lock()
		takeover = sw.from.asPredecessor()
		g.mu.Unlock()
	}
	changed := takeover != nil && named.GetPredecessorInstance() != takeover.GetPredecessorInstance()
	switch {
	case cur != nil:
		d, ok := cur.Since()
		if !ok {
			return nil, fmt.Errorf("its record of the runtime's state was closed")
		}
		if d.Empty() && !changed {
			return nil, nil
		}
		if !changed {
			takeover = nil
		}
		return p.synchronizeDelta(ctx, d, takeover)
	case p.join != joinFromLedger:
		return nil, nil // synchronized under the gate: no event passed it but exits, as upstream
	}
	pods, ctrs, ok := g.r.ledger.State()
	if !ok {
		return nil, fmt.Errorf("the runtime's state is not recorded")
	}
	return p.synchronize(ctx, pods, ctrs, takeover)
}

// tell carries out a switch's notices in the order a plugin that keeps state
// on the host needs: the old instance hears it stands by before the new one
// hears it is active. An old instance that does not take its role is
// disconnected; the error says why the new one did not take its own.
func (sw *switchover) tell(ctx context.Context) error {
	g, p, old := sw.g, sw.to, sw.from
	if old != nil {
		g.r.log.Infof(ctx, "plugin %s superseded by %s", old.describe(), p.describe())
		msg := "superseded, standing by until the successor is active"
		g.mu.Lock()
		switch keep, grace := g.standbyTerm(old); {
		case keep && grace > 0:
			msg = fmt.Sprintf("superseded, standing by for %s", grace)
		case keep:
			msg = "superseded, standing by while its pod runs"
		}
		g.mu.Unlock()
		if err := old.tellRole(ctx, api.PluginRole_PLUGIN_ROLE_STANDBY, p, msg); err != nil {
			old.shutdown(g.r.failureReason(err, api.ShutdownReason_SHUTDOWN_REASON_SUPERSEDED),
				fmt.Sprintf("did not take the standby role: %v", err), p)
		}
	}
	err := p.tellRole(ctx, api.PluginRole_PLUGIN_ROLE_ACTIVE, old, "active")
	if err == nil && p.isClosed() {
		err = fmt.Errorf("plugin %s closed before it became active", p.name())
	}
	if err != nil {
		return fmt.Errorf("did not take the active role: %w", err)
	}
	return nil
}

// tellRole tells an opted-in plugin its role, bounded by the request timeout.
func (p *plugin) tellRole(ctx context.Context, role api.PluginRole, peer *plugin, msg string) error {
	if !p.handsOver() || p.isClosed() {
		return nil
	}
	p.notices.Lock()
	defer p.notices.Unlock()
	if role == api.PluginRole_PLUGIN_ROLE_STANDBY && p.activeAgain() {
		return nil // decided before its reactivation, which told it ACTIVE
	}
	p.r.atFor(pointNotice, p)
	req := &api.RoleChangeRequest{Role: role, Message: msg}
	if peer != nil {
		req.PeerVersion, req.PeerInstance, req.PeerGeneration = peer.version, peer.instance, peer.generation
	}
	rctx, cancel := context.WithTimeout(ctx, getRequestTimeout())
	defer cancel()
	_, err := p.svc.RoleChange(rctx, req)
	if err = requestError(rctx, err); err != nil {
		p.r.log.Warnf(ctx, "plugin %s did not take role %s: %v", p.name(), role, err)
	}
	return err
}

// activeAgain tells whether p is active, as a standby is once reactivated.
func (p *plugin) activeAgain() bool {
	g := p.r.reg
	g.mu.Lock()
	defer g.mu.Unlock()
	return p.state == stateActive
}

// notJoined is a join's failure already logged and acted on where it
// happened (a switch's hold).
type notJoined struct{ err error }

func (e *notJoined) Error() string { return e.err.Error() }
func (e *notJoined) Unwrap() error { return e.err }

// pendingErr tells whether p may still become active: nil for a candidate or
// standby, errIdled for a member gone idle, else errDisplaced. g.mu is held.
func (g *registry) pendingErr(p *plugin) error {
	switch p.state {
	case stateCandidate:
		return nil
	case stateStandby:
		return standbyPending(p)
	case stateIdle:
		return errIdled
	}
	return errDisplaced
}
