package adaptation

// Issue 30, "check it exhaustively": a systematic exploration of the real
// code's interleavings for small configurations.
//
// The system (registrations, joins, switches, reactivations) runs on its own
// goroutines and crosses the schedule's points (schedule.go, the fake
// plugins' Synchronize and RoleChange handlers). The environment's steps (a
// gated operation, an exit bypassing the gate, a crash, a third instance
// registering) are injected at chosen points: when the system reaches the
// point it is parked, the step runs until it is done or waits (for the hold,
// the gate or the runtime's mutex, each probed), then the point is released.
// A schedule is the list of (step, point) choices; steps left out run once
// the system has settled: after the chosen ones, or, one at a time, while
// the system settles short of a chosen point, which the schedule extended
// may have reached after them (a third instance's round). Points are named
// by what crosses them and the how-manyeth time (switch@b#1), so that a
// schedule replays by its id: NRI_EXPLORE_ID=<id> (printed on failure). The
// exploration is a breadth-first search over the points each run reached:
// every schedule with one forced order, then two, ... up to a depth and a
// budget.
//
// After each schedule it checks: every dispatched event relayed to at most
// one instance of the name; if some instance is alive (not crashed),
// synchronized and not disconnected by the runtime, exactly one instance is
// active, it is alive and it knows every event (relayed to it, or in a round
// it was sent): so an event may reach nobody only while no instance is alive
// and synchronized (the only active one crashed with no standby and no
// candidate joining from the ledger), and whoever serves next learns it from
// its rounds; at most one instance active at every point, and at most one
// live instance told ACTIVE; no instance that did not crash disconnected as
// failed (only as superseded, or refused at registration); no event to an
// opted-in instance not told ACTIVE; the UpdateContainers of a predecessor
// that did not opt in (the update step) answered with what UpdateFn
// returned, or refused, never with nothing failed before UpdateFn ran;
// SyncFn only under the gate with no operation in flight; no plugin round trip inside a hold while the
// adaptation's lock is held; and the schedule ends within its deadline (a
// wait that only a timeout would end is a hang, reported with the schedule).
//
// And what a successor is told (explore_told_test.go): each instance's
// first full round shows every container as SyncFn showed it between the
// instance's registration and the round, but those it was told of again
// after; no update from an instance reaches UpdateFn, SyncFn's reply or an
// event's reply while it is not the active instance of its name; and the
// UpdateContainers of a plugin that did not opt in is answered after
// UpdateFn ran. The runtime applies every update (UpdateFn, a reply's,
// a Synchronize reply's) to what SyncFn lists, without an event, as
// containerd does; every instance marks its updates (its generation as
// the CPUs) so that an applied update names its sender.

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/nri-handover/nri/api"
)

type exploreConfig struct {
	pred      string // "legacy", "opted" (no delta rounds), "delta"
	succDelta bool   // the successor (and the third instance) take delta rounds
	grace     bool   // WithStandbyGrace (longer than any schedule: the standby stays)
	third     bool   // a third instance registers (a step)
	crash     string // "", "a", "b", "c": which instance crashes (a step)
	callback  bool   // opted-in instances call UpdateContainers from their ACTIVE handler
	update    bool   // the predecessor, which did not opt in, calls UpdateContainers (a step)
	// order is how the runtime relays: "" as containerd (every change, in
	// BlockPluginSync), "crio" (no BlockPluginSync; a creation relayed
	// before it is stored, a removal before the stores drop it), "moby"
	// (creation only). Either of the last two adds the removal steps.
	order string
	pupd  bool // every instance asks for updates in its replies (Synchronize, CreateContainer)
	// wg: each instance runs in a pod of one DaemonSet annotated for
	// handover (a workload group for those that do not opt in), at
	// pod-template-generation 1, 2, 3 for a, b, c.
	wg bool
	// succLegacy: the successor (and the third instance) do not opt in: a
	// rollback to an upstream-stub build, or NRI_PLUGIN_HANDOVER=off.
	succLegacy bool
	// loss: the crash step, once the crashed instance is taken out of its
	// slot, relays c3's creation (a loss and the next event as one step);
	// a "now" choice runs with the previous choice's point still parked,
	// and a third step before it ends once the third instance decided how
	// it joins. So depth 2 orders what a loss while a candidate joins from
	// the ledger needs: the third instance displacing the successor in its
	// switch (third@swap@b#1), deciding to join from the ledger, then the
	// loss and an event (crash@now) before the successor's switch ends.
	loss bool
}

func (c exploreConfig) String() string {
	s := []string{"pred=" + c.pred, "succ=full"}
	switch {
	case c.succLegacy:
		s[1] = "succ=legacy"
	case c.succDelta:
		s[1] = "succ=delta"
	}
	if c.grace {
		s = append(s, "grace")
	}
	if c.third {
		s = append(s, "third")
	}
	if c.crash != "" {
		s = append(s, "crash="+c.crash)
	}
	if c.callback {
		s = append(s, "cb")
	}
	if c.update {
		s = append(s, "upd")
	}
	if c.order != "" {
		s = append(s, "order="+c.order)
	}
	if c.pupd {
		s = append(s, "pupd")
	}
	if c.wg {
		s = append(s, "wg")
	}
	if c.loss {
		s = append(s, "loss")
	}
	return strings.Join(s, ",")
}

func parseExploreConfig(s string) (exploreConfig, error) {
	var c exploreConfig
	for _, f := range strings.Split(s, ",") {
		k, v, _ := strings.Cut(f, "=")
		switch k {
		case "pred":
			c.pred = v
		case "succ":
			c.succDelta, c.succLegacy = v == "delta", v == "legacy"
		case "grace":
			c.grace = true
		case "third":
			c.third = true
		case "crash":
			c.crash = v
		case "cb":
			c.callback = true
		case "upd":
			c.update = true
		case "order":
			c.order = v
		case "pupd":
			c.pupd = true
		case "wg":
			c.wg = true
		case "loss":
			c.loss = true
		default:
			return c, fmt.Errorf("unknown config field %q", f)
		}
	}
	return c, nil
}

// steps are the environment's steps of a configuration, in the order left
// out steps run. With a runtime's event order (CRI-O, moby), c2's removal
// and the third instance come first: those configurations exist for what a
// relayed removal does to a successor, and a breadth-first search extends
// its first steps first (explore-power's budget reaches their pairs).
func (c exploreConfig) steps() []string {
	if c.loss {
		return []string{"third", "crash"} // the crash step relays the next event
	}
	var s []string
	if c.order != "" {
		// remove relays the removal of c2 (stopped before the schedule);
		// store drops it from the runtime's stores, after the relay on
		// CRI-O (a store chosen before the remove is a no-op then, and the
		// remove drops it at once; left out, at the next point after the
		// relay), before it on containerd.
		s = append(s, "remove")
		if c.third {
			s = append(s, "third")
		}
	}
	s = append(s, "gated", "exit")
	if c.crash != "" {
		s = append(s, "crash")
	}
	if c.third && c.order == "" {
		s = append(s, "third")
	}
	if c.update {
		s = append(s, "update")
	}
	if c.order != "" {
		s = append(s, "store")
	}
	return s
}

