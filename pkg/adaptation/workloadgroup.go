package adaptation

// Workload groups: handover for plugins written for upstream, opted in by
// their DaemonSet instead of by their code.
//
// A plugin built on upstream's stub sends no handover feature, no instance
// id and no generation, and implements neither RoleChange nor a Shutdown
// that means anything: two connections of its name are two plugins, and
// both get every event (upstream's behaviour, kept for every such plugin by
// default). What the runtime can still verify is where each connection
// comes from (identity.go): the pod, its namespace, its controller,
// pod-template-generation and annotations. An operator who knows that two
// pods of one DaemonSet run one plugin says so on the pod template with
// HandoverAnnotation; the runtime then treats the connections of one name
// and index from pods of that workload as instances of one plugin, a
// workload group, of which exactly one receives events:
//
//   - who is newer is the pods' pod-template-generation, never the order of
//     connections: a rollback (a higher generation running an older binary)
//     takes over, a restarted older pod never does (admission's newer rule,
//     at registration and at the switch; refused by it, a member stays
//     idle);
//   - a newer instance joins as upstream's join does (join.go,
//     joinUnderGate: one full Synchronize from inside SyncFn under the
//     gate) and its switch is taken in the hold that SyncFn's call opened,
//     so no event reaches both instances or neither;
//   - the older instance is not disconnected (such a plugin exits when its
//     connection closes, and the kubelet restarts it): it stays, idle, with
//     no events and no timer, until its connection goes (its pod deleted);
//     its unsolicited updates are refused, naming the newer instance; so
//     too when a later generation's build WithHandover takes it over
//     (admission.go, legacyVictims);
//   - if the active instance goes, the newest idle one is synchronized
//     again, with a second full Synchronize under the gate, and switched
//     to: every upstream stub since v0.8.0 hands a second Synchronize on a
//     connection to the plugin's handler like the first (the stub keeps no
//     state about it; test/legacyhandover runs v0.8.0, v0.10.0 and
//     v0.12.5), where plugins reconcile as on a reconnect;
//   - if a candidate goes before its switch, an idle one newer than the
//     active one (a candidate it had displaced) joins in its place, so the
//     newest connected instance serves; an older one never does while a
//     newer one is active.
//   - the switch is every plugin's that did not opt in (switch.go, swap):
//     so an opted-in instance of the name and workload that a later
//     generation's member turns handover off for (a rollback to an
//     upstream-stub build, $NRI_PLUGIN_HANDOVER=off: admission.go,
//     turnsOff) is retired and told why, exactly as outside a group, and
//     one instance handles each event.
//
// No RoleChange and no Shutdown is ever sent to a member: upstream sends
// neither.

import (
	"errors"
	"fmt"
	"strings"
)

// HandoverAnnotation on a plugin's pod template (so on each of its pods,
// which the runtime sees as PodSandbox annotations) with the value
// HandoverWorkload tells the runtime that the connections of one plugin name
// and index from pods of this workload are instances of one plugin, of which
// one at a time receives events. An annotation rather than a label: it
// changes no selector. On the pod rather than the DaemonSet: the runtime
// sees pods only. The value names the rule, so that another one can be
// added.
const HandoverAnnotation = "nri.containerd.io/handover"

// HandoverWorkload is the value of HandoverAnnotation that turns workload
// groups on for the pod's plugins.
const HandoverWorkload = "workload"

// errIdled ends a member's join without disconnecting it: a newer instance
// of its workload is active or joining, and it stays connected, idle.
var errIdled = errors.New("a newer instance of its workload took over")

