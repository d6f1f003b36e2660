package adaptation

// Admission: who may become, and stay, an active plugin.
//
// This file is the one place that decides it. The same rules run twice:
//
//   - when a plugin registers (place), so that a plugin that would be
//     refused is not configured and synchronized for nothing;
//   - at its switch (swap, under the adaptation's lock), where the decision
//     takes effect: between the two other instances of the name may have
//     registered, become active or gone, and a rule that held at
//     registration must still hold here.
//
// Rules, in the order they are applied (docs/proposal.md, "Admission", has
// the same table with a test per row):
//
//	rule        applies to         refuses when
//	stopping    every plugin       the runtime is stopping, or the plugin disconnecting
//	builtin     opted-in           a builtin or pre-installed plugin has its name
//	beside      written for        an opted-in instance holding its name and index
//	            upstream           may supersede it (it would run beside it, or flap back),
//	                               unless it is a later rollout generation of that
//	                               instance's workload: then it takes over at its switch
//	                               (handover turned off for a rollout: turnsOff)
//	newer       a workload         the active instance of its group, or at registration the
//	            group's member     joining one, is of its pod-template-generation or newer
//	                               (newer): not disconnected, it stays idle
//	identity    opted-in, with     the runtime could not place its process (it exited, or
//	            the workload rule  its container is not listed yet): retried by restarting
//	supersede   opted-in           the supersede rules let it evict some instances of its
//	                               name's slot but not others, or none while one of them
//	                               runs in a pod of another workload (at registration,
//	                               where it chooses the lineage), or not the instances of
//	                               its slot (at the switch)
//	retired     opted-in           its lineage superseded its instance id
//	generation  opted-in           its rollout generation is lower than the active or (at
//	                               registration) pending instance's of its lineage, or than
//	                               a plugin written for upstream's that it would take over
//	                               (the pod's pod-template-generation with the workload rule)
//	downgrade   opted-in, with     its plugin version is lower than the active instance's
//	            WithRefuseDowngrades
//
// Who may supersede whom (maySupersede): with the workload rule on
// (identity, the default) an instance in a pod only one in a pod of the
// same workload, and no pod instance a host process or the reverse; between
// processes outside any pod, and everywhere with the rule off, the
// SupersedePolicy on credentials (supersede.go, same uid by default).
//
// Lineage: an opted-in instance shares the slot of its name only with
// instances it may supersede; if no slot of its name is such, it gets a slot
// of its own and runs beside the others, as two plugins of one name do under
// upstream NRI, unless the name is held by an instance in a pod whose
// workload it is not part of: then it is refused (a squatter beside a
// DaemonSet's plugin would act on every container a second time). A pod
// instance beside a host process of its name, which neither may supersede,
// runs beside it: a process on the host that registered first keeps no
// DaemonSet out. The policy is thus consulted before any
// precedence rule, and an instance nobody may supersede from (another user's,
// say) can neither take over nor keep a legitimate successor out: it is in
// another lineage. At its switch an opted-in instance takes over the plugins
// written for upstream with its name and index that it may supersede
// (victims).
//
// Workload groups: plugins written for upstream, opted in by their DaemonSet
// instead of their code. Such a plugin sends no handover feature, instance
// id or generation, and its RoleChange and Shutdown mean nothing: two
// connections of its name are two plugins, both served (upstream's
// behaviour, the default). What the runtime can verify is where each
// connection comes from (identity): its pod, namespace, controller,
// pod-template-generation and annotations. With HandoverAnnotation on the
// pod template, the connections of one name and index from pods of one
// workload (groupKey) are instances of one plugin, a group slot of which
// one receives events. Who is newer is the pods' pod-template-generation,
// never the order of connections: a rollback (a higher generation running
// an older binary) takes over, a restarted older pod never does. The newer
// row refuses an older member, at registration and at the switch, and
// leaves it idle rather than disconnected (such a plugin exits when its
// connection closes, and the kubelet restarts it): connected, no events,
// no timer, its updates refused (groupMayUpdate), until its pod goes. A
// newer member joins as upstream's join does, its switch taken in the hold
// its SyncFn call opened, so no event reaches both instances or neither;
// who serves when a member goes is serveNext's (groupNext). No RoleChange
// and no Shutdown is ever sent to a member: upstream sends neither.

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
)