// choice injects step at label ("now": as soon as the previous one waits or ends).
type choice struct{ step, label string }

func scheduleID(c exploreConfig, sched []choice) string {
	var parts []string
	for _, ch := range sched {
		parts = append(parts, ch.step+"@"+ch.label)
	}
	return c.String() + "|" + strings.Join(parts, ";")
}

func parseScheduleID(id string) (exploreConfig, []choice, error) {
	cs, ss, ok := strings.Cut(id, "|")
	if !ok {
		return exploreConfig{}, nil, fmt.Errorf("schedule id %q has no |", id)
	}
	c, err := parseExploreConfig(cs)
	if err != nil {
		return c, nil, err
	}
	var sched []choice
	if ss != "" {
		for _, p := range strings.Split(ss, ";") {
			st, l, ok := strings.Cut(p, "@")
			if !ok {
				return c, nil, fmt.Errorf("choice %q is not step@label", p)
			}
			sched = append(sched, choice{st, l})
		}
	}
	return c, sched, nil
}

type stepKey struct{}

// explorer is one schedule's scheduler and observer.
type explorer struct {
	r   *Adaptation
	rt  *fakeRuntime
	cfg exploreConfig

	mu         sync.Mutex
	trace      []string
	counts     map[string]int
	targets    []string
	next       int             // the next target to wait for
	parked     []chan struct{} // closed when targets[i] is reached (and parked)
	parkedAt   []int           // its position in trace
	release    []chan struct{} // closed to let it go
	activities int             // serveConn and reactivations running
	quiet      chan struct{}   // closed while activities == 0
	blocked    map[int]chan struct{}
	lost       map[string]bool
	lostC      map[string]chan struct{}
	fakes      map[string]*exploreFake
	relayed    map[string][]string // event key -> instances it was relayed to
	violations []string
	gatedStep  int           // the gated step's index, -1 before it runs
	lossStep   int           // the crash step's index in a loss configuration, -1 before its event
	lossSent   bool          // the crash step relayed c3's creation
	cDecided   chan struct{} // closed once the third instance decided how it joins (loss)
	updateStep int           // the update step's index, -1 before it runs
	crashing   string        // the instance the crash step closes

	// What instances are told (explore_told_test.go).
	rtVer    int
	hist     map[string][]rtValue
	ops      map[int]int // runtime operations: the version at their end, -1 in flight
	opSeq    int
	regVer   map[string]int
	seq      int
	rounds   map[string]*firstRound
	relays   []relayRec
	failSeen bool // UpdateFn was handed the update step's update of "fail"
	// The removal steps on CRI-O: relayed, and dropped from the stores.
	removeRelayed, storeRan bool
	storeNext               chan struct{}    // closed at the next point crossed after a relayed removal (CRI-O's store lag)
	placing                 map[int64]string // goroutine -> the instance whose registration it runs (wg)
	sent                    map[string][]sendRec
	lastActive              map[string]int // when each instance was last seen active
	removing                map[string]int // when the runtime began relaying a container's removal
	updatingAtReg           map[string][]string
}

type exploreFake struct {
	*fakePlugin
	who     string
	opted   bool
	mu      sync.Mutex
	role    api.PluginRole
	crashed bool
}

func (e *explorer) violate(format string, args ...any) {
	e.mu.Lock()
	e.violations = append(e.violations, fmt.Sprintf(format, args...))
	e.mu.Unlock()
}

func (e *explorer) quietC() chan struct{} {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.quiet
}

func (e *explorer) activity(d int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	was := e.activities
	e.activities += d
	switch {
	case was == 0 && e.activities > 0:
		e.quiet = make(chan struct{})
	case was > 0 && e.activities == 0:
		close(e.quiet)
	case e.activities < 0:
		e.violations = append(e.violations, "activity count below zero")
	}
}

// probe is the adaptation's probe (Adaptation.probe).
func (e *explorer) probe(ctx context.Context, point string, p *plugin) {
	who := ""
	if p != nil {
		p.mu.Lock() // a connection may be lost while RegisterPlugin records it
		who = p.instance
		p.mu.Unlock()
	}
	switch point {
	case pointHoldWait: // the hold's lock is held: signal only
		if i, ok := ctx.Value(stepKey{}).(int); ok {
			e.stepBlocked(i)
		}
	case pointUpdateWait: // the same; only the update step waits so
		e.mu.Lock()
		i := e.updateStep
		e.mu.Unlock()
		e.stepBlocked(i)
	case pointServed, pointReactivated:
		e.activity(-1)
	case pointReactivating: // the registry's lock is held
		e.activity(1)
	case pointLost:
		e.mu.Lock()
		if who == "" { // lost before it registered: the crashing one
			who = e.crashing
		}
		e.lost[who] = true
		if who == "c" && e.cDecided != nil {
			close(e.cDecided)
			e.cDecided = nil
		}
		if ch := e.lostC[who]; ch != nil {
			close(ch)
			delete(e.lostC, who)
		}
		e.mu.Unlock()
	case pointGraceDone, pointDrain, pointActivate:
	default:
		if who == "c" && (point == pointGate || point == pointSwitch || point == pointSyncRound) {
			e.thirdDecided()
		}
		e.checkOneActive(point + "@" + who)
		e.sampleActive()
		e.arrive(point + "@" + who)
		if point == pointRegister {
			e.registersOn(who) // its pod is placed next, on this goroutine
		}
	}
}

// thirdDecided: the third instance decided how it joins (or left).
func (e *explorer) thirdDecided() {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.cDecided != nil {
		close(e.cDecided)
		e.cDecided = nil
	}
}

func (e *explorer) stepBlocked(i int) {
	e.mu.Lock()
	if ch := e.blocked[i]; ch != nil {
		close(ch)
		delete(e.blocked, i)
	}
	e.mu.Unlock()
}

