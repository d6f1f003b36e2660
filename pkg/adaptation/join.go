package adaptation

// Joining: how a configured plugin becomes the active instance of its slot.
// Two ways, chosen once, when it joins (waysFromLedger):
//
//	under the gate   nobody opted-in serves its name: a fresh join (every
//	                 plugin written for upstream, the first instance of an
//	                 opted-in one), an opted-in instance taking over plugins
//	                 written for upstream, or one whose predecessor is gone.
//	                 Upstream's join: queue for the sync gate (new runtime
//	                 operations wait, so none bypasses the plugin), one full
//	                 Synchronize from inside the runtime's SyncFn, the switch.
//	from the ledger  an opted-in instance takes over from the active opted-in
//	                 instance of its name, and the ledger compared equal with
//	                 SyncFn last time (ledger.usable; compared once more
//	                 first if the gate is free at once). Otherwise it joins
//	                 under the gate. No gate and no SyncFn: it is
//	                 synchronized from the ledger (ledger.Snapshot) while its
//	                 predecessor keeps serving, if it takes delta rounds,
//	                 and the switch (switchTo) holds the dispatch for its
//	                 last round and the role notices only.
//
// Who may join, and into which slot, is decided at registration (screen,
// decide) and again at the switch (swap).

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/nri-handover/nri/api"
	"github.com/nri-handover/nri/pkg/adaptation/internal/ledger"
)

// preSwitchRounds bounds the delta rounds a takeover from the ledger sends
// before its switch: each brings the successor closer, so that the round in
// the hold carries only what changed during the last one.
const preSwitchRounds = 2

var errDisplaced = errors.New("displaced by a newer instance before it took over")

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

// joining is one plugin's way into event delivery, its steps in order:
// screen (admission at registration: its slot), admit (configured, its
// join starts), run (under the gate or from the ledger: waysFromLedger),
// its catch-up rounds, and the switch (switchTo, switchHeld). Its steps
// read and write the registry's slots under the registry's lock; who may
// join is admission's (decide), who is active the lifecycle's (move).
type joining struct {
	g *registry
	p *plugin
}

func joinOf(g *registry, p *plugin) *joining { return &joining{g: g, p: p} }

// screen places a registering plugin (registry.place), once the runtime
// placed its process if the rules need it (resolveIdentities), and
// disconnects a pending candidate it displaced.
func (j *joining) screen(ctx context.Context) error {
	g, p := j.g, j.p
	g.r.atFor(pointRegister, p)
	g.resolveIdentities(ctx, p)
	displaced, err := g.place(p)
	if err != nil {
		if p.handsOver() {
			g.r.recordHandover(p, "rejected", time.Now(), 0)
		}
		return err
	}
	if where, ok := g.placed(p); ok {
		g.r.log.Infof(ctx, "plugin %s admitted: %s, uid %d", p.describe(), where, p.cred.UID)
	}
	if displaced != nil {
		g.r.log.Infof(g.r.ctx, "plugin %s displaces %s before it took over", p.describe(), displaced.describe())
		g.r.recordHandover(displaced, "displaced", time.Now(), 0)
		displaced.shutdown(api.ShutdownReason_SHUTDOWN_REASON_SUPERSEDED, "a newer instance registered before this one took over", p)
	}
	return nil
}

// joinPhase is where a plugin's join is.
type joinPhase int

const (
	joinUnconfigured joinPhase = iota // registered, not configured yet
	joinConfigured                    // configured, no join running
	joinRunning                       // its join (join) runs, under the gate so far
	joinFromLedger                    // its join runs, from the ledger while its predecessor serves (joinsFromLedger)
	joinSwitched                      // its join runs, its switch completed (activate)
)

// switching tells whether a join runs and its switch has not completed: a
// predecessor standing by for p is reactivated because p failed to join,
// not because it left.
func (j joinPhase) switching() bool { return j == joinRunning || j == joinFromLedger }

// admit brings an external plugin, registered (and so placed: screen) and
// configured, into event delivery: its join, the same for every kind of
// plugin, but for a workload group's member that is idle (it joins once it
// is the next to serve: groupNext). On failure the plugin has been
// disconnected. Start brings up the others (startPlugins).
func (j *joining) admit(ctx context.Context) error {
	if !j.configured() {
		return nil
	}
	return j.run(ctx)
}