// admissionRule is one row of the table above.
type admissionRule struct {
	name    string
	applies func(*plugin) bool // the newcomers the rule is about
	check   func(a *admission) error
}

func everyPlugin(*plugin) bool  { return true }
func optedIn(p *plugin) bool    { return p.handsOver() }
func notOptedIn(p *plugin) bool { return !p.handsOver() }

// admission is one evaluation of the rules for p.
type admission struct {
	g *registry
	p *plugin
	// s is an opted-in p's lineage's slot, nil if it has none yet; a
	// workload group member's group (the kind of slot decides what a
	// refusal makes of p: errIdled leaves a member idle).
	s        *slot
	atSwitch bool
}

var admissionRules = []admissionRule{
	{"stopping", everyPlugin, func(a *admission) error {
		switch {
		case a.g.closed:
			return errStopped
		case a.p.isClosed():
			return fmt.Errorf("plugin %s is disconnecting", a.p.name())
		}
		return nil
	}},
	{"builtin", optedIn, func(a *admission) error {
		for q := range a.g.all {
			if q.kind != kindExternal && q.base == a.p.base && q != a.p {
				return fmt.Errorf("plugin %s may not take over %s plugin %s", a.p.describe(), q.kind, q.name())
			}
		}
		return nil
	}},
	{"beside", notOptedIn, func(a *admission) error {
		for _, h := range a.g.besides(a.p) {
			if h.state != stateStandby && !a.g.turnsOff(a.p, h) {
				return fmt.Errorf("plugin %s does not support handover and may not run beside %s, which took over its name: "+
					"only a later rollout generation of its workload may replace it without handover",
					a.g.policy.who(a.p), a.g.policy.who(h))
			}
		}
		return nil
	}},
	{"newer", notOptedIn, func(a *admission) error {
		s := a.s
		if s == nil || s.group == "" {
			return nil
		}
		top := s.top()
		if a.atSwitch {
			top = s.active // a newer candidate takes over from p in turn
		}
		if top == nil || top == a.p || a.g.newer(a.p, top) {
			return nil
		}
		return fmt.Errorf("%w: %s", errIdled, a.g.policy.who(top))
	}},
	{"identity", optedIn, func(a *admission) error {
		p := a.p
		if !a.g.policy.workloadChecked(p, p) || p.identity().Place != PeerUnknown {
			return nil
		}
		why := "its container is not among those the runtime lists yet"
		if p.cgroupErr != nil {
			why = p.cgroupErr.Error()
		}
		return fmt.Errorf("plugin %s: the runtime cannot place its process (%s); it may register again once it can", p.describe(), why)
	}},
	{"supersede", optedIn, func(a *admission) error {
		if !a.atSwitch {
			var err error
			a.s, err = a.g.lineage(a.p)
			return err
		}
		for _, q := range a.s.members() {
			if q != a.p {
				if err := a.g.maySupersede(q, a.p); err != nil {
					return err
				}
			}
		}
		return nil
	}},
	{"retired", optedIn, func(a *admission) error {
		p := a.p
		if a.s != nil && a.s.standby != p && p.instance != "" && slices.Contains(a.s.retired, p.instance) {
			return fmt.Errorf("plugin %s was superseded and may not take over again while its successors are connected", p.describe())
		}
		return nil
	}},
	{"generation", optedIn, func(a *admission) error {
		p := a.p
		pg, pok := a.g.policy.precedence(p)
		// A plugin written for upstream that took over from this
		// workload with handover turned off is not taken over by an
		// older instance (a superseded pod restarted by the kubelet).
		for _, q := range a.g.legacyVictims(p) {
			if qg, qok := a.g.policy.precedence(q); pok && qok && pg < qg {
				return fmt.Errorf("plugin %s is older than %s (rollout generation %d < %d)",
					a.g.policy.who(p), a.g.policy.who(q), pg, qg)
			}
		}
		if a.s == nil {
			return nil
		}
		for _, inc := range []*plugin{a.s.active, a.s.candidate} {
			// At a switch only the instance it replaces counts: a newer
			// candidate takes over from it in turn (a standby's
			// reactivation must not wait for one).
			if inc == nil || inc == p || a.atSwitch && !bugGenerationVsCandidate && inc != a.s.active {
				continue
			}
			if ig, iok := a.g.policy.precedence(inc); pok && iok && pg < ig {
				return fmt.Errorf("plugin %s is older than %s (rollout generation %d < %d)",
					a.g.policy.who(p), a.g.policy.who(inc), pg, ig)
			}
		}
		return nil
	}},
	{"downgrade", optedIn, func(a *admission) error {
		if a.s == nil || !a.g.policy.refuseDowngrades {
			return nil
		}
		if act := a.s.active; act != nil && act != a.p && versionLess(a.p.version, act.version) {
			return fmt.Errorf("plugin %s would downgrade %s and downgrades are refused", a.p.describe(), act.describe())
		}
		return nil
	}},
}