// arrive records a point and parks there if it is the next target.
func (e *explorer) arrive(label string) {
	e.mu.Lock()
	if e.storeNext != nil {
		close(e.storeNext)
		e.storeNext = nil
	}
	n := e.counts[label] + 1
	e.counts[label] = n
	full := label + "#" + strconv.Itoa(n)
	e.trace = append(e.trace, full)
	if e.next >= len(e.targets) || e.targets[e.next] != full {
		e.mu.Unlock()
		return
	}
	i := e.next
	e.next++
	e.parkedAt[i] = len(e.trace) - 1
	close(e.parked[i])
	rel := e.release[i]
	e.mu.Unlock()
	<-rel
}

// checkOneActive: at most one opted-in instance of the name is active (a
// legacy one taken over leaves the dispatch list in the switch's hold, where
// no event passes: the duplicate check at the end covers it).
func (e *explorer) checkOneActive(at string) {
	var ids []string
	for _, p := range e.r.reg.active() {
		if p.name() == "10-p" && p.handsOver() {
			ids = append(ids, p.instance)
		}
	}
	if len(ids) > 1 {
		e.violate("%d opted-in instances active at %s: %q", len(ids), at, ids)
	}
}

// inHoldUnderLock: a plugin round trip inside a hold while the adaptation's
// lock is held. Both are read under the hold's own lock: no event is in
// flight while a holder holds, and the hold cannot end meanwhile, so the lock
// is taken only if the holder took it (read apart, a hold released between
// the two reads let the next event take the lock: a false violation).
func (e *explorer) inHoldUnderLock() bool {
	h := &e.r.hold
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.holding {
		return false
	}
	if e.r.TryLock() {
		e.r.Unlock()
		return false
	}
	return true
}

func (e *explorer) newFake(who string, gen uint64, opted, delta bool) *exploreFake {
	f := &exploreFake{fakePlugin: newFakePlugin("10", "p", nil), who: who, opted: opted}
	f.events.Set(api.Event_CREATE_CONTAINER, api.Event_STOP_CONTAINER, api.Event_REMOVE_CONTAINER)
	if e.cfg.pupd {
		f.syncUpdates = []*api.ContainerUpdate{marked("c0", gen)}
	}
	f.regReq = func(q *api.RegisterPluginRequest) {
		q.InstanceId, q.Generation = who, gen
		q.Features = nil
		if opted {
			q.Features = []string{api.FeatureHandover}
		}
		if delta {
			q.Features = append(q.Features, api.FeatureDeltaSync)
		}
	}
	f.onSync = func(req *api.SynchronizeRequest) {
		e.round(who, req)
		if e.cfg.pupd && !req.GetMore() {
			e.sending(who) // its reply asks for updates
		}
		if e.inHoldUnderLock() {
			e.violate("Synchronize to %s in a hold under the adaptation's lock", who)
		}
		e.arrive("psync@" + who)
	}
	f.roleChange = func(ctx context.Context, req *api.RoleChangeRequest) error {
		if e.inHoldUnderLock() {
			e.violate("RoleChange to %s in a hold under the adaptation's lock", who)
		}
		e.arrive("prole@" + who)
		f.mu.Lock()
		crashed := f.crashed
		f.mu.Unlock()
		if crashed {
			return fmt.Errorf("crashed")
		}
		if req.GetRole() == api.PluginRole_PLUGIN_ROLE_ACTIVE {
			for _, o := range e.fakes {
				if o != f && o.believesActive() {
					e.violate("%s told ACTIVE while %s, alive and connected, believes it is active", who, o.who)
				}
			}
		}
		f.mu.Lock()
		f.role = req.GetRole()
		f.mu.Unlock()
		if e.cfg.callback && req.GetRole() == api.PluginRole_PLUGIN_ROLE_ACTIVE {
			// Re-applying its policy: UpdateFn takes the runtime's mutex,
			// which an event relay may hold meanwhile.
			e.sending(who)
			_, err := f.runtime.UpdateContainers(ctx, &api.UpdateContainersRequest{
				Update: []*api.ContainerUpdate{marked("c0", gen)},
			})
			f.mu.Lock()
			crashed := f.crashed // a crash step may close its connection during the call
			f.mu.Unlock()
			if err != nil && !crashed {
				e.violate("UpdateContainers from %s's ACTIVE handler: %v", who, err)
			}
		}
		return nil
	}
	f.handle = func(_ context.Context, ev api.Event, req any) (any, error) {
		var key string
		var rpl any
		switch q := req.(type) {
		case *api.CreateContainerRequest:
			key = "create:" + q.GetContainer().GetId()
			if e.cfg.pupd {
				u := []*api.ContainerUpdate{marked("c0", gen)}
				e.mayApply(u, "a reply")
				rpl = &api.CreateContainerResponse{Update: u}
			}
		case *api.StopContainerRequest:
			key = "stop:" + q.GetContainer().GetId()
		case *api.RemoveContainerRequest:
			key = "remove:" + q.GetContainer().GetId()
		default:
			key = ev.PrettyName()
		}
		if _, id, ok := strings.Cut(key, ":"); ok {
			e.relay(who, id)
		}
		f.mu.Lock()
		role := f.role
		f.mu.Unlock()
		if f.opted && role != api.PluginRole_PLUGIN_ROLE_ACTIVE {
			e.violate("event %s reached %s, told %s", key, who, role)
		}
		e.mu.Lock()
		e.relayed[key] = append(e.relayed[key], who)
		e.mu.Unlock()
		return rpl, nil
	}
	e.mu.Lock()
	e.fakes[who] = f
	e.mu.Unlock()
	return f
}

// believesActive: alive, connected and told ACTIVE (last).
func (f *exploreFake) believesActive() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.opted && !f.crashed && !f.gone() && f.role == api.PluginRole_PLUGIN_ROLE_ACTIVE
}

func (f *exploreFake) syncedFull() bool {
	f.fakePlugin.mu.Lock()
	defer f.fakePlugin.mu.Unlock()
	return slices.ContainsFunc(f.syncs, func(s *api.SynchronizeRequest) bool { return !s.GetDelta() })
}

// knows tells whether f learnt of the event key from a round.
func (f *exploreFake) knowsFromRound(key string) bool {
	f.fakePlugin.mu.Lock()
	defer f.fakePlugin.mu.Unlock()
	kind, id, _ := strings.Cut(key, ":")
	for _, s := range f.syncs {
		if (kind == "stop" || kind == "remove") && slices.Contains(s.GetRemovedContainers(), id) {
			return true
		}
		if kind == "remove" && !s.GetDelta() && !slices.ContainsFunc(s.GetContainers(), func(c *api.Container) bool { return c.GetId() == id }) {
			return true
		}
		for _, c := range s.GetContainers() {
			if c.GetId() != id {
				continue
			}
			if kind == "create" || c.GetState() == api.ContainerState_CONTAINER_STOPPED {
				return true
			}
		}
	}
	return false
}

