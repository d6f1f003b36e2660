package adaptation

import (
	"fmt"
	"slices"
	"testing"

	"github.com/nri-handover/nri/api"
)

// Every pair of states, moved by registry.move: the moves the lifecycle's
// diagram draws succeed and leave the instance where its new state says
// (its slot's field, its role, the dispatch list); every other move panics
// and changes nothing. Gone to gone is no move: an instance removed twice.
func TestLifecycleMoves(t *testing.T) {
	states := []instanceState{stateConnected, stateCandidate, stateActive, stateStandby, stateGone, stateIdle}
	allowed := map[[2]instanceState]bool{
		{stateConnected, stateCandidate}: true, // placed
		{stateConnected, stateIdle}:      true, // placed in a workload group, not newer
		{stateConnected, stateGone}:      true, // refused
		{stateCandidate, stateActive}:    true, // switched
		{stateCandidate, stateIdle}:      true, // a newer one came, or the active one is newer
		{stateCandidate, stateGone}:      true, // displaced, failed, disconnected
		{stateActive, stateStandby}:      true, // superseded, with a grace
		{stateActive, stateIdle}:         true, // superseded by a newer pod of its group
		{stateActive, stateGone}:         true, // superseded, disconnected
		{stateStandby, stateActive}:      true, // reactivated: its successor was lost
		{stateStandby, stateGone}:        true, // grace over, disconnected
		{stateIdle, stateCandidate}:      true, // its group's active instance lost
		{stateIdle, stateGone}:           true, // its pod deleted
		{stateGone, stateGone}:           true,
	}
	for _, from := range states {
		for _, to := range states {
			t.Run(fmt.Sprintf("%s to %s", from, to), func(t *testing.T) {
				g := testRegistry(handoverPolicy{})
				p := g.optedIn("10", "p", "a", 1, "v1")
				s := &slot{name: "10-p"}
				g.named[s.name] = []*slot{s}
				p.state, p.slot = from, s
				switch from {
				case stateCandidate:
					s.candidate = p
				case stateActive:
					s.active = p
				case stateStandby:
					s.standby = p
				case stateIdle:
					s.idle = []*plugin{p}
				}

				panicked := func() (panicked bool) {
					defer func() { panicked = recover() != nil }()
					g.mu.Lock()
					defer g.mu.Unlock()
					g.move(p, s, to)
					return false
				}()

				if !allowed[[2]instanceState{from, to}] {
					if !panicked {
						t.Fatalf("moved from %s to %s, which the lifecycle does not have", from, to)
					}
					if p.state != from {
						t.Errorf("a refused move left the instance %s, want %s", p.state, from)
					}
					return
				}
				if panicked {
					t.Fatalf("the move from %s to %s panicked", from, to)
				}
				if p.state != to {
					t.Fatalf("state %s, want %s", p.state, to)
				}
				in := map[instanceState]bool{
					stateCandidate: s.candidate == p,
					stateActive:    s.active == p,
					stateStandby:   s.standby == p,
					stateIdle:      slices.Contains(s.idle, p),
				}
				for st, there := range in {
					if there != (st == to) {
						t.Errorf("in %s: the slot's %s instance is it: %v", to, st, there)
					}
				}
				if got := slices.Contains(g.active(), p); got != (to == stateActive) {
					t.Errorf("in %s: dispatched to: %v", to, got)
				}
				switch to {
				case stateActive:
					if p.role != api.PluginRole_PLUGIN_ROLE_ACTIVE {
						t.Errorf("role %s, want active", p.role)
					}
				case stateStandby:
					if p.role != api.PluginRole_PLUGIN_ROLE_STANDBY {
						t.Errorf("role %s, want standby", p.role)
					}
				case stateGone:
					if _, kept := g.named[s.name]; kept && from != stateGone {
						t.Errorf("the emptied slot is still known by its name")
					}
				}
			})
		}
	}
}
