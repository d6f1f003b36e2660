package adaptation

// Plugin handover: one small state machine per plugin name.
//
// Instances of a plugin share its name (the index may differ: a successor takes
// its own place in the order). Per name, a slot holds at most
//
//	active    the instance receiving the plugin's events
//	candidate a newcomer synchronizing to take over (at most one: a newer one displaces it)
//	standby   the superseded instance, kept silent for the grace period in case the successor fails
//
// and the instances it retired. An instance moves
//
//	candidate --commit--> active --superseded--> standby --grace over--> closed
//	    |                   |                       |
//	    +--fails--> closed   +--disconnects--> closed +--successor lost--> (re-sync) active
//
// The one place where the event stream switches is commit, which runs under
// the adaptation's lock (so it falls between two events) and the sync gate (so
// no runtime operation is half done). Everything slow happens outside both: a
// handover-capable candidate is synchronized with a snapshot while the old
// instance keeps handling events; the commit then sends it only what changed
// since that snapshot (a delta round) and swaps it in.
//
// Who may take over (decided at registration, before any synchronization):
//   - an instance the slot retired may not come back while its successor lives
//     (a superseded pod restarted by the kubelet must not flap back);
//   - a lower rollout generation never displaces a higher one;
//   - with WithRefuseDowngrades, a lower plugin version never displaces a higher one;
//   - otherwise the newest registration wins: it displaces a pending candidate,
//     and the active instance at its commit.

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/nri-handover/nri/api"
)

// handoverPolicy is what the runtime chose about handover.
type handoverPolicy struct {
	grace            time.Duration // how long a superseded instance stays as a standby
	refuseDowngrades bool
}

// WithPluginHandover turns handover between instances of the same plugin name
// on (the default) or off. Off keeps upstream's behaviour: every registered
// instance receives every event.
func WithPluginHandover(enabled bool) Option {
	return func(r *Adaptation) error {
		r.handover = enabled
		return nil
	}
}

// WithStandbyGrace keeps a superseded handover-capable instance connected,
// without events, for d after the switch. If its successor disconnects within
// d, the standby is re-synchronized and becomes active again. Zero (the
// default) disconnects the superseded instance right after the switch.
func WithStandbyGrace(d time.Duration) Option {
	return func(r *Adaptation) error {
		if d < 0 {
			return fmt.Errorf("invalid standby grace period %s", d)
		}
		r.reg.policy.grace = d
		return nil
	}
}

// WithRefuseDowngrades refuses a newcomer whose plugin version is lower than
// the active instance's. Rollbacks then need the old instance removed first.
func WithRefuseDowngrades() Option {
	return func(r *Adaptation) error {
		r.reg.policy.refuseDowngrades = true
		return nil
	}
}

// HandoverMetrics is implemented by a Metrics that also wants handover
// measurements. It is optional so that upstream-shaped Metrics keep working.
type HandoverMetrics interface {
	// RecordHandover reports one handover attempt of plugin: its outcome
	// ("completed", "rejected", "failed", "displaced", "reactivated"), how
	// long it took from registration, and how long runtime events waited for
	// its commit.
	RecordHandover(plugin, outcome string, duration, eventWait time.Duration)
}

// slot holds the instances of one plugin name.
type slot struct {
	name      string
	active    *plugin
	candidate *plugin
	standby   *plugin
	graceT    *time.Timer
	// retired maps the instance id of a superseded instance to its successor;
	// entries live as long as that successor.
	retired map[string]*plugin
}

func (g *registry) slotOf(name string) *slot {
	s, ok := g.slots[name]
	if !ok {
		s = &slot{name: name, retired: map[string]*plugin{}}
		g.slots[name] = s
	}
	return s
}