// decide runs the rules that apply to p, at registration (s is chosen by
// the supersede rule, or is a member's workload group, and returned, with
// errIdled too) or at its switch (s is p's slot). g.mu is held.
func (g *registry) decide(p *plugin, s *slot, atSwitch bool) (*slot, error) {
	a := &admission{g: g, p: p, s: s, atSwitch: atSwitch}
	if !atSwitch && !p.handsOver() {
		if key, ok := g.groupKey(p); ok {
			if a.s = g.groups[key]; a.s == nil {
				a.s = &slot{group: key}
			}
		}
	}
	for _, r := range admissionRules {
		if !r.applies(p) {
			continue
		}
		if err := r.check(a); err != nil {
			if errors.Is(err, errIdled) {
				return a.s, err
			}
			return nil, err
		}
	}
	return a.s, nil
}

// place is admission at registration: it puts p into its slot as the
// candidate, or refuses it before it is configured and synchronized for
// nothing. The error becomes RegisterPlugin's reply and the plugin is
// disconnected with SHUTDOWN_REASON_REGISTRATION_REJECTED. A pending
// candidate that p displaces is returned, for the caller to disconnect.
func (g *registry) place(p *plugin) (displaced *plugin, err error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.seq++
	p.seq = g.seq // registration order: the last tie-breaker of dispatch order
	s, err := g.decide(p, nil, false)
	switch {
	case s != nil && s.group != "":
		g.placeInGroup(p, s, err != nil) // err is errIdled: decide returns no slot with any other
		return nil, nil
	case err != nil:
		return nil, err
	}
	g.warnLikelyRename(p)
	if !p.handsOver() {
		g.move(p, &slot{}, stateCandidate)
		return nil, nil
	}
	if s == nil {
		for _, o := range g.named[p.base] {
			if h := o.holder(); h != nil {
				g.r.log.Warnf(g.r.ctx, "plugin %s (uid %d) runs beside %s (uid %d): the supersede policy lets neither take over from the other",
					p.describe(), p.cred.UID, h.describe(), h.cred.UID)
			}
		}
		s = &slot{name: p.base}
		g.named[p.base] = append(g.named[p.base], s)
	}
	g.warnMistakes(p, s)
	displaced = s.candidate
	g.move(p, s, stateCandidate)
	if displaced != nil {
		g.move(displaced, s, stateGone)
	}
	if g.policy.grace > 0 && !p.deltaSync() && !p.inPod() {
		// Says what its author implements: the feature and, for this
		// module's stub, the interface that asks for it.
		g.r.log.Warnf(g.r.ctx, "plugin %s does not support delta rounds (api.FeatureDeltaSync; with nri-handover's stub: implement stub.SynchronizeRoundInterface): "+
			"outside a pod it will have no standby while its successor joins or after it is superseded", p.describe())
		g.r.recordHandover(p, "standby-unavailable", time.Now(), 0)
	}
	return displaced, nil
}