// connect dials and registers in the background; it is an activity until
// the adaptation's serveConn returns.
func (e *explorer) connect(f *exploreFake, sock string, done chan<- struct{}) error {
	e.registering(f.who)
	e.activity(1)
	conn, err := dialUnix(sock)
	if err != nil {
		e.activity(-1)
		return err
	}
	// Under f.mu: the crash step sees f attached whole or not at all (a
	// half-attached one, its server not yet set, would never stop serving).
	f.mu.Lock()
	f.attach(&testing.T{}, conn)
	f.mu.Unlock()
	go func() {
		defer close(done)
		_ = f.register(context.Background()) // refusals are part of the exploration
	}()
	return nil
}

type scheduleResult struct {
	trace    []string
	parkedAt []int // -1: the target was not reached
	failures []string
}

const exploreDeadline = 30 * time.Second

// runSchedule runs one schedule of cfg and checks it.
func runSchedule(t *testing.T, cfg exploreConfig, sched []choice) scheduleResult {
	e := &explorer{cfg: cfg, gatedStep: -1, updateStep: -1, lossStep: -1, cDecided: make(chan struct{}), counts: map[string]int{}, quiet: make(chan struct{}), blocked: map[int]chan struct{}{},
		lost: map[string]bool{}, lostC: map[string]chan struct{}{}, fakes: map[string]*exploreFake{}, relayed: map[string][]string{},
		hist: map[string][]rtValue{}, ops: map[int]int{}, regVer: map[string]int{}, rounds: map[string]*firstRound{},
		placing: map[int64]string{}, sent: map[string][]sendRec{}, lastActive: map[string]int{}, removing: map[string]int{}, updatingAtReg: map[string][]string{}}
	close(e.quiet)
	var res scheduleResult
	fail := func(format string, args ...any) {
		res.failures = append(res.failures, fmt.Sprintf(format, args...))
	}
	deadline := time.NewTimer(exploreDeadline)
	defer deadline.Stop()
	hung := false
	wait := func(ch <-chan struct{}, what string) bool {
		if hung {
			return false
		}
		select {
		case <-ch:
			return true
		case <-deadline.C:
			hung = true
			fail("hang: %s did not happen within %s", what, exploreDeadline)
			return false
		}
	}

	c0 := &api.Container{Id: "c0", PodSandboxId: "pod1", State: api.ContainerState_CONTAINER_RUNNING}
	pod := &api.PodSandbox{Id: "pod1"}
	c2 := &api.Container{Id: "c2", PodSandboxId: "pod1", State: api.ContainerState_CONTAINER_STOPPED}
	rt := newFakeRuntime()
	rt.pods = []*api.PodSandbox{pod}
	rt.nriMu = &sync.Mutex{}
	e.rt = rt
	e.setCtrs(func([]*api.Container) []*api.Container {
		if cfg.order != "" {
			return []*api.Container{c0, c2}
		}
		return []*api.Container{c0}
	})
	var r *Adaptation
	// SyncFn applies the updates a plugin's Synchronize asked for, as
	// containerd does.
	syncFn := func(ctx context.Context, cb SyncCB) error {
		if r.syncGate.inFlight() != 0 || !r.syncGate.exclusive() {
			e.violate("SyncFn called while an operation holds BlockPluginSync or without the gate")
		}
		rt.nriMu.Lock()
		defer rt.nriMu.Unlock()
		rt.mu.Lock()
		pods, ctrs := rt.pods, rt.containers
		rt.mu.Unlock()
		updates, err := cb(ctx, pods, ctrs)
		if err == nil {
			e.mayApply(updates, "SyncFn's reply")
			e.applyUpdates(updates)
		}
		return err
	}
	dir, err := os.MkdirTemp("", "nri")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	sock := filepath.Join(dir, "nri.sock")
	opts := []Option{WithLogger(quietLogger()), WithSocketPath(sock),
		WithPluginPath(filepath.Join(dir, "none")), WithPluginConfigPath(filepath.Join(dir, "none"))}
	if cfg.grace {
		opts = append(opts, WithStandbyGrace(time.Hour))
	}
	if cfg.wg {
		opts = append(opts, WithWorkloadResolver(explorePods{e}))
	}
	// UpdateFn applies the updates to the runtime's containers and fails
	// that of container "fail" (which does not exist): a plugin that did not
	// opt in must be answered with that, as upstream answers it.
	updateFn := func(_ context.Context, u []*api.ContainerUpdate) ([]*api.ContainerUpdate, error) {
		e.mu.Lock()
		i := e.updateStep
		e.mu.Unlock()
		e.mayApply(u, "UpdateFn")
		lockTracked(e, i, rt.nriMu)
		defer rt.nriMu.Unlock()
		op := e.beginOp()
		defer e.endOp(op)
		if slices.ContainsFunc(u, func(x *api.ContainerUpdate) bool { return x.GetContainerId() == "fail" }) {
			e.mu.Lock()
			e.failSeen = true
			e.mu.Unlock()
		}
		return e.applyUpdates(u), nil
	}
	r, err = New("test-runtime", "v0", syncFn, updateFn, opts...)
	if err != nil {
		t.Fatal(err)
	}
	e.r = r
	r.probe = e.probe
	if err := r.Start(); err != nil {
		t.Fatal(err)
	}
	var fakes []*exploreFake
	defer func() {
		for _, f := range fakes {
			f.close()
		}
		r.Stop()
		// After a hang: let the steps still waiting go.
		e.mu.Lock()
		for who, ch := range e.lostC {
			close(ch)
			delete(e.lostC, who)
		}
		e.mu.Unlock()
		for i := range e.release {
			select {
			case <-e.release[i]:
			default:
				close(e.release[i])
			}
		}
	}()

	// The predecessor, active before anything is explored.
	a := e.newFake("a", 1, cfg.pred != "legacy", cfg.pred == "delta")
	fakes = append(fakes, a)
	aReg := make(chan struct{})
	if err := e.connect(a, sock, aReg); err != nil {
		t.Fatal(err)
	}
	if !wait(aReg, "a registered") || !wait(e.quietC(), "a joined") {
		res.failures = append(res.failures, "setup failed")
		return res
	}
	if got := activeInstances(r, "10-p"); !slices.Equal(got, []string{"a"}) {
		t.Fatalf("setup: active %q, want a", got)
	}
	if cfg.order != "moby" {
		// c0 started: a runtime that relays a container's life past its
		// creation, whose ledger a takeover may use. Relayed under the
		// runtime's mutex with the container as the runtime has it now
		// (a's ACTIVE-handler update may have been applied meanwhile).
		rt.nriMu.Lock()
		rt.mu.Lock()
		started := proto.Clone(rt.containers[0]).(*api.Container)
		rt.mu.Unlock()
		err := r.StartContainer(context.Background(), &api.StartContainerRequest{Pod: pod, Container: started})
		rt.nriMu.Unlock()
		if err != nil {
			t.Fatal(err)
		}
	}
	e.mu.Lock()
	e.trace, e.counts = nil, map[string]int{}
	for _, ch := range sched {
		if ch.label != "now" {
			e.targets = append(e.targets, ch.label)
		} else {
			e.targets = append(e.targets, "")
		}
		e.parked = append(e.parked, make(chan struct{}))
		e.release = append(e.release, make(chan struct{}))
		e.parkedAt = append(e.parkedAt, -1)
	}
	e.mu.Unlock()
	// "now" targets are reached at once, when it is their turn.
	r.syncGate.onWait = func() {
		e.stepBlockedGated()
		e.mu.Lock()
		i := e.lossStep
		e.mu.Unlock()
		if i >= 0 {
			e.stepBlocked(i)
		}
	}

	b := e.newFake("b", 2, !cfg.succLegacy, cfg.succDelta)
	fakes = append(fakes, b)
	var c *exploreFake
	if cfg.third {
		c = e.newFake("c", 3, !cfg.succLegacy, cfg.succDelta)
		fakes = append(fakes, c)
	}
	bReg := make(chan struct{})
	if err := e.connect(b, sock, bReg); err != nil {
		t.Fatal(err)
	}

	var stepsWG sync.WaitGroup
	stepErr := map[string]error{}
	var stepMu sync.Mutex
	doStep := func(i int, name string) (done, blocked chan struct{}) {
		done, blocked = make(chan struct{}), make(chan struct{})
		e.mu.Lock()
		e.blocked[i] = blocked
		e.mu.Unlock()
		switch name {
		case "gated":
			e.mu.Lock()
			e.gatedStep = i
			e.mu.Unlock()
		case "update":
			e.mu.Lock()
			e.updateStep = i
			e.mu.Unlock()
		}
		ctx := context.WithValue(context.Background(), stepKey{}, i)
		stepsWG.Add(1)
		go func() {
			defer stepsWG.Done()
			defer close(done)
			var err error
			switch name {
			case "gated":
				// CRI-O takes no BlockPluginSync and stores a container
				// after relaying its creation; containerd and moby store
				// it first, inside BlockPluginSync. The runtime applies the
				// updates of other containers the reply carries.
				if cfg.order != "crio" {
					defer r.BlockPluginSync().Unblock()
				}
				lockTracked(e, i, rt.nriMu)
				op := e.beginOp()
				c1 := &api.Container{Id: "c1", PodSandboxId: "pod1", State: api.ContainerState_CONTAINER_CREATED}
				store := func() {
					e.setCtrs(func(ctrs []*api.Container) []*api.Container { return append(ctrs, proto.Clone(c1).(*api.Container)) })
				}
				if cfg.order != "crio" {
					store()
				}
				var rsp *api.CreateContainerResponse
				joiner := e.ledgerJoinerAlone()
				rsp, err = r.CreateContainer(ctx, &CreateContainerRequest{Pod: pod, Container: proto.Clone(c1).(*api.Container)})
				e.checkToNobody("create:c1", joiner, err)
				if err == nil {
					if cfg.order == "crio" {
						store()
					}
					e.applyUpdates(rsp.GetUpdate())
				}
				e.endOp(op)
				rt.nriMu.Unlock()
			case "exit":
				// An exit bypasses BlockPluginSync; moby relays no stop.
				lockTracked(e, i, rt.nriMu)
				op := e.beginOp()
				var stopped *api.Container
				e.setCtrs(func(ctrs []*api.Container) []*api.Container {
					for _, x := range ctrs {
						if x.GetId() == "c0" {
							x.State = api.ContainerState_CONTAINER_STOPPED
							stopped = proto.Clone(x).(*api.Container)
						}
					}
					return ctrs
				})
				if cfg.order != "moby" {
					joiner := e.ledgerJoinerAlone()
					_, err = r.StopContainer(ctx, &api.StopContainerRequest{Pod: pod, Container: stopped})
					e.checkToNobody("stop:c0", joiner, err)
				}
				e.endOp(op)
				rt.nriMu.Unlock()
			case "remove", "store":
				// c2's removal: CRI-O relays it, with no BlockPluginSync,
				// and drops it after (store, a step of its own); moby
				// relays nothing.
				if cfg.order != "crio" && name == "store" {
					return
				}
				lockTracked(e, i, rt.nriMu)
				op := e.beginOp()
				drop := func() {
					e.setCtrs(func(ctrs []*api.Container) []*api.Container {
						return slices.DeleteFunc(ctrs, func(c *api.Container) bool { return c.GetId() == "c2" })
					})
				}
				// On CRI-O whichever of the two ends second drops it
				// (a store step before the relay: at once after it).
				second := func(mine, other *bool) bool {
					e.mu.Lock()
					defer e.mu.Unlock()
					*mine = true
					return *other
				}
				switch {
				case name == "store":
					if second(&e.storeRan, &e.removeRelayed) {
						drop()
					}
				case cfg.order == "crio":
					e.removal("c2")
					err = r.RemoveContainer(ctx, &api.RemoveContainerRequest{Pod: pod, Container: proto.Clone(c2).(*api.Container)})
					switch {
					case second(&e.removeRelayed, &e.storeRan):
						drop()
					case !slices.ContainsFunc(sched, func(c choice) bool { return c.step == "store" }):
						// A store step left out: CRI-O drops it from its
						// stores right after the relay, at the next point
						// any goroutine crosses (while a listing may show
						// it), or at once if nothing runs.
						next := make(chan struct{})
						e.mu.Lock()
						e.storeRan, e.storeNext = true, next
						e.mu.Unlock()
						e.endOp(op)
						rt.nriMu.Unlock()
						e.stepBlocked(i)
						select {
						case <-next:
						case <-e.quietC():
						}
						lockTracked(e, i, rt.nriMu)
						op = e.beginOp()
						drop()
					}
				default:
					drop()
				}
				e.endOp(op)
				rt.nriMu.Unlock()
			case "crash":
				f := e.fakes[cfg.crash]
				if f == nil {
					return
				}
				// A third instance's connect may be attaching it now (a
				// left-out step still running when the point was reached):
				// one not attached yet connects later, crashed.
				f.mu.Lock()
				f.crashed = true
				connected := f.mux != nil
				f.mu.Unlock()
				if !connected {
					return
				}
				e.mu.Lock()
				e.crashing = f.who
				var lostC chan struct{}
				if !e.lost[f.who] {
					lostC = make(chan struct{})
					e.lostC[f.who] = lostC
				}
				e.mu.Unlock()
				f.close()
				if lostC != nil {
					<-lostC // bounded by the schedule's deadline: Stop closes it
				}
				if !cfg.loss {
					return
				}
				// The next event, c3's creation as containerd relays it.
				e.mu.Lock()
				e.lossStep = i
				e.mu.Unlock()
				defer r.BlockPluginSync().Unblock()
				lockTracked(e, i, rt.nriMu)
				op := e.beginOp()
				c3 := &api.Container{Id: "c3", PodSandboxId: "pod1", State: api.ContainerState_CONTAINER_CREATED}
				e.setCtrs(func(ctrs []*api.Container) []*api.Container { return append(ctrs, proto.Clone(c3).(*api.Container)) })
				joiner := e.ledgerJoinerAlone()
				var rsp *api.CreateContainerResponse
				rsp, err = r.CreateContainer(ctx, &CreateContainerRequest{Pod: pod, Container: proto.Clone(c3).(*api.Container)})
				e.checkToNobody("create:c3", joiner, err)
				if err == nil {
					e.applyUpdates(rsp.GetUpdate())
					e.mu.Lock()
					e.lossSent = true
					e.mu.Unlock()
				}
				e.endOp(op)
				rt.nriMu.Unlock()
			case "update":
				e.sending("a")
				rpl, uerr := a.runtime.UpdateContainers(ctx, &api.UpdateContainersRequest{
					Update: []*api.ContainerUpdate{marked("c0", 1), {ContainerId: "fail"}},
				})
				failed := slices.ContainsFunc(rpl.GetFailed(), func(x *api.ContainerUpdate) bool { return x.GetContainerId() == "fail" })
				e.mu.Lock()
				ran := e.failSeen
				e.mu.Unlock()
				switch {
				case a.opted || uerr != nil:
				case !failed:
					e.violate("a, which did not opt in, was answered %v and no error, not what UpdateFn returned", rpl.GetFailed())
				case !ran:
					e.violate("a, which did not opt in, was answered before UpdateFn ran")
				}
			case "third":
				registered := make(chan struct{})
				if err := e.connect(c, sock, registered); err != nil {
					stepMu.Lock()
					stepErr[name] = err
					stepMu.Unlock()
					return
				}
				if !cfg.loss || i+1 >= len(sched) || sched[i+1].label != "now" {
					return
				}
				// Before a "now" choice, until it decided how it joins: a
				// round from the ledger, under the gate, or a switch; or
				// refused, idled, lost. (Only then: parked at b's
				// registration, say, c's waits for a registration bound.)
				e.mu.Lock()
				decided := e.cDecided
				e.mu.Unlock()
				if decided == nil {
					return
				}
				select {
				case <-decided:
				case <-registered:
					if e.placedAs("c", stateCandidate) {
						<-decided // bounded: Stop loses it at the deadline
					}
				}
			}
			stepMu.Lock()
			stepErr[name] = err
			stepMu.Unlock()
		}()
		return done, blocked
	}

	// Injected steps.
	released := 0
	var dones []chan struct{}
	ran := map[string]bool{}
	// leftOut is the next step the schedule leaves out that has not run.
	leftOut := func() (int, string) {
		for j, name := range cfg.steps() {
			if !ran[name] && !slices.ContainsFunc(sched, func(c choice) bool { return c.step == name }) {
				return len(sched) + j, name
			}
		}
		return -1, ""
	}
	for i, ch := range sched {
		if ch.label != "now" {
		waiting:
			for {
				select {
				case <-e.parked[i]:
					break waiting
				case <-e.quietC():
				case <-deadline.C:
					hung = true
					fail("hang: waiting for %s", ch.label)
					break waiting
				}
				// Settled without reaching it. The schedule this one
				// extends may have reached the point after a step this one
				// leaves out (a third instance's round, say): the next such
				// step runs, until the point is reached.
				if j, name := leftOut(); name != "" {
					done, _ := doStep(j, name)
					dones = append(dones, done)
					ran[name] = true
					select {
					case <-done:
					case <-e.parked[i]:
						break waiting
					case <-deadline.C:
						hung = true
						fail("hang: step %s", name)
						break waiting
					}
					continue
				}
				// None left: a schedule the code did not take this time;
				// the step runs now.
				e.mu.Lock()
				if e.next == i {
					e.next++
				}
				e.mu.Unlock()
				break waiting
			}
			if hung {
				break
			}
		} else {
			e.mu.Lock()
			if e.next == i {
				e.next++
			}
			e.mu.Unlock()
		}
		done, blocked := doStep(i, ch.step)
		dones = append(dones, done)
		ran[ch.step] = true
		var nextParked chan struct{}
		if i+1 < len(sched) {
			nextParked = e.parked[i+1]
		}
		select {
		case <-done:
		case <-blocked:
		case <-nextParked:
		case <-deadline.C:
			hung = true
			fail("hang: step %s neither ended nor waited", ch.step)
		}
		// In a loss configuration a "now" choice runs at the previous
		// choice's point: it is released with this one.
		if cfg.loss && !hung && i+1 < len(sched) && sched[i+1].label == "now" {
			continue
		}
		for ; released <= i; released++ {
			close(e.release[released])
		}
		if hung {
			break
		}
	}
	for ; released < len(sched); released++ {
		close(e.release[released])
	}
	// Left out steps, once the system settled.
	for i, name := range cfg.steps() {
		if ran[name] {
			continue
		}
		if !wait(e.quietC(), "the system settling") {
			break
		}
		done, _ := doStep(len(sched)+i, name)
		dones = append(dones, done)
		if !wait(done, "step "+name) {
			break
		}
	}
	for _, d := range dones {
		if !wait(d, "every step ending") {
			break
		}
	}
	wait(e.quietC(), "the system settling at the end")
	wait(bReg, "b's registration")

	e.mu.Lock()
	res.trace = slices.Clone(e.trace)
	res.parkedAt = slices.Clone(e.parkedAt)
	res.failures = append(res.failures, e.violations...)
	relayed := e.relayed
	e.mu.Unlock()
	if hung {
		return res
	}

	// The checks at the end.
	for key, to := range relayed {
		if len(to) > 1 {
			fail("event %s relayed to %d instances: %q", key, len(to), to)
		}
	}
	var dispatched []string
	if stepErr["gated"] == nil && slices.Contains(cfg.steps(), "gated") {
		dispatched = append(dispatched, "create:c1")
	}
	if stepErr["exit"] == nil && cfg.order != "moby" && slices.Contains(cfg.steps(), "exit") {
		dispatched = append(dispatched, "stop:c0")
	}
	e.mu.Lock()
	if e.lossSent {
		dispatched = append(dispatched, "create:c3")
	}
	e.mu.Unlock()
	// CRI-O's removal is not required: a join under the gate between its
	// relay and the stores' change is told the container exists, as
	// upstream's is (SyncFn lists it), and no later event corrects it.
	// What a successor is told of it is checked against SyncFn
	// (checkRounds).
	for _, f := range e.checkRounds() {
		fail("%s", f)
	}
	var live []string
	for _, f := range fakes {
		f.mu.Lock()
		crashed := f.crashed
		f.mu.Unlock()
		if !crashed && !f.gone() && f.mux != nil && f.syncedFull() && e.placed(f.who) {
			live = append(live, f.who)
		}
	}
	active := activeInstances(r, "10-p")
	if len(active) > 1 {
		fail("%d instances active at the end: %q", len(active), active)
	}
	if len(live) > 0 {
		if len(active) != 1 {
			fail("instances %q alive and synchronized, but %d active", live, len(active))
		} else {
			f := e.fakes[active[0]]
			f.mu.Lock()
			crashed := f.crashed
			f.mu.Unlock()
			if crashed || f.gone() {
				fail("the active instance %s is gone (alive: %q)", f.who, live)
			}
			for _, key := range dispatched {
				if !slices.Contains(relayed[key], f.who) && !f.knowsFromRound(key) {
					fail("the active instance %s never learnt of %s (relayed to %q)", f.who, key, relayed[key])
				}
			}
		}
	}
	n := 0
	for _, f := range fakes {
		if f.believesActive() {
			n++
		}
	}
	if n > 1 {
		fail("%d live instances told ACTIVE last", n)
	}
	// Disconnects in progress end first, so that the notice each one sends
	// (a refused reactivation's, say) is read below.
	for _, p := range r.reg.tracked() {
		if p.isClosed() && !wait(p.doneC, "a disconnect ending") {
			return res
		}
	}
	// Only a crash fails an instance here: one that did not crash is
	// disconnected only as superseded or refused at registration. One shut
	// down as failed (a standby whose reactivation was refused, say) is an
	// instance lost that could have served.
	for _, f := range fakes {
		f.mu.Lock()
		crashed := f.crashed
		f.mu.Unlock()
		for !crashed {
			var req *api.ShutdownRequest
			select {
			case req = <-f.shutdowns:
			default:
			}
			if req == nil {
				break
			}
			switch req.GetReason() {
			case api.ShutdownReason_SHUTDOWN_REASON_SUPERSEDED, api.ShutdownReason_SHUTDOWN_REASON_REGISTRATION_REJECTED:
			default:
				fail("%s, which did not crash, was disconnected as failed: %s: %s", f.who, req.GetReason(), req.GetMessage())
			}
		}
	}
	return res
}

