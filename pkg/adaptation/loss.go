package adaptation

// Loss: who serves a slot next when one of its instances goes. An instance
// goes when it is disconnected or its connection closes, possibly during
// dispatch (remove, which takes only the registry's lock). What follows is
// decided by serveNext alone, from the kind of slot and what it holds; the
// first row that applies:
//
//	slot        lost was  the slot holds        who serves next, and how
//	group       any       idle members          the newest, if nobody joins and admission lets it
//	                                            switch: it joins under the gate (groupNext); if
//	                                            none does, as "other" below
//	opted-in    active    a standby             the standby, reactivated in an urgent hold queued
//	                                            now, before every event not in flight (startReactivation)
//	opted-in    active    a candidate joining   the candidate: its queued switch's hold is urged, or
//	                      from the ledger       an urgent hold is reserved for its switch, so events
//	                                            wait for it instead of reaching nobody (switchTo)
//	opted-in    active    nobody else           the idle members of the workload groups it took
//	                                            over, each group's newest (groupsServeAgain)
//	other       active    nobody else (a group: the opted-in instances it took over (handover
//	                      no member joins)      turned off) that stand by, each reactivated as
//	                                            above (standbysServeAgain)
//	otherwise                                   whoever joins next (a candidate under the gate
//	                                            switches as upstream's join does)

import "errors"

// remove takes a plugin out of its slot and out of event delivery, and
// decides who serves its slot next.
func (g *registry) remove(p *plugin) {
	g.mu.Lock()
	s := p.slot
	if s == nil || p.state == stateGone || p.state == stateConnected {
		g.mu.Unlock()
		return
	}
	wasActive := p.state == stateActive
	g.move(p, s, stateGone)
	g.serveNext(s, p, wasActive)
	g.mu.Unlock()

	if wasActive {
		g.r.log.Infof(g.r.ctx, "plugin %s removed", p.qualifiedName())
	}
}

// serveNext is the table above, for slot s that lost just left. g.mu is
// held.
func (g *registry) serveNext(s *slot, lost *plugin, wasActive bool) {
	switch {
	case g.closed:
	case s.group != "":
		g.groupNext(s)
		if wasActive && s.candidate == nil {
			g.standbysServeAgain(lost)
		}
	case !wasActive:
	case s.standby != nil:
		standby := s.standby
		s.stopGrace()
		g.startReactivation(standby, lost, lostWhy(lost))
	case s.candidate != nil && s.candidate.join == joinFromLedger && s.switching != nil:
		g.r.hold.urge(s.switching) // its switch is queued: it goes first
	case s.candidate != nil && s.candidate.join == joinFromLedger && s.reserved == nil:
		s.reserved = g.r.hold.enqueueUrgent()
	case s.candidate == nil && s.shared():
		g.groupsServeAgain(lost)
	case s.candidate == nil:
		g.standbysServeAgain(lost)
	}
}

// groupsServeAgain runs when p, an opted-in instance that was active, is
// gone and nobody of its slot serves next: each workload group whose members
// it took over (a later generation WithHandover after an annotated build on
// upstream's stub) has its newest idle member join again, as the group would
// had p never come. g.mu is held.
func (g *registry) groupsServeAgain(p *plugin) {
	for _, s := range g.groups {
		if s.active != nil || s.candidate != nil {
			continue
		}
		if q := g.newestIdle(s); q != nil && q.idx == p.idx && q.base == p.base {
			g.groupNext(s)
		}
	}
}

// groupNext makes the newest idle member of s the candidate and starts its
// join, a full Synchronize under the gate, if nobody is joining and
// admission would let it switch: it is newer than the active one or nobody
// is active (the newer rule), and no opted-in instance holds its name that
// it may not take over (beside: a later generation WithHandover took over
// from the group). g.mu is held. The member's second full Synchronize on
// its connection is one every upstream stub since v0.8.0 hands to the
// plugin's handler like the first (test/legacyhandover runs v0.8.0,
// v0.10.0 and v0.12.5): plugins reconcile as on a reconnect.
func (g *registry) groupNext(s *slot) {
	best := g.newestIdle(s)
	if g.closed || best == nil || s.candidate != nil {
		return
	}
	if _, err := g.decide(best, s, true); err != nil {
		if !errors.Is(err, errIdled) {
			g.r.log.Infof(g.r.ctx, "plugin %s stays connected without events: %v", g.policy.who(best), err)
		}
		return
	}
	g.move(best, s, stateCandidate)
	g.r.log.Infof(g.r.ctx, "plugin %s is synchronized again: no newer instance of its workload is active or joining", g.policy.who(best))
	if best.join != joinConfigured {
		return // its join, or its admit once configured, takes it from here
	}
	best.join = joinRunning
	g.r.wg.Add(1)
	g.r.trace(nil, pointReactivating, best)
	go func() {
		defer g.r.wg.Done()
		defer g.r.trace(nil, pointReactivated, best)
		_ = joinOf(g, best).run(g.r.ctx)
	}()
}

// newestIdle is the connected idle member of s with the highest
// generation; among members of one generation (a pod deleted and recreated
// by its controller) the last registered. One not configured yet is taken
// too (it joins once configured): an older one synchronized in the meantime
// would be switched to and then from at once. g.mu is held.
func (g *registry) newestIdle(s *slot) *plugin {
	var best *plugin
	for _, q := range s.idle {
		if q.isClosed() {
			continue
		}
		if best == nil || g.newer(q, best) || !g.newer(best, q) && q.seq > best.seq {
			best = q
		}
	}
	return best
}