// warnMistakes warns about an opted-in p whose registration the rules admit
// but which is likely a mistake that would otherwise show only as failures
// later: an instance without identity, a successor that changes its index,
// and a renamed plugin running beside its old name. s is the slot p joins.
// g.mu is held.
func (g *registry) warnMistakes(p *plugin, s *slot) {
	ctx := g.r.ctx
	if p.instance == "" && p.generation == 0 {
		g.r.log.Warnf(ctx, "plugin %s opted into handover without an instance id or rollout generation: "+
			"a superseded instance that restarts cannot be told from a successor; set $NRI_PLUGIN_INSTANCE_ID and $NRI_PLUGIN_GENERATION (deploy/daemonset.yaml)",
			p.describe())
	}
	if h := s.holder(); h != nil && h.idx != p.idx {
		g.r.log.Warnf(ctx, "plugin %s takes over from %s with another index: the plugin moves from %s to %s in the invocation order",
			p.describe(), h.describe(), h.idx, p.idx)
	}
	if p.ident == nil || p.ident.place != PeerInPod {
		return
	}
	for q := range g.all {
		// Placed first: a plugin still registering is not named yet.
		if q.slot == nil || (q.state != stateActive && q.state != stateCandidate) || q.base == p.base || !q.handsOver() ||
			q.ident == nil || q.ident.place != PeerInPod || q.ident.pod.UID == p.ident.pod.UID ||
			supersedeSameWorkload(g.policy.resolver, q.identity(), p.identity()) != nil {
			continue
		}
		g.r.log.Warnf(ctx, "plugin %s (%s) runs beside %s (%s) of the same workload under another name: it does not take over, "+
			"both receive every event and conflicting adjustments fail container creation; if the plugin was renamed, keep its old name or roll the rename out without surge",
			p.describe(), p.identity().PodString(), q.describe(), q.identity().PodString())
	}
}

// warnLikelyRename warns when p arrives under a new name at the index of a
// plugin that opted into handover and is active: most likely its next
// version, renamed, which does not take over, so both receive every event
// and their adjustments conflict or both apply. Two pods' plugins are
// warnMistakes' (one workload); elsewhere nothing tells a rename from a
// second plugin at the index, hence a warning, not a refusal. g.mu is held.
func (g *registry) warnLikelyRename(p *plugin) {
	inPod := func(x *plugin) bool { return x.ident != nil && x.ident.place == PeerInPod }
	for q := range g.all {
		// state first: a plugin still registering (not placed) is not
		// named yet.
		if q == p || q.state != stateActive || q.idx != p.idx || q.base == p.base || !q.handsOver() || (inPod(p) && inPod(q)) {
			continue
		}
		g.r.log.Warnf(g.r.ctx, "plugin %s registers at the index of %s, which opted into handover and is active: "+
			"if it is that plugin renamed, it does not take over, both receive every event, and adjustments both make "+
			"conflict at container creation or both apply; keep the plugin's name from one version to the next",
			p.describe(), q.describe())
	}
}

// lineage is the slot of p's name whose every instance p may supersede, or
// nil if p may supersede no instance of its name and starts a lineage of its
// own. A slot of which p may supersede some instances but not others (the
// policy changed, or is not symmetric) refuses it: p could neither take over
// cleanly nor run beside them. g.mu is held.
func (g *registry) lineage(p *plugin) (*slot, error) {
	var held error // the name is held by a pod instance of another workload
	for _, s := range g.named[p.base] {
		var allowed int
		var refusal error
		for _, q := range s.members() {
			if err := g.maySupersede(q, p); err != nil {
				refusal = err
				if held == nil && holdsName(err) {
					held = err
				}
			} else {
				allowed++
			}
		}
		switch {
		case refusal == nil:
			return s, nil
		case allowed > 0:
			return nil, refusal
		}
	}
	return nil, held
}

// holdsName tells whether a refusal to supersede is the workload rule's with
// the predecessor in a pod: a pod's plugin holds its name against every
// process outside its workload.
func holdsName(err error) bool {
	var ir *IdentityRefusal
	return errors.As(err, &ir) && ir.Predecessor.Place == PeerInPod && ir.Successor.Place != PeerUnknown
}

// admitSwitch is admission at p's switch: the rules again, now that they
// take effect, and the plugins written for upstream that p takes over.
// g.mu is held.
func (g *registry) admitSwitch(p *plugin) (victims []*plugin, err error) {
	s := p.slot
	if !s.shared() {
		if _, err := g.decide(p, s, true); err != nil {
			return nil, err
		}
		return g.besides(p), nil
	}
	if _, err := g.decide(p, s, true); err != nil {
		return nil, err
	}
	return g.legacyVictims(p), nil
}

// besides lists the opted-in instances, standby included, that hold the
// name and index of p, a plugin written for upstream, and may supersede it:
// p may run only in their place (turnsOff), never beside them. g.mu is held.
func (g *registry) besides(p *plugin) []*plugin {
	if p.handsOver() || p.kind != kindExternal {
		return nil
	}
	var out []*plugin
	for _, s := range g.named[p.base] {
		for _, h := range s.members() {
			if h != p && h.idx == p.idx && g.maySupersede(p, h) == nil {
				out = append(out, h)
			}
		}
	}
	return out
}