// capable tells whether the plugin speaks the handover protocol.
func (p *plugin) capable() bool {
	return p.r.handover && api.HasFeature(p.features, api.FeatureHandover)
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

// claim decides whether p may take over its name and makes it the candidate.
// It returns the candidate p displaced, to be disconnected by the caller.
func (g *registry) claim(p *plugin) (displaced *plugin, err error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed {
		return nil, errStopped
	}
	s := g.slotOf(p.base)
	if p.instance != "" {
		if succ, ok := s.retired[p.instance]; ok {
			return nil, fmt.Errorf("plugin %s was superseded by %s and may not take over again while it is connected",
				p.describe(), succ.describe())
		}
	}
	for _, inc := range []*plugin{s.active, s.candidate} {
		if inc != nil && p.generation != 0 && inc.generation != 0 && p.generation < inc.generation {
			return nil, fmt.Errorf("plugin %s is older than %s (rollout generation %d < %d)",
				p.describe(), inc.describe(), p.generation, inc.generation)
		}
	}
	if a := s.active; a != nil && g.policy.refuseDowngrades && versionLess(p.version, a.version) {
		return nil, fmt.Errorf("plugin %s would downgrade %s and downgrades are refused", p.describe(), a.describe())
	}
	displaced, s.candidate = s.candidate, p
	return displaced, nil
}

// screenHandover is admission control under the handover rules: p becomes
// its name's candidate or is refused. A candidate it displaces is told so.
func (g *registry) screenHandover(p *plugin) error {
	displaced, err := g.claim(p)
	if err != nil {
		g.recordHandover(p, "rejected", time.Now(), 0)
		return err
	}
	if displaced != nil {
		g.r.log.Infof(g.r.ctx, "plugin %s displaces %s before it took over", p.describe(), displaced.describe())
		g.recordHandover(displaced, "displaced", time.Now(), 0)
		displaced.shutdown(api.ShutdownReason_SHUTDOWN_REASON_SUPERSEDED, "a newer instance registered before this one took over", p)
	}
	return nil
}

// takeoverFrom describes the instance p is about to replace, if any.
func (g *registry) takeoverFrom(p *plugin) *api.Takeover {
	g.mu.Lock()
	defer g.mu.Unlock()
	if a := g.slotOf(p.base).active; a != nil {
		return &api.Takeover{PredecessorVersion: a.version, PredecessorInstance: a.instance, PredecessorGeneration: a.generation}
	}
	return nil
}

// admitHandover brings p in under the handover rules. The caller has
// registered and configured p; on error p has been disconnected.
func (g *registry) admitHandover(ctx context.Context, p *plugin) error {
	r := g.r
	start := time.Now()
	if p.kind == kindBuiltin { // others were screened when they registered
		if err := g.screenHandover(p); err != nil {
			<-p.shutdown(api.ShutdownReason_SHUTDOWN_REASON_REGISTRATION_REJECTED, err.Error(), nil)
			return err
		}
	}
	takeover := g.takeoverFrom(p)
	if takeover != nil {
		r.log.Infof(ctx, "plugin %s takes over from version %q instance %q", p.describe(),
			takeover.PredecessorVersion, takeover.PredecessorInstance)
	}

	// Phase 1, no locks: the old instance keeps handling events meanwhile.
	var (
		base    *snapshot
		updates []*api.ContainerUpdate
		err     error
	)
	if p.capable() {
		if base, err = g.snapshot(ctx); err == nil {
			updates, err = p.synchronize(ctx, base.pods, base.ctrs, takeover)
			base.encode()
		}
		if err != nil {
			return g.failCandidate(p, start, err)
		}
	}

	// Phase 2: runtime operations wait from here until the switch.
	if err := r.syncGate.Lock(ctx); err != nil {
		g.dropCandidate(p)
		p.shutdown(api.ShutdownReason_SHUTDOWN_REASON_RUNTIME_SHUTDOWN, "runtime is shutting down", nil)
		return fmt.Errorf("plugin %s not synchronized: %w", p.name(), err)
	}
	waitStart := time.Now()
	more, err := g.catchUp(ctx, p, base, takeover)
	if err != nil {
		r.syncGate.Unlock()
		return g.failCandidate(p, start, err)
	}
	updates = append(updates, more...)

	r.Lock()
	old, retiredStandby, err := g.commitHandover(p)
	r.Unlock()
	r.syncGate.Unlock()
	wait := time.Since(waitStart)
	if err != nil {
		return g.failCandidate(p, start, err)
	}

	g.afterSwitch(ctx, p, old, retiredStandby)
	g.recordHandover(p, "completed", start, wait)
	g.applyUpdates(ctx, p, updates)
	return nil
}

// catchUp brings p up to date with the runtime while the sync gate is held: a
// capable plugin gets what changed since its phase 1 snapshot, a legacy one
// the full snapshot, as upstream does.
func (g *registry) catchUp(ctx context.Context, p *plugin, base *snapshot, takeover *api.Takeover) ([]*api.ContainerUpdate, error) {
	if base == nil {
		now, err := g.snapshot(ctx)
		if err != nil {
			return nil, err
		}
		return p.synchronize(ctx, now.pods, now.ctrs, takeover)
	}
	d, err := g.changesSince(ctx, base)
	if err != nil {
		return nil, err
	}
	if d.empty() {
		return nil, nil
	}
	return p.synchronizeDelta(ctx, d)
}

// commitHandover is the switch. The caller holds the adaptation's lock and
// the sync gate: no event is in flight and no runtime operation half done.
func (g *registry) commitHandover(p *plugin) (old, retiredStandby *plugin, err error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	s := g.slotOf(p.base)
	switch {
	case g.closed:
		return nil, nil, errStopped
	case p.isClosed():
		return nil, nil, fmt.Errorf("plugin %s closed before taking over", p.name())
	case s.candidate != p:
		return nil, nil, fmt.Errorf("plugin %s was displaced by a newer instance", p.name())
	}
	old, s.active, s.candidate = s.active, p, nil
	p.role = api.PluginRole_PLUGIN_ROLE_ACTIVE
	if s.standby != nil { // a standby from an earlier switch, possibly being reactivated
		retiredStandby, s.standby = s.standby, nil
		s.stopGrace()
	}
	if old != nil {
		if old.instance != "" {
			s.retired[old.instance] = p
		}
		if g.policy.grace > 0 && old.capable() {
			s.standby, old.role = old, api.PluginRole_PLUGIN_ROLE_STANDBY
			s.graceT = time.AfterFunc(g.policy.grace, func() { g.graceOver(s, old) })
		}
	}
	g.rebuild()
	return old, retiredStandby, nil
}

// afterSwitch tells the instances involved, outside all locks. The old
// instance hears it is superseded (and gets to acknowledge, bounded by the
// shutdown timeout) before the new one hears it is active, so a plugin that
// keeps state on the host hands it over cleanly.
func (g *registry) afterSwitch(ctx context.Context, p, old, retiredStandby *plugin) {
	if retiredStandby != nil {
		retiredStandby.shutdown(api.ShutdownReason_SHUTDOWN_REASON_SUPERSEDED, "a newer instance took over while this one stood by", p)
	}
	if old != nil {
		g.r.log.Infof(ctx, "plugin %s superseded by %s", old.describe(), p.describe())
		if g.isStandby(old) {
			g.tellRole(ctx, old, api.PluginRole_PLUGIN_ROLE_STANDBY, p,
				fmt.Sprintf("superseded, standing by for %s", g.policy.grace))
		} else {
			<-old.shutdown(api.ShutdownReason_SHUTDOWN_REASON_SUPERSEDED, "superseded by "+p.describe(), p)
		}
	}
	g.tellRole(ctx, p, api.PluginRole_PLUGIN_ROLE_ACTIVE, old, "active")
}

func (g *registry) isStandby(p *plugin) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.slotOf(p.base).standby == p
}