// groupKey is the workload group p belongs to: its index and name, its
// pod's namespace and workload (the resolver's). ok is false for every plugin that
// stays as upstream: not external, not opted in by its pod, a pod the
// runtime did not verify, or one without a pod-template-generation (who is
// newer could then only be guessed from the order of connections).
// g.mu is held.
func (g *registry) groupKey(p *plugin) (string, bool) {
	if !g.r.handover || p.kind != kindExternal || g.policy.resolver == nil || p.ident == nil || p.ident.place != PeerInPod {
		return "", false
	}
	pod := p.ident.pod
	switch {
	case pod.Handover == "":
		return "", false
	case pod.Handover != HandoverWorkload:
		g.r.log.Warnf(g.r.ctx, "plugin %s: pod %s/%s has %s=%q, which this runtime does not know (it accepts %q); it runs as upstream runs it",
			p.name(), pod.Namespace, pod.Name, HandoverAnnotation, pod.Handover, HandoverWorkload)
		return "", false
	case !pod.HasTemplateGeneration || pod.TemplateGeneration < 0:
		g.r.log.Warnf(g.r.ctx, "plugin %s: pod %s/%s has %s but no pod-template-generation label, so which instance is newer cannot be told; it runs as upstream runs it",
			p.name(), pod.Namespace, pod.Name, HandoverAnnotation)
		return "", false
	}
	return strings.Join([]string{p.idx, p.base, pod.Namespace, g.policy.resolver.Workload(pod)}, "\x00"), true
}

// inGroup tells whether p was placed in a workload group.
func (g *registry) inGroup(p *plugin) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return p.slot != nil && p.slot.group != ""
}

// newer tells whether member p takes precedence over member q: a higher
// pod-template-generation. g.mu is held.
func (g *registry) newer(p, q *plugin) bool {
	pg, _ := g.precedence(p)
	qg, _ := g.precedence(q)
	return pg > qg
}

// top is the group's newest instance that is active or joining: the
// candidate if there is one (it is newer than the active one), else the
// active one.
func (s *slot) top() *plugin {
	if s.candidate != nil {
		return s.candidate
	}
	return s.active
}

// placeInGroup puts a registering member into its group s as admission
// decided: idle if the newer rule idled it (idled), else as the candidate
// (it is newer than every instance active or joining; a pending candidate
// goes idle, still connected). g.mu is held.
func (g *registry) placeInGroup(p *plugin, s *slot, idled bool) {
	if idled {
		g.move(p, s, stateIdle)
		g.r.log.Infof(g.r.ctx, "plugin %s is not newer than %s of its workload: it stays connected and receives no events",
			g.who(p), g.who(s.top()))
		return
	}
	g.groups[s.group] = s
	if c := s.candidate; c != nil {
		g.move(c, s, stateIdle)
		g.r.log.Infof(g.r.ctx, "plugin %s is newer than %s, which had not taken over: that one stays connected and receives no events",
			g.who(p), g.who(c))
	}
	g.move(p, s, stateCandidate)
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
// from the group). g.mu is held.
func (g *registry) groupNext(s *slot) {
	best := g.newestIdle(s)
	if g.closed || best == nil || s.candidate != nil {
		return
	}
	if _, err := g.decide(best, s, true); err != nil {
		if !errors.Is(err, errIdled) {
			g.r.log.Infof(g.r.ctx, "plugin %s stays connected without events: %v", g.who(best), err)
		}
		return
	}
	g.move(best, s, stateCandidate)
	g.r.log.Infof(g.r.ctx, "plugin %s is synchronized again: no newer instance of its workload is active or joining", g.who(best))
	if best.join != joinConfigured {
		return // its join, or its admit once configured, takes it from here
	}
	best.join = joinRunning
	g.r.wg.Add(1)
	g.r.trace(nil, pointReactivating, best)
	go func() {
		defer g.r.wg.Done()
		defer g.r.trace(nil, pointReactivated, best)
		_ = g.join(g.r.ctx, best)
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

// groupMayUpdate decides whether member p may send unsolicited updates: the
// active one may, and a candidate while nobody is active (a fresh join, as
// upstream's). g.mu is held.
func (g *registry) groupMayUpdate(p *plugin, s *slot) error {
	switch {
	case s.active == p, s.active == nil && s.candidate == p:
		return nil
	case s.active == nil:
		return fmt.Errorf("plugin %s receives no events: no instance of its workload is active", g.who(p))
	case p.state == stateCandidate:
		return fmt.Errorf("plugin %s has not taken over from %s of its workload yet and may not update containers",
			g.who(p), g.who(s.active))
	}
	return fmt.Errorf("plugin %s was superseded by %s of its workload and receives no events; it may not update containers",
		g.who(p), g.who(s.active))
}

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