// turnsOff tells whether p, which did not opt in, takes over the opted-in h
// at its switch: handover was turned off for a rollout of h's workload
// ($NRI_PLUGIN_HANDOVER=off on the new pods). p must be a later rollout
// generation of h's lineage (the pods' pod-template-generation where the
// runtime placed both in pods), so that a superseded instance restarted
// without handover is still refused and never flaps back. g.mu is held.
func (g *registry) turnsOff(p, h *plugin) bool {
	if g.maySupersede(h, p) != nil {
		return false
	}
	pg, pok := g.policy.precedence(p)
	hg, hok := g.policy.precedence(h)
	return pok && hok && pg > hg
}

// legacyVictims lists the active plugins written for upstream that an
// opted-in p takes over: those with its name and index that it may
// supersede. g.mu is held.
func (g *registry) legacyVictims(p *plugin) []*plugin {
	var out []*plugin
	for q := range g.all {
		if q != p && q.slot != nil && q.slot.active == q && !q.slot.shared() && // placed: its identity is written
			q.kind == kindExternal && q.idx == p.idx && q.base == p.base && g.maySupersede(q, p) == nil {
			out = append(out, q)
		}
	}
	slices.SortFunc(out, dispatchOrder)
	return out
}

// maySupersede decides whether successor may evict predecessor: the
// workload rule where it applies and either runs in a pod (identity),
// else the supersede policy on credentials (supersede.go). g.mu is held.
func (g *registry) maySupersede(predecessor, successor *plugin) error {
	if g.policy.workloadChecked(predecessor, successor) {
		pi, si := predecessor.identity(), successor.identity()
		if pi.Place != PeerOutsidePod || si.Place != PeerOutsidePod {
			if err := supersedeSameWorkload(g.policy.resolver, pi, si); err != nil {
				return fmt.Errorf("plugin %s (%s) may not supersede %s (%s): %w",
					successor.describe(), si.PodString(), predecessor.describe(), pi.PodString(), err)
			}
			return nil
		}
	}
	policy := g.policy.supersede
	if policy == nil {
		policy = SupersedeSameUID
	}
	if err := policy(predecessor.cred, successor.cred); err != nil {
		return fmt.Errorf("plugin %s (uid %d) may not supersede %s (uid %d): %w",
			successor.describe(), successor.cred.UID, predecessor.describe(), predecessor.cred.UID, err)
	}
	return nil
}

// who names an instance for a refusal: with the workload rule, where the
// runtime placed it too. g.mu is held.
func (pol *handoverPolicy) who(p *plugin) string {
	if pol.resolver == nil || p.ident == nil {
		return p.describe()
	}
	return p.describe() + " (" + p.identity().PodString() + ")"
}

// members are the instances in a slot.
func (s *slot) members() []*plugin {
	var out []*plugin
	for _, q := range []*plugin{s.active, s.candidate, s.standby} {
		if q != nil {
			out = append(out, q)
		}
	}
	return out
}

// dropSlot forgets an empty shared slot. g.mu is held.
func (g *registry) dropSlot(s *slot) {
	if s.group != "" && s.empty() && g.groups[s.group] == s {
		delete(g.groups, s.group)
		return
	}
	if !s.shared() || !s.empty() {
		return
	}
	ss := slices.DeleteFunc(g.named[s.name], func(x *slot) bool { return x == s })
	if len(ss) == 0 {
		delete(g.named, s.name)
	} else {
		g.named[s.name] = ss
	}
}

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

// newer tells whether member p takes precedence over member q: a higher
// pod-template-generation. g.mu is held.
func (g *registry) newer(p, q *plugin) bool {
	pg, _ := g.policy.precedence(p)
	qg, _ := g.policy.precedence(q)
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
			g.policy.who(p), g.policy.who(s.top()))
		return
	}
	g.groups[s.group] = s
	if c := s.candidate; c != nil {
		g.move(c, s, stateIdle)
		g.r.log.Infof(g.r.ctx, "plugin %s is newer than %s, which had not taken over: that one stays connected and receives no events",
			g.policy.who(p), g.policy.who(c))
	}
	g.move(p, s, stateCandidate)
}