// configured records that p was configured and tells whether its join
// starts now: not for a member that is idle, or whose join started already
// (groupNext may start it here, once p is configured).
func (j *joining) configured() bool {
	g, p := j.g, j.p
	g.mu.Lock()
	defer g.mu.Unlock()
	if p.join == joinUnconfigured {
		p.join = joinConfigured
	}
	s := p.slot
	if s != nil && s.group != "" && p.state == stateIdle {
		g.groupNext(s)
	}
	run := p.join == joinConfigured && (s == nil || s.group == "" || p.state == stateCandidate)
	if run {
		p.join = joinRunning
	}
	return run
}

// join synchronizes p and switches to it, from the ledger or under the
// gate (waysFromLedger); if that fails p is disconnected. A member idled
// during its join (a newer one registered) stays connected, and joins once
// more if it was made the candidate again meanwhile (that one left).
func (j *joining) run(ctx context.Context) error {
	g, p := j.g, j.p
	for {
		start := time.Now()
		takeover := j.takeoverFrom()
		if takeover != nil {
			g.r.log.Infof(ctx, "plugin %s takes over from %s", p.describe(), j.describeTakeover(takeover))
		}
		var (
			updates []*api.ContainerUpdate
			err     error
		)
		var held time.Duration // how long its switch from the ledger held events
		fromLedger := j.waysFromLedger(ctx)
		if fromLedger {
			updates, held, err = j.fromLedger(ctx, takeover)
		} else {
			updates, err = j.underGate(ctx, takeover)
		}
		switch again := j.ended(err); {
		case again:
			continue
		case errors.Is(err, errIdled):
			g.r.log.Infof(ctx, "plugin %s stays connected without events: %v", p.name(), err)
			return nil
		case err != nil:
			return j.fail(start, err)
		}
		g.r.log.Infof(ctx, "plugin %s connected and synchronized", p.qualifiedName())
		if p.handsOver() {
			// Events waited for the switch's hold, from its queueing to its
			// release; under the gate, runtime operations waited for the whole
			// join (the queued writer keeps new ones out).
			wait := time.Since(start)
			if fromLedger {
				wait = held
			}
			g.r.recordHandover(p, "completed", start, wait)
		}
		g.r.applyUpdates(ctx, p, updates)
		g.r.recordSynchronized(p, len(updates))
		return nil
	}
}

// joinEnded tells whether p, idled by err, is to join again: it was made
// the candidate again meanwhile. Else its join is over.
func (j *joining) ended(err error) (again bool) {
	g, p := j.g, j.p
	g.mu.Lock()
	defer g.mu.Unlock()
	again = errors.Is(err, errIdled) && p.state == stateCandidate && !g.closed
	p.join = joinConfigured
	if again {
		p.join = joinRunning
	}
	return again
}

