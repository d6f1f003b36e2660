package adaptation

// Membership: one model for every plugin.
//
// Every plugin instance sits in a slot, and the active instance of each slot
// receives events, slots ordered by index, name and registration. A plugin
// that did not opt into handover (every plugin written for upstream, every
// builtin and pre-installed plugin) has a slot of its own, so it runs exactly
// as under upstream NRI: 10-logger and 90-logger both receive every event, and
// so do two connections registering the same name and index. An external
// plugin that opted in (api.FeatureHandover) shares a slot with the other
// opted-in instances of its name that it may supersede (its lineage);
// admission (decide) says who may join, take over and stay, and the
// lifecycle (move) who of them is active.

import (
	"cmp"
	"errors"
	"fmt"
	"github.com/nri-handover/nri/pkg/adaptation/internal/ledger"
	"slices"
	"sync"
	"time"
)

// errStopped refuses plugins once the runtime is stopping.
var errStopped = errors.New("NRI runtime is stopping")

// registry is the single owner of plugin bookkeeping: which plugins exist,
// which slot each one is in, which ones receive events and in what order.
// Event dispatch only ever reads active().
type registry struct {
	r *Adaptation

	mu      sync.Mutex
	plugins []*plugin            // active, in dispatch order; replaced, never modified in place
	all     map[*plugin]struct{} // every plugin from creation until torn down
	named   map[string][]*slot   // the shared slots of opted-in plugins, by name (lineage)
	groups  map[string]*slot     // the workload groups of plugins written for upstream, by key (groupKey)
	closed  bool
	seq     uint64
	policy  handoverPolicy
}

func newRegistry(r *Adaptation) *registry {
	return &registry{r: r, all: map[*plugin]struct{}{}, named: map[string][]*slot{}, groups: map[string]*slot{}}
}

// slot is one place in the dispatch order. A slot of its own holds one
// plugin (as candidate while it joins, then active); a shared slot holds the
// instances of one opted-in plugin name. Only registry.move writes
// candidate, active and standby (moves).
type slot struct {
	name      string // shared slots only
	active    *plugin
	candidate *plugin // joining; at most one, a newer one displaces it
	standby   *plugin // superseded, kept for the grace period (standbyTerm)
	graceT    *time.Timer
	graceSeq  uint64 // names the current grace timer; stopGrace moves it on
	// resume is where the standby's knowledge of the runtime's state ends:
	// if it is reactivated, it is told what changed since (a ledger.Cursor).
	resume *ledger.Cursor
	// reserved holds the dispatch for the candidate while nobody serves the
	// slot (the active instance was lost during the candidate's join); the
	// candidate's switch uses it (switchTo).
	reserved *holdTicket
	// switching is the hold ticket of the candidate's switch, queued or
	// held: made urgent if the active instance is lost meanwhile.
	switching *holdTicket
	// retired lists the instance ids this slot superseded, newest last. They
	// are refused while the slot lives (a superseded pod restarted by the
	// kubelet must not flap back) and forgotten with it.
	retired []string
	// group is the key of a workload group of plugins written for upstream
	// (groupKey), "" for any other slot; idle are its older
	// instances, connected and without events.
	group string
	idle  []*plugin
}

// maxRetired bounds the instance ids a slot remembers: one per rollout is
// needed only until the superseded pod is gone.
const maxRetired = 16

func (s *slot) shared() bool { return s.name != "" }

func (s *slot) empty() bool {
	return s.active == nil && s.candidate == nil && s.standby == nil && len(s.idle) == 0
}

func (s *slot) retire(id string) {
	if id == "" || slices.Contains(s.retired, id) {
		return
	}
	s.retired = append(s.retired, id)
	if n := len(s.retired) - maxRetired; n > 0 {
		s.retired = slices.Delete(s.retired, 0, n)
	}
}

// holder is the instance that holds a shared slot's name: the active one, or
// the candidate about to take over.
func (s *slot) holder() *plugin {
	if s.active != nil {
		return s.active
	}
	return s.candidate
}

// track registers a new plugin object so that Stop can find it.
func (g *registry) track(p *plugin) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed {
		return errStopped
	}
	g.seq++
	p.seq = g.seq
	g.all[p] = struct{}{}
	return nil
}

// untrack forgets a torn-down plugin.
func (g *registry) untrack(p *plugin) {
	g.mu.Lock()
	defer g.mu.Unlock()
	delete(g.all, p)
}