// ledgerJoinerAlone is the instance of 10-p joining from the ledger while
// none is active, if any: an event must then wait for its switch (the
// hold its predecessor's loss urged or reserved), never reach nobody.
func (e *explorer) ledgerJoinerAlone() string {
	g := e.r.reg
	g.mu.Lock()
	var joiner *plugin
	for p := range g.all { // every plugin explored is 10-p
		switch {
		case p.state == stateActive:
			g.mu.Unlock()
			return ""
		case p.state == stateCandidate && p.join == joinFromLedger:
			joiner = p
		}
	}
	g.mu.Unlock()
	if joiner == nil {
		return ""
	}
	joiner.mu.Lock()
	defer joiner.mu.Unlock()
	return joiner.instance
}

// checkToNobody: an event relayed while joiner joined from the ledger and
// nobody was active reached some instance, unless joiner left meanwhile
// (its switch failed).
func (e *explorer) checkToNobody(key, joiner string, err error) {
	if err != nil || joiner == "" {
		return
	}
	e.mu.Lock()
	to := len(e.relayed[key])
	e.mu.Unlock()
	if to == 0 && e.placed(joiner) {
		e.violate("event %s reached no instance while %s joined from the ledger and none was active", key, joiner)
	}
}

// placedAs tells whether the instance who is in state st.
func (e *explorer) placedAs(who string, st instanceState) bool {
	g := e.r.reg
	g.mu.Lock()
	var in []*plugin
	for p := range g.all {
		if p.state == st {
			in = append(in, p)
		}
	}
	g.mu.Unlock()
	for _, p := range in {
		p.mu.Lock()
		is := p.instance == who
		p.mu.Unlock()
		if is {
			return true
		}
	}
	return false
}

