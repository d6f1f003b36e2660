package adaptation

// The lifecycle of a plugin instance in its slot, and the one function that
// moves an instance between states.
//
//	             place               switch      superseded (in a pod, or
//	(connected) ------> candidate ----------> active --------------------------> standby
//	                        |                   |  ^   grace > 0, standbyTerm)     |
//	                        |                   |  +---- reactivated (its ---------+
//	                        |                   |        successor was lost)       |
//	                        +------+------------+--------------+-------------------+
//	                               | refused, displaced, failed, superseded,
//	                               v disconnected, grace over
//	                              gone
//
// A workload group (admission's groupKey: plugins written for upstream whose
// DaemonSet opted them in by annotation) adds one state, idle: an older
// instance that stays connected without events and without a timer, for
// as long as its connection lives, because such a plugin has no notion of
// standing by and would exit (and be restarted) if disconnected.
//
//	            place (not newer)           superseded by a newer pod (a member,
//	                                        or an opted-in instance)
//	(connected) -----------------> idle <------------------------------- active
//	                                | ^                                     ^
//	           its active instance  | | a newer candidate, or the active    |
//	           lost: reactivated    v | newer than it at its switch         |
//	                             candidate ---------------------------------+
//	                                       switch (a full Synchronize under the gate)
//
// idle goes to gone only when its connection goes (its pod deleted).
//
// move alone writes a slot's candidate, active and standby instances, an
// opted-in instance's role, and the dispatch list: who receives events
// follows from the states and from nothing else.

import (
	"fmt"
	"slices"

	"github.com/nri-handover/nri/api"
)

// instanceState is where an instance is in its slot.
type instanceState int

const (
	stateConnected instanceState = iota // registered or registering, not placed
	stateCandidate                      // placed in its slot, joining
	stateActive                         // receives its slot's events
	stateStandby                        // superseded, kept for the grace period; no events
	stateGone                           // out of its slot for good
	stateIdle                           // a workload group's older instance: connected, no events, no timer
)

func (s instanceState) String() string {
	switch s {
	case stateConnected:
		return "connected"
	case stateCandidate:
		return "candidate"
	case stateActive:
		return "active"
	case stateStandby:
		return "standby"
	case stateGone:
		return "gone"
	case stateIdle:
		return "idle"
	}
	return fmt.Sprintf("state(%d)", int(s))
}

// moves are the allowed transitions; anything else is a bug.
var moves = map[instanceState][]instanceState{
	stateConnected: {stateCandidate, stateIdle, stateGone},
	stateCandidate: {stateActive, stateIdle, stateGone},
	stateActive:    {stateStandby, stateIdle, stateGone},
	stateStandby:   {stateActive, stateGone},
	stateIdle:      {stateCandidate, stateGone},
}

// move takes p to state to in slot s (the slot it is placed in, for a
// candidate). g.mu is held. It panics on a move the diagram does not have:
// callers check the state they expect first.
func (g *registry) move(p *plugin, s *slot, to instanceState) {
	from := p.state
	if from == to && to == stateGone {
		return
	}
	if !slices.Contains(moves[from], to) {
		panic(fmt.Sprintf("nri: plugin %s moved from %s to %s", p.name(), from, to))
	}
	wasActive := from == stateActive
	if from == stateCandidate {
		g.candidateLeft(s)
	}
	switch {
	case from == stateCandidate && s.candidate == p:
		s.candidate = nil
	case from == stateActive && s.active == p:
		s.active = nil
	case from == stateStandby && s.standby == p:
		s.leaveStandby()
	case from == stateIdle:
		s.idle = slices.DeleteFunc(s.idle, func(q *plugin) bool { return q == p })
	}
	p.state = to
	switch to {
	case stateCandidate:
		p.slot, s.candidate = s, p
	case stateActive:
		s.active = p
		p.setRole(api.PluginRole_PLUGIN_ROLE_ACTIVE)
	case stateStandby:
		s.standby = p
		p.setRole(api.PluginRole_PLUGIN_ROLE_STANDBY)
	case stateIdle:
		p.slot = s
		s.idle = append(s.idle, p)
	case stateGone:
		g.dropSlot(s)
	}
	if wasActive || to == stateActive {
		g.rebuild()
	}
}

func (p *plugin) setRole(role api.PluginRole) {
	if p.handsOver() {
		p.role = role
	}
}