// tracked lists every plugin not yet torn down.
func (g *registry) tracked() []*plugin {
	g.mu.Lock()
	defer g.mu.Unlock()
	ps := make([]*plugin, 0, len(g.all))
	for p := range g.all {
		ps = append(ps, p)
	}
	return ps
}

// close refuses any further plugin.
func (g *registry) close() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.closed = true
}

// active returns the plugins receiving events, in dispatch order. The slice
// must not be modified. Event dispatch calls it under the adaptation's lock.
func (g *registry) active() []*plugin {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.plugins
}

// mayUpdate decides whether a plugin may send unsolicited container updates:
// any registered plugin, except an opted-in instance that is not the active
// one of its name.
func (g *registry) mayUpdate(p *plugin) error {
	p.mu.Lock()
	conn := p.conn
	p.mu.Unlock()
	switch {
	case conn == connClosing:
		return fmt.Errorf("plugin %s is disconnecting", p.name())
	case conn != connRegistered && p.kind != kindBuiltin:
		return errors.New("plugin is not registered")
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	s := p.slot
	if s != nil && s.group != "" {
		return g.groupMayUpdate(p, s)
	}
	if s == nil || !s.shared() || s.active == p {
		return nil
	}
	if s.active == nil {
		return fmt.Errorf("plugin %s is not the active instance of %q", p.describe(), s.name)
	}
	if s.standby == p || slices.Contains(s.retired, p.instance) {
		return fmt.Errorf("plugin %s was superseded by %s and may not update containers", p.describe(), s.active.describe())
	}
	return fmt.Errorf("plugin %s is not the active instance of %q (%s is)", p.describe(), s.name, s.active.describe())
}

// rebuild recomputes the dispatch list from the slots. g.mu is held.
func (g *registry) rebuild() {
	var ps []*plugin
	for p := range g.all {
		if p.slot != nil && p.slot.active == p {
			ps = append(ps, p)
		}
	}
	slices.SortFunc(ps, dispatchOrder)
	g.plugins = ps
	g.r.metrics.UpdatePluginCount(len(ps))
}

func (g *registry) logOrder(plugins []*plugin) {
	g.r.log.Infof(g.r.ctx, "plugin invocation order:")
	for i, p := range plugins {
		extra := ""
		if p.isValidator() {
			extra = " (validator)"
		}
		g.r.log.Infof(g.r.ctx, "  #%d: %s%s", i+1, p.qualifiedName(), extra)
	}
}

// dispatchOrder orders plugins by index, then name, then registration: the
// order is total and the same on every run with the same plugins.
func dispatchOrder(a, b *plugin) int {
	return cmp.Or(
		cmp.Compare(a.idx, b.idx),
		cmp.Compare(a.base, b.base),
		cmp.Compare(a.seq, b.seq),
	)
}

// candidateLeft ends what the slot kept for a candidate that left that state
// (switched, displaced, gone): a hold reserved for it is released, and its
// switch's ticket, which its own switch releases, is no longer the one a
// loss urges: urged, a stale ticket ends at once and lets events reach
// nobody while the next candidate joins. A displaced candidate leaves after
// the newcomer took its place, before the newcomer has a ticket. g.mu is
// held.
func (g *registry) candidateLeft(s *slot) {
	if !bugStaleSwitchTicket {
		s.switching = nil
	}
	if t := s.reserved; t != nil {
		s.reserved = nil
		g.r.release(t)
	}
}

// inGroup tells whether p was placed in a workload group.
func (g *registry) inGroup(p *plugin) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return p.slot != nil && p.slot.group != ""
}

// groupMayUpdate decides whether member p may send unsolicited updates: the
// active one may, and a candidate while nobody is active (a fresh join, as
// upstream's). g.mu is held.
func (g *registry) groupMayUpdate(p *plugin, s *slot) error {
	switch {
	case s.active == p, s.active == nil && s.candidate == p:
		return nil
	case s.active == nil:
		return fmt.Errorf("plugin %s receives no events: no instance of its workload is active", g.policy.who(p))
	case p.state == stateCandidate:
		return fmt.Errorf("plugin %s has not taken over from %s of its workload yet and may not update containers",
			g.policy.who(p), g.policy.who(s.active))
	}
	return fmt.Errorf("plugin %s was superseded by %s of its workload and receives no events; it may not update containers",
		g.policy.who(p), g.policy.who(s.active))
}