// graceOver retires a standby whose successor survived the grace period.
func (g *registry) graceOver(s *slot, p *plugin) {
	g.mu.Lock()
	if s.standby != p {
		g.mu.Unlock()
		return
	}
	s.standby, s.graceT = nil, nil
	succ := s.active
	g.mu.Unlock()
	p.shutdown(api.ShutdownReason_SHUTDOWN_REASON_SUPERSEDED, "standby grace period over", succ)
}

func (s *slot) stopGrace() {
	if s.graceT != nil {
		s.graceT.Stop()
		s.graceT = nil
	}
}

// vacate takes p out of its slot when it leaves. It returns the standby to
// reactivate when p was the active instance and one is waiting. g.mu is held.
func (g *registry) vacate(p *plugin) (reactivate *plugin) {
	s, ok := g.slots[p.base]
	if !ok {
		return nil
	}
	switch p {
	case s.candidate:
		s.candidate = nil
	case s.standby:
		s.standby = nil
		s.stopGrace()
	case s.active:
		s.active = nil
		for id, succ := range s.retired {
			if succ == p {
				delete(s.retired, id)
			}
		}
		if s.standby != nil && !g.closed {
			reactivate = s.standby
			s.stopGrace()
		}
	}
	return reactivate
}

// reactivate makes a standby active again after its successor went away. It
// synchronizes it fully with runtime operations blocked, so that no event
// passes between the successor's loss and the standby's return.
//
// The caller enqueued ticket on the sync gate when it noticed the loss, so no
// runtime operation starts between the loss and the re-synchronization.
func (g *registry) reactivate(p, lost *plugin, ticket *gateTicket) {
	r := g.r
	ctx := r.ctx
	start := time.Now()
	if err := r.syncGate.lockTicket(ctx, ticket); err != nil {
		return
	}
	waitStart := time.Now()
	takeover := &api.Takeover{PredecessorVersion: lost.version, PredecessorInstance: lost.instance,
		PredecessorGeneration: lost.generation, Reactivation: true}
	var updates []*api.ContainerUpdate
	// No role notice may reach p between its re-synchronization and the
	// commit: a STANDBY still on its way from the earlier switch would
	// otherwise arrive after the re-sync and contradict it.
	p.roleMu.Lock()
	now, err := g.snapshot(ctx)
	if err == nil {
		updates, err = p.synchronize(ctx, now.pods, now.ctrs, takeover)
	}
	if err == nil {
		r.Lock()
		g.mu.Lock()
		s := g.slotOf(p.base)
		switch {
		case g.closed || p.isClosed() || s.standby != p:
			err = fmt.Errorf("plugin %s left before it was reactivated", p.name())
		case s.active != nil:
			err = fmt.Errorf("plugin %s was superseded again before it was reactivated", p.name())
		default:
			s.active, s.standby, p.role = p, nil, api.PluginRole_PLUGIN_ROLE_ACTIVE
			g.rebuild()
		}
		g.mu.Unlock()
		r.Unlock()
	}
	p.roleMu.Unlock()
	r.syncGate.Unlock()
	if err != nil {
		r.log.Warnf(ctx, "failed to reactivate plugin %s: %v", p.describe(), err)
		g.recordHandover(p, "failed", start, time.Since(waitStart))
		p.shutdown(g.syncFailureReason(err), err.Error(), nil)
		return
	}
	r.log.Infof(ctx, "plugin %s reactivated after %s left", p.describe(), lost.describe())
	g.recordHandover(p, "reactivated", start, time.Since(waitStart))
	g.tellRole(ctx, p, api.PluginRole_PLUGIN_ROLE_ACTIVE, lost, "reactivated")
	g.applyUpdates(ctx, p, updates)
}

