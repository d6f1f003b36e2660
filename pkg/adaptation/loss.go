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
//	                                            now, before every event not in flight (standby.go)
//	opted-in    active    a candidate joining   the candidate: its queued switch's hold is urged, or
//	                      from the ledger       an urgent hold is reserved for its switch, so events
//	                                            wait for it instead of reaching nobody (switch.go)
//	opted-in    active    nobody else           the idle members of the workload groups it took
//	                                            over, each group's newest (groupsServeAgain)
//	other       active    nobody else (a group: the opted-in instances it took over (handover
//	                      no member joins)      turned off) that stand by, each reactivated as
//	                                            above (standbysServeAgain)
//	otherwise                                   whoever joins next (a candidate under the gate
//	                                            switches as upstream's join does)

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