func (e *explorer) stepBlockedGated() {
	e.mu.Lock()
	i := e.gatedStep
	e.mu.Unlock()
	if i >= 0 {
		e.stepBlocked(i)
	}
}

// placed tells whether the runtime keeps the instance who in its slot
// (candidate, active or standby): one it disconnected is excused, as one
// that crashed is.
func (e *explorer) placed(who string) bool {
	g := e.r.reg
	g.mu.Lock()
	defer g.mu.Unlock()
	for p := range g.all {
		if p.instance == who && (p.state == stateCandidate || p.state == stateActive || p.state == stateStandby) {
			return true
		}
	}
	return false
}

func dialUnix(sock string) (net.Conn, error) { return net.Dial("unix", sock) }

func slogDiscard() *slog.Logger { return slog.New(slog.DiscardHandler) }

// lockTracked takes the runtime's mutex, telling the explorer when step i
// waits for it.
func lockTracked(e *explorer, i int, mu *sync.Mutex) {
	if mu.TryLock() {
		return
	}
	e.stepBlocked(i)
	mu.Lock()
}

func quietLogger() Logger {
	if os.Getenv("NRI_TEST_VERBOSE") != "" {
		return testLogger()
	}
	return NewSlogLogger(slogDiscard())
}

// exploreConfigs are the configurations explored: every predecessor kind and
// successor kind, standby on and off, a third instance or not, each crash,
// the ACTIVE handler's callback, and a predecessor written for upstream
// that sends UpdateContainers. The richest environments come first (a
// standby, a third instance, a crash): a search that stops at its first
// finding (explore_bugs_test.go) reaches the states that need them, which
// a simpler configuration cannot, before it has spent its budget on every
// simpler one.
func exploreConfigs() []exploreConfig {
	// A loss while a candidate joins from the ledger, the successor it
	// displaced still in its switch (issue 39 finding 2): each opted-in
	// predecessor, each kind of successor.
	var cs []exploreConfig
	for _, pred := range []string{"opted", "delta"} {
		for _, succDelta := range []bool{true, false} {
			cs = append(cs, exploreConfig{pred: pred, succDelta: succDelta, third: true, crash: "a", loss: true})
		}
	}
	for _, grace := range []bool{true, false} {
		for _, third := range []bool{true, false} {
			crashes := []string{"a", "b"}
			if third {
				crashes = append(crashes, "c")
			}
			for _, crash := range append(crashes, "") {
				for _, cb := range []bool{false, true} {
					for _, pred := range []string{"legacy", "opted", "delta"} {
						for _, succDelta := range []bool{true, false} {
							cs = append(cs, exploreConfig{pred: pred, succDelta: succDelta, grace: grace, third: third, crash: crash, callback: cb})
							if pred == "legacy" && !cb {
								cs = append(cs, exploreConfig{pred: pred, succDelta: succDelta, grace: grace, third: third, crash: crash, update: true})
							}
						}
					}
				}
				// Plugin-requested updates, and the event orders of CRI-O
				// and moby (with them).
				for _, order := range []string{"", "crio", "moby"} {
					for _, pred := range []string{"legacy", "delta"} {
						for _, succDelta := range []bool{true, false} {
							cs = append(cs, exploreConfig{pred: pred, succDelta: succDelta, grace: grace, third: third, crash: crash,
								callback: pred != "legacy", order: order, pupd: true})
						}
					}
				}
				// A workload group: successors that do not opt in (a
				// rollback to an upstream-stub build, the kill switch)
				// after each kind of predecessor, and one that opts in
				// after a predecessor that did not.
				for _, pred := range []string{"legacy", "opted", "delta"} {
					cs = append(cs, exploreConfig{pred: pred, succLegacy: true, grace: grace, third: third, crash: crash, wg: true, pupd: true})
				}
				cs = append(cs, exploreConfig{pred: "legacy", succDelta: true, grace: grace, third: third, crash: crash, wg: true, pupd: true})
			}
		}
	}
	return cs
}