// mayUpdateHandover refuses unsolicited updates from instances that do not
// own the plugin's event stream. g.mu is held.
func (g *registry) mayUpdateHandover(p *plugin) error {
	if !g.r.handover || p.kind == kindBuiltin {
		return nil
	}
	s, ok := g.slots[p.base]
	if !ok || s.active == p {
		return nil
	}
	if s.standby == p || (s.active != nil && s.retired[p.instance] == s.active) {
		return fmt.Errorf("plugin %s was superseded by %s and may not update containers", p.describe(), s.active.describe())
	}
	return fmt.Errorf("plugin %s is not the active instance of %q", p.describe(), p.base)
}

func (g *registry) dropCandidate(p *plugin) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if s, ok := g.slots[p.base]; ok && s.candidate == p {
		s.candidate = nil
	}
}

func (g *registry) failCandidate(p *plugin, start time.Time, err error) error {
	g.dropCandidate(p)
	g.recordHandover(p, "failed", start, 0)
	p.shutdown(g.syncFailureReason(err), err.Error(), nil)
	return err
}

// syncFailureReason tells a plugin why joining failed. A stopping runtime
// cancels every request, which is not the plugin's failure.
func (g *registry) syncFailureReason(err error) api.ShutdownReason {
	if g.r.ctx.Err() != nil {
		return api.ShutdownReason_SHUTDOWN_REASON_RUNTIME_SHUTDOWN
	}
	if reason := shutdownReasonFor(err); reason != api.ShutdownReason_SHUTDOWN_REASON_UNSPECIFIED {
		return reason
	}
	return api.ShutdownReason_SHUTDOWN_REASON_SYNCHRONIZATION_FAILED
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
	failed, err := g.r.updateContainers(ctx, updates)
	if err != nil || len(failed) > 0 {
		g.r.log.Warnf(ctx, "runtime failed to apply %d of %d updates from plugin %s synchronization: %v",
			len(failed), len(updates), p.name(), err)
	}
}