// waysFromLedger decides how p joins, once: from the ledger if it opted in,
// an opted-in instance of its slot serves its events meanwhile, and the
// ledger is exact as far as its comparisons with SyncFn tell (usable); the
// ledger is compared first if the sync gate is free at once.
func (j *joining) waysFromLedger(ctx context.Context) bool {
	g, p := j.g, j.p
	takesOver := func() bool {
		s := p.slot
		return s != nil && s.shared() && s.active != nil && s.active != p && s.candidate == p
	}
	g.mu.Lock()
	would := p.handsOver() && takesOver()
	g.mu.Unlock()
	if !would {
		return false
	}
	g.r.checkLedger(ctx)
	if !g.r.ledger.Usable() {
		g.r.log.Infof(ctx, "plugin %s joins under the sync gate: the runtime's state recorded is not known to be exact", p.describe())
		return false
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if !takesOver() {
		return false
	}
	p.join = joinFromLedger
	return true
}

// underGate is upstream's join: p is synchronized from inside the
// runtime's SyncFn under the sync gate, whose result also refreshes the
// ledger, and switched to before the gate opens, so the next runtime
// operation that takes BlockPluginSync after its Synchronize reaches it.
func (j *joining) underGate(ctx context.Context, takeover *api.Takeover) ([]*api.ContainerUpdate, error) {
	g, p := j.g, j.p
	r := g.r
	r.atFor(pointGate, p)
	var (
		grouped bool
		cur     *ledger.Cursor
		updates []*api.ContainerUpdate
		serr    error
		held    *holdTicket
		more    []*api.ContainerUpdate
	)
	defer func() {
		if cur != nil {
			cur.Close()
		}
	}()
	err := r.syncRound(ctx, gateRound{
		held: func() error {
			if err := j.pending(); err != nil {
				return err
			}
			grouped = g.inGroup(p)
			if p.deltaSync() {
				// Exits bypass the gate: what they change during the round
				// is told in the switch's delta round.
				cur = r.ledger.OpenCursor()
			}
			return nil
		},
		listing: func(ctx context.Context, pods []*api.PodSandbox, ctrs []*api.Container) []*api.ContainerUpdate {
			updates, serr = p.synchronize(ctx, pods, ctrs, takeover)
			if serr != nil || !p.handsOver() && !grouped || bugHoldAfterSyncFn {
				return nil
			}
			// The switch's hold is taken before SyncFn returns: the runtime
			// holds its own lock across SyncFn, as it does across every
			// event it relays, so no event passes between the state p was
			// given and its switch (an exit, which bypasses the gate,
			// included). A workload group's member switches from an older
			// instance here too.
			held = r.hold.enqueue()
			if serr = r.acquire(ctx, held); serr != nil {
				held = nil
			}
			return nil // p's updates are applied once it is active (applyUpdates)
		},
		synced: func(err error) error {
			if err != nil {
				err = fmt.Errorf("failed to take the runtime's snapshot: %w", err)
			} else {
				err = serr
			}
			r.atFor(pointSynced, p)
			if bugHoldAfterSyncFn && err == nil && (p.handsOver() || grouped) {
				held = r.hold.enqueue()
				if err = r.acquire(ctx, held); err != nil {
					held = nil
				}
			}
			if err != nil {
				if held != nil {
					r.release(held)
				}
				return err
			}
			// Switched before the gate opens: the next runtime operation
			// that takes BlockPluginSync after p's Synchronize reaches it.
			more, err = j.switchHeld(ctx, cur, takeover, held)
			return err
		},
	})
	if err != nil {
		return nil, err
	}
	return append(updates, more...), nil
}

// fromLedger synchronizes p from the ledger while its predecessor keeps
// serving, if p takes delta rounds (a plugin without them gets its one round
// in the switch's hold), and then switches to it.
func (j *joining) fromLedger(ctx context.Context, takeover *api.Takeover) ([]*api.ContainerUpdate, time.Duration, error) {
	g, p := j.g, j.p
	if !p.deltaSync() {
		return j.switchTo(ctx, nil, takeover)
	}
	pods, ctrs, cur, ok := g.r.ledger.Snapshot()
	if !ok {
		return nil, 0, errors.New("the runtime's state is not recorded")
	}
	defer cur.Close()
	updates, err := p.synchronize(ctx, pods, ctrs, takeover)
	for round := 0; err == nil && round < preSwitchRounds; round++ {
		var more []*api.ContainerUpdate
		var sent bool
		more, sent, err = j.catchUp(ctx, cur)
		updates = append(updates, more...)
		if !sent {
			break
		}
	}
	if err != nil {
		return nil, 0, err
	}
	more, held, err := j.switchTo(ctx, cur, takeover)
	return append(updates, more...), held, err
}

// catchUp sends p what the ledger recorded since cur, if anything, and
// moves cur past it; sent tells whether it sent a round.
func (j *joining) catchUp(ctx context.Context, cur *ledger.Cursor) (updates []*api.ContainerUpdate, sent bool, err error) {
	p := j.p
	d, ok := cur.Since()
	if !ok {
		return nil, false, errors.New("its record of the runtime's state was closed")
	}
	if d.Empty() {
		return nil, false, nil
	}
	updates, err = p.synchronizeDelta(ctx, d, nil)
	return updates, true, err
}

// takeoverFrom describes the instance p is about to replace, if any.
func (j *joining) takeoverFrom() *api.Takeover {
	g, p := j.g, j.p
	g.mu.Lock()
	defer g.mu.Unlock()
	s := p.slot
	if s == nil || !s.shared() {
		return nil
	}
	if a := s.active; a != nil {
		return a.asPredecessor()
	}
	if len(g.legacyVictims(p)) > 0 {
		return &api.Takeover{}
	}
	return nil
}

// asPredecessor describes p for its successor's Takeover. g.mu is held.
func (p *plugin) asPredecessor() *api.Takeover {
	return &api.Takeover{PredecessorVersion: p.version, PredecessorInstance: p.instance, PredecessorGeneration: p.generation,
		PredecessorPod: p.podIdentity()}
}

// pending tells whether p is still waiting to become active in its slot:
// nil if it is, else why not (pendingErr).
func (j *joining) pending() error {
	g, p := j.g, j.p
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.pendingErr(p)
}

// fail disconnects a plugin that could not join, with the reason.
func (j *joining) fail(start time.Time, err error) error {
	g, p := j.g, j.p
	if p.handsOver() {
		g.r.recordHandover(p, "failed", start, 0)
	}
	if nj := (*notJoined)(nil); errors.As(err, &nj) {
		return nj.err
	}
	err = fmt.Errorf("plugin %s not joined: %w", p.describe(), err)
	reason := g.r.syncFailureReason(err)
	if errors.Is(err, errDisplaced) {
		reason = api.ShutdownReason_SHUTDOWN_REASON_SUPERSEDED
		g.r.log.Infof(g.r.ctx, "%v", err)
	} else {
		g.r.log.Warnf(g.r.ctx, "%v", err)
	}
	// Logged once, here; the disconnect does not repeat it.
	p.disconnect(reason, errors.Unwrap(err).Error(), nil, false, true)
	return err
}

// syncFailureReason tells a plugin why joining failed.
func (r *Adaptation) syncFailureReason(err error) api.ShutdownReason {
	return r.failureReason(err, api.ShutdownReason_SHUTDOWN_REASON_SYNCHRONIZATION_FAILED)
}

// failureReason tells a plugin why a request to it failed, or fallback. A
// stopping runtime cancels every request, which is not the plugin's failure.
func (r *Adaptation) failureReason(err error, fallback api.ShutdownReason) api.ShutdownReason {
	if r.ctx.Err() != nil || errors.Is(err, errStopped) {
		return api.ShutdownReason_SHUTDOWN_REASON_RUNTIME_SHUTDOWN
	}
	if reason := shutdownReasonFor(err); reason != api.ShutdownReason_SHUTDOWN_REASON_UNSPECIFIED {
		return reason
	}
	return fallback
}

func (r *Adaptation) recordHandover(p *plugin, outcome string, start time.Time, wait time.Duration) {
	if m, ok := r.metrics.(HandoverMetrics); ok {
		m.RecordHandover(p.base, outcome, time.Since(start), wait)
	}
}

// applyUpdates applies the updates p's synchronization asked for, once it
// is active, as its UpdateContainers would be: past the holds queued
// meanwhile (kept for the release if a hold switches to p), and only while p
// may still update (a switch may have taken its place since).
func (r *Adaptation) applyUpdates(ctx context.Context, p *plugin, updates []*api.ContainerUpdate) {
	if len(updates) == 0 {
		return
	}
	deferred, err := r.passHolds(ctx, p, updates)
	switch {
	case deferred:
		return
	case err == nil:
		err = r.reg.mayUpdate(p)
	}
	if err != nil {
		r.log.Warnf(ctx, "dropping %d updates from plugin %s synchronization: %v", len(updates), p.name(), err)
		return
	}
	failed, err := r.updateContainers(ctx, updates)
	if err != nil || len(failed) > 0 {
		r.log.Warnf(ctx, "runtime failed to apply %d of %d updates from plugin %s synchronization: %v",
			len(failed), len(updates), p.name(), err)
	}
}

// describeTakeover names what p takes over, for the log.
func (j *joining) describeTakeover(t *api.Takeover) string {
	g, p := j.g, j.p
	if t.GetPredecessorVersion() == "" && t.GetPredecessorInstance() == "" && t.GetPredecessorGeneration() == 0 {
		return "the plugins of its name and index that do not support handover" + g.podsOfTakeover(p, t)
	}
	return describeInstance(t.GetPredecessorVersion(), t.GetPredecessorInstance(), t.GetPredecessorGeneration()) + g.podsOfTakeover(p, t)
}

// describeInstance names an instance by what is known of it, as describe
// does: an empty field is left out rather than shown as "".
func describeInstance(version, instance string, generation uint64) string {
	var parts []string
	if version != "" {
		parts = append(parts, "version "+version)
	}
	if instance != "" {
		parts = append(parts, "instance "+instance)
	}
	if generation != 0 {
		parts = append(parts, "generation "+strconv.FormatUint(generation, 10))
	}
	return strings.Join(parts, " ")
}