// explore runs the schedules of cfg breadth-first, up to depth forced orders
// and budget schedules, and returns how many it ran and the first failing
// one's id. A failure counts only if finding, when set, says so of its
// schedule; one it rejects is extended as a passing one is.
func explore(t *testing.T, cfg exploreConfig, depth, budget int, finding func(exploreConfig, []choice) bool) (int, string, []string) {
	queue := [][]choice{nil}
	seen := map[string]bool{}
	n := 0
	for len(queue) > 0 && n < budget {
		sched := queue[0]
		queue = queue[1:]
		id := scheduleID(cfg, sched)
		if seen[id] {
			continue
		}
		seen[id] = true
		res := runSchedule(t, cfg, sched)
		n++
		if len(res.failures) > 0 && (finding == nil || finding(cfg, sched)) {
			return n, id, append(res.failures, "trace: "+strings.Join(res.trace, " "))
		}
		if len(sched) >= depth || len(sched) >= len(cfg.steps()) {
			continue
		}
		from := 0
		if k := len(sched); k > 0 {
			if res.parkedAt[k-1] < 0 && sched[k-1].label != "now" {
				continue // its last choice was not reached: nothing to extend
			}
			from = res.parkedAt[k-1] + 1
		}
		for _, step := range cfg.steps() {
			if slices.ContainsFunc(sched, func(c choice) bool { return c.step == step }) {
				continue
			}
			labels := []string{"now"}
			if from >= 0 {
				labels = append(labels, res.trace[max(from, 0):]...)
			}
			for _, l := range labels {
				queue = append(queue, append(slices.Clone(sched), choice{step, l}))
			}
		}
	}
	return n, "", nil
}

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil {
		return v
	}
	return def
}