// tellRole tells a capable plugin its role, bounded by the request timeout.
// Calls to one plugin are serialized and each sends only the role the
// registry still holds for it, so when a reactivation and a newer switch race,
// the plugin ends up being told the role decided last.
func (g *registry) tellRole(ctx context.Context, p *plugin, role api.PluginRole, peer *plugin, msg string) {
	if !p.capable() {
		return
	}
	p.roleMu.Lock()
	defer p.roleMu.Unlock()
	g.mu.Lock()
	current := p.role
	g.mu.Unlock()
	if current != role || p.isClosed() {
		return
	}
	req := &api.RoleChangeRequest{Role: role, Message: msg}
	if peer != nil {
		req.PeerVersion, req.PeerInstance, req.PeerGeneration = peer.version, peer.instance, peer.generation
	}
	rctx, cancel := context.WithTimeout(ctx, getRequestTimeout())
	defer cancel()
	if _, err := p.svc.RoleChange(rctx, req); err != nil {
		g.r.log.Warnf(ctx, "plugin %s did not take role %s: %v", p.name(), role, err)
	}
}

// snapshot is the runtime's state as SyncFn reports it, with each object's
// encoding so that a later state can be compared with it cheaply: the
// comparison runs while runtime operations wait, the encoding does not.
type snapshot struct {
	pods []*api.PodSandbox
	ctrs []*api.Container
	enc  map[string][]byte // kind + "/" + id -> deterministic encoding
}

var deterministic = proto.MarshalOptions{Deterministic: true}

// snapshot asks the runtime for its pods and containers without synchronizing
// anyone: the callback only copies what it is handed.
func (g *registry) snapshot(ctx context.Context) (*snapshot, error) {
	var s *snapshot
	err := g.runtimeState(ctx, func(pods []*api.PodSandbox, ctrs []*api.Container) {
		s = &snapshot{pods: clones(pods), ctrs: clones(ctrs)}
	})
	return s, err
}

// encode records the encodings a later changesSince compares against.
func (s *snapshot) encode() {
	s.enc = make(map[string][]byte, len(s.pods)+len(s.ctrs))
	for _, p := range s.pods {
		s.enc["pod/"+p.GetId()], _ = deterministic.Marshal(p)
	}
	for _, c := range s.ctrs {
		s.enc["ctr/"+c.GetId()], _ = deterministic.Marshal(c)
	}
}

// changesSince reports what differs in the runtime's current state from
// base, copying only the objects that changed.
func (g *registry) changesSince(ctx context.Context, base *snapshot) (*delta, error) {
	d := &delta{}
	err := g.runtimeState(ctx, func(pods []*api.PodSandbox, ctrs []*api.Container) {
		seen := make(map[string]bool, len(pods)+len(ctrs))
		d.pods = changed(base.enc, "pod/", pods, seen)
		d.ctrs = changed(base.enc, "ctr/", ctrs, seen)
		for key := range base.enc {
			if seen[key] {
				continue
			}
			if id, ok := strings.CutPrefix(key, "pod/"); ok {
				d.removedPods = append(d.removedPods, id)
			} else {
				d.removedCtrs = append(d.removedCtrs, strings.TrimPrefix(key, "ctr/"))
			}
		}
		slices.Sort(d.removedPods)
		slices.Sort(d.removedCtrs)
	})
	return d, err
}

// runtimeState calls SyncFn and hands the runtime's state to use, which must
// not keep references to it.
func (g *registry) runtimeState(ctx context.Context, use func([]*api.PodSandbox, []*api.Container)) error {
	called := false
	err := g.r.callSyncFn(ctx, func(_ context.Context, pods []*api.PodSandbox, ctrs []*api.Container) ([]*api.ContainerUpdate, error) {
		called = true
		use(pods, ctrs)
		return nil, nil
	})
	if err == nil && !called {
		err = fmt.Errorf("runtime returned no snapshot")
	}
	if err != nil {
		return fmt.Errorf("failed to take the runtime's snapshot: %w", err)
	}
	return nil
}

type identified interface {
	proto.Message
	GetId() string
}

// changed returns copies of the objects whose encoding differs from enc (or
// that enc lacks) and marks every object seen.
func changed[T identified](enc map[string][]byte, kind string, now []T, seen map[string]bool) []T {
	var out []T
	for _, o := range now {
		key := kind + o.GetId()
		seen[key] = true
		b, err := deterministic.Marshal(o)
		if prev, ok := enc[key]; ok && err == nil && bytes.Equal(prev, b) {
			continue
		}
		out = append(out, proto.Clone(o).(T))
	}
	return out
}

func clones[T proto.Message](in []T) []T {
	out := make([]T, len(in))
	for i, m := range in {
		out[i] = proto.Clone(m).(T)
	}
	return out
}

// delta is what changed between two states of the runtime.
type delta struct {
	pods        []*api.PodSandbox
	ctrs        []*api.Container
	removedPods []string
	removedCtrs []string
}

func (d *delta) empty() bool {
	return len(d.pods)+len(d.ctrs)+len(d.removedPods)+len(d.removedCtrs) == 0
}

// versionLess compares dotted numeric versions ("v1.2.3", "1.10"); versions
// that do not parse never count as lower, so policy never blocks on a guess.
func versionLess(a, b string) bool {
	pa, oka := parseVersion(a)
	pb, okb := parseVersion(b)
	if !oka || !okb {
		return false
	}
	return slices.Compare(pa, pb) < 0
}

func parseVersion(v string) ([]int, bool) {
	v = strings.TrimPrefix(v, "v")
	if i := strings.IndexAny(v, "-+"); i >= 0 {
		v = v[:i]
	}
	if v == "" {
		return nil, false
	}
	var out []int
	for _, f := range strings.Split(v, ".") {
		n, err := strconv.Atoi(f)
		if err != nil {
			return nil, false
		}
		out = append(out, n)
	}
	return out, true
}

// rebuild recomputes the dispatch list from the slots. g.mu is held.
func (g *registry) rebuild() {
	var ps []*plugin
	for _, s := range g.slots {
		if s.active != nil {
			ps = append(ps, s.active)
		}
	}
	slices.SortFunc(ps, dispatchOrder)
	g.plugins = ps
	g.r.metrics.UpdatePluginCount(len(ps))
}