// pinnedSchedules are schedules a deeper exploration found failing, each
// replayed in every run of TestExplore.
var pinnedSchedules = []string{
	// b (without delta rounds) took over from a, which stood by; c took
	// over from b: the switch left a standing by outside its slot, so when
	// c was lost nobody served (swap now retires the earlier standby).
	"pred=delta,succ=full,grace,third,crash=c|crash@switch@b#2",
	// b, active with a standing by, crashed while c's switch held the
	// dispatch before its swap: a's reactivation, queued behind c's hold,
	// ran after c completed its switch and swapped a back in (issue 39,
	// finding 5; now dropped).
	"pred=delta,succ=delta,grace,third,crash=b|crash@swap@c#1",
	// CRI-O relayed c2's removal as b registered, b's comparison listed it
	// (the store lags), the store dropped it, and c registered while b's
	// switch held the dispatch (no comparison then): with the relayed
	// removal brought back by the listing (issue 39 finding 4 reverted:
	// NRI_BUGS=i39-f4, -tags nribugs) c, from the ledger, was told c2
	// exists (2 of 3 replays). The search now reaches it at depth 2: a
	// store step left out drops c2 at the next point after the relay.
	"pred=delta,succ=delta,grace,third,order=crio|remove@register@b#1;store@sync-round@b#1;third@swap@b#1",
}

// TestExplore explores the schedules of every configuration: in make test a
// few per configuration (NRI_EXPLORE_DEPTH, NRI_EXPLORE_BUDGET raise it,
// make soak does), or replays one schedule by its id (NRI_EXPLORE_ID).
func TestExplore(t *testing.T) {
	if id := os.Getenv("NRI_EXPLORE_ID"); id != "" {
		cfg, sched, err := parseScheduleID(id)
		if err != nil {
			t.Fatal(err)
		}
		res := runSchedule(t, cfg, sched)
		t.Logf("trace: %s", strings.Join(res.trace, " "))
		for _, f := range res.failures {
			t.Error(f)
		}
		return
	}
	for _, id := range pinnedSchedules {
		cfg, sched, err := parseScheduleID(id)
		if err != nil {
			t.Fatal(err)
		}
		if res := runSchedule(t, cfg, sched); len(res.failures) > 0 {
			t.Errorf("pinned schedule %s failed:\n%s", id, strings.Join(res.failures, "\n"))
		}
	}
	depth, budget := envInt("NRI_EXPLORE_DEPTH", 1), envInt("NRI_EXPLORE_BUDGET", 4)
	filter := os.Getenv("NRI_EXPLORE_CONFIG")
	start := time.Now()
	total := 0
	for _, cfg := range exploreConfigs() {
		if filter != "" && !strings.Contains(cfg.String(), filter) {
			continue
		}
		n, failed, failures := explore(t, cfg, depth, budget, nil)
		total += n
		if failed != "" {
			t.Errorf("schedule %s failed (replay: NRI_EXPLORE_ID='%s'):\n%s", failed, failed, strings.Join(failures, "\n"))
		}
	}
	t.Logf("explored %d schedules (depth %d, at most %d per configuration) in %s", total, depth, budget, time.Since(start).Round(time.Millisecond))
}
