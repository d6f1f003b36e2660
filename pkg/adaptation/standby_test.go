package adaptation

import (
	"context"
	"errors"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nri-handover/nri/api"
)

// pauseAtSwap returns a schedule hook that, once armed, parks the first
// switch or reactivation to reach its swap (its hold held) until released.
func pauseAtSwap() (hook func(string), arm func(), atSwap, release chan struct{}) {
	var armed atomic.Bool
	var once sync.Once
	atSwap, release = make(chan struct{}), make(chan struct{})
	hook = func(point string) {
		if point == pointSwap && armed.Load() {
			once.Do(func() { close(atSwap); <-release })
		}
	}
	return hook, func() { armed.Store(true) }, atSwap, release
}

// A standby's reactivation is queued when its successor is lost; if a newer
// instance's switch held the dispatch then, that switch completes first and
// finds nobody active. The reactivation, whose reason (nobody serves the
// slot) is gone when it runs, is dropped: the newer instance stays active,
// and the standby, which stood by for an instance that is gone, is retired.
// Applied, it swapped the standby back in over the completed takeover and
// demoted the newer instance (the generation rule lets it when generations
// are undeclared, as here, or equal).
func TestStaleReactivationAfterCompletedTakeoverIsDropped(t *testing.T) {
	hook, arm, atSwap, release := pauseAtSwap()
	r, sock := startRuntime(t, newFakeRuntime(), WithStandbyGrace(time.Hour), WithScheduleHook(hook))
	defer r.Stop()

	a := handoverPlugin("10", "p", "a", 0, nil)
	a.connect(t, sock)
	defer a.close()
	waitOnlyActive(t, r, "a", "a active")
	b := handoverPlugin("10", "p", "b", 0, nil)
	b.connect(t, sock)
	defer b.close()
	waitOnlyActive(t, r, "b", "b active, a standing by")

	roles := make(chan api.PluginRole, 8)
	c := handoverPlugin("10", "p", "c", 0, nil)
	c.roleChange = func(_ context.Context, req *api.RoleChangeRequest) error {
		roles <- req.GetRole()
		return nil
	}
	arm()
	c.connect(t, sock)
	defer c.close()
	receive(t, atSwap, "c's switch holding the dispatch")
	b.close() // lost before c's swap: a's reactivation queues behind c's hold
	eventually(t, func() bool { return len(activeInstances(r, "10-p")) == 0 }, "b out of the dispatch")
	close(release)

	if got := receive(t, roles, "c's notice"); got != api.PluginRole_PLUGIN_ROLE_ACTIVE {
		t.Fatalf("c told %v", got)
	}
	var down *api.ShutdownRequest
	eventually(t, func() bool {
		select {
		case down = <-a.shutdowns:
			return true
		default:
			return slices.Equal(activeInstances(r, "10-p"), []string{"a"})
		}
	}, "a's reactivation ended")
	if got := activeInstances(r, "10-p"); !slices.Equal(got, []string{"c"}) {
		t.Fatalf("active after the stale reactivation: %q, want c", got)
	}
	if down.GetReason() != api.ShutdownReason_SHUTDOWN_REASON_SUPERSEDED || down.GetSuccessorInstance() != "c" {
		t.Errorf("a shut down with %v %q, successor %q; want SUPERSEDED by c", down.GetReason(), down.GetMessage(), down.GetSuccessorInstance())
	}
	select {
	case got := <-roles:
		t.Fatalf("c, whose takeover completed, was told %v", got)
	default:
	}
}

// The same, with the newer instance failing its ACTIVE notice: it is lost
// in turn and a second reactivation of the standby is queued. The first
// one, its reason back (nobody serves), reactivates the standby; the second
// finds it active and is dropped. It used to run with no resume cursor
// (the first had taken it) and panicked in cursor.since, taking the
// runtime down.
func TestSecondReactivationOfOneStandbyIsDropped(t *testing.T) {
	hook, arm, atSwap, release := pauseAtSwap()
	r, sock := startRuntime(t, newFakeRuntime(), WithStandbyGrace(time.Hour), WithScheduleHook(hook))
	defer r.Stop()

	aRoles := make(chan api.PluginRole, 8)
	a := handoverPlugin("10", "p", "a", 1, nil)
	a.roleChange = func(_ context.Context, req *api.RoleChangeRequest) error {
		aRoles <- req.GetRole()
		return nil
	}
	a.connect(t, sock)
	defer a.close()
	waitOnlyActive(t, r, "a", "a active")
	b := handoverPlugin("10", "p", "b", 2, nil)
	b.connect(t, sock)
	defer b.close()
	waitOnlyActive(t, r, "b", "b active, a standing by")
	for _, want := range []api.PluginRole{api.PluginRole_PLUGIN_ROLE_ACTIVE, api.PluginRole_PLUGIN_ROLE_STANDBY} {
		if got := receive(t, aRoles, "a's role"); got != want {
			t.Fatalf("a told %v, want %v", got, want)
		}
	}

	c := handoverPlugin("10", "p", "c", 3, nil)
	c.roleChange = func(_ context.Context, req *api.RoleChangeRequest) error {
		if req.GetRole() == api.PluginRole_PLUGIN_ROLE_ACTIVE {
			return errors.New("not today")
		}
		return nil
	}
	arm()
	c.connectRefused(t, sock)
	defer c.close()
	receive(t, atSwap, "c's switch holding the dispatch")
	b.close()
	eventually(t, func() bool { return len(activeInstances(r, "10-p")) == 0 }, "b out of the dispatch")
	close(release)

	if got := receive(t, aRoles, "a's reactivation"); got != api.PluginRole_PLUGIN_ROLE_ACTIVE {
		t.Fatalf("a told %v, want ACTIVE", got)
	}
	eventually(t, c.gone, "c disconnected")
	waitOnlyActive(t, r, "a", "a active again")
	// Both reactivations ended (the second dropped, not run): a is still
	// active, told nothing more, and connected.
	eventually(t, func() bool {
		r.hold.mu.Lock()
		defer r.hold.mu.Unlock()
		return len(r.hold.holders) == 0
	}, "no hold left")
	if got := activeInstances(r, "10-p"); !slices.Equal(got, []string{"a"}) {
		t.Fatalf("active: %q, want a", got)
	}
	select {
	case got := <-aRoles:
		t.Fatalf("a told %v after its reactivation", got)
	default:
	}
	if a.gone() {
		t.Fatal("the reactivated standby was disconnected")
	}
}

// Issue 39 finding 8: a rollout's new pod deleted around its plugin's
// takeover. Its predecessor, whose pod was not deleted, is superseded; when
// the new instance leaves (it exits on SIGTERM, or crashes in an event)
// with no successor of its own, the predecessor serves again at once,
// whatever kind of plugin it is: an opted-in instance stood by (no grace
// period is needed: it lives as long as its pod) and is told what changed
// in a delta round, or, without delta rounds, in a full round from the
// ledger or under the gate; a workload group's member, idle, is
// synchronized again. It used to be disconnected as SUPERSEDED at the
// switch (opted in), or left idle with nobody to serve (a group's member
// taken over by an opted-in build): no plugin served the node.

// supersededKind is a kind of plugin whose instance a newer pod's
// instance supersedes.
type supersededKind struct {
	name string
	// old and successor make the older pod's instance and the newer one's.
	old, successor func(id string, gen uint64, rec *recorder) *fakePlugin
	annotated      bool // the pods carry HandoverAnnotation
	// oldMember, successorMember: built on upstream's stub (no instance
	// id, no role notices).
	oldMember, successorMember bool
	// underGate: the runtime relays no removal, so the ledger is never
	// used and the predecessor is synchronized again from SyncFn.
	underGate bool
	delta     bool // the predecessor's round is a delta round
}

func supersededKinds() []supersededKind {
	optedIn := func(id string, gen uint64, rec *recorder) *fakePlugin { return handoverPlugin("10", "p", id, gen, rec) }
	withoutDelta := func(id string, gen uint64, rec *recorder) *fakePlugin { return optedInWithout("10", "p", id, gen, rec) }
	member := func(_ string, _ uint64, rec *recorder) *fakePlugin { return upstreamStub(rec) }
	return []supersededKind{
		{name: "delta rounds", old: optedIn, successor: optedIn, delta: true},
		{name: "delta rounds, ledger unused", old: optedIn, successor: optedIn, underGate: true, delta: true},
		{name: "one full round, from the ledger", old: withoutDelta, successor: withoutDelta},
		{name: "one full round, under the gate", old: withoutDelta, successor: withoutDelta, underGate: true},
		{name: "workload group member taken over by an opted-in build", old: member, successor: optedIn, annotated: true, oldMember: true},
		{name: "opted-in instance taken over by a build without handover", old: optedIn, successor: member, successorMember: true, delta: true},
		{name: "opted-in instance taken over by a build without handover, annotated", old: optedIn, successor: member, annotated: true, successorMember: true, delta: true},
	}
}

// successorLeaves is how the successor goes: its process exits between
// events (SIGTERM: the stub closes its connection), or it dies in an event.
type successorLeaves struct {
	name string
	// arm prepares b to go; leave makes it go, relaying an event if it
	// dies in one.
	arm   func(b *fakePlugin)
	leave func(t *testing.T, r *Adaptation, b *fakePlugin)
}

func successorLeavings() []successorLeaves {
	return []successorLeaves{
		{name: "graceful exit", arm: func(*fakePlugin) {}, leave: func(_ *testing.T, _ *Adaptation, b *fakePlugin) { b.close() }},
		{name: "crash in an event", arm: func(b *fakePlugin) {
			b.handle = func(ctx context.Context, e api.Event, req any) (any, error) {
				if e == api.Event_RUN_POD_SANDBOX && req.(*api.RunPodSandboxRequest).GetPod().GetId() == "s3" {
					go b.close()
					<-b.lost
					return nil, errors.New("crashed")
				}
				return nil, nil
			}
		}, leave: func(t *testing.T, r *Adaptation, _ *fakePlugin) {
			// Relayed to the successor, which dies in it: the runtime
			// proceeds without it.
			if err := r.RunPodSandbox(context.Background(), &RunPodSandboxRequest{Pod: &api.PodSandbox{Id: "s3"}}); err != nil {
				t.Fatal(err)
			}
		}},
	}
}

func TestSupersededInPodServesAgainWhenSuccessorLeaves(t *testing.T) {
	for _, kind := range supersededKinds() {
		for _, how := range successorLeavings() {
			t.Run(kind.name+", "+how.name, func(t *testing.T) {
				testServesAgain(t, kind, how)
			})
		}
	}
}

func testServesAgain(t *testing.T, kind supersededKind, how successorLeaves) {
	rt := newFakeRuntime()
	rt.relaysNoRemoval = kind.underGate
	rt.pods = []*api.PodSandbox{{Id: "s1"}}
	where := &podOfNext{}
	r, sock := startRuntime(t, rt, WithWorkloadResolver(where))
	defer r.Stop()

	recA, recB := newRecorder(), newRecorder()
	aRoles := make(chan api.PluginRole, 8)
	a := kind.old("a", 1, recA)
	a.roleChange = func(_ context.Context, req *api.RoleChangeRequest) error {
		aRoles <- req.GetRole()
		return nil
	}
	aID, bID := "a", "b"
	if kind.oldMember {
		aID = "" // upstream's stub declares no instance id
	}
	if kind.successorMember {
		bID = ""
	}
	where.set("p-h1", 1, kind.annotated)
	a.connect(t, sock)
	defer a.close()
	waitOnlyActive(t, r, aID, "the older pod's instance active")

	b := kind.successor("b", 2, recB)
	how.arm(b)
	where.set("p-h2", 2, kind.annotated)
	b.connect(t, sock)
	defer b.close()
	waitOnlyActive(t, r, bID, "the newer pod's instance active")
	pa := waitSwitched(t, r, bID)
	r.reg.mu.Lock()
	state := pa.slotStateOf(r, aID)
	r.reg.mu.Unlock()
	if state != stateStandby && state != stateIdle {
		t.Fatalf("the superseded instance, its pod not deleted, is %s: want it kept (standby or idle)", state)
	}

	s2 := &api.PodSandbox{Id: "s2"}
	rt.mu.Lock()
	rt.pods = append(rt.pods, s2)
	rt.mu.Unlock()
	if err := r.RunPodSandbox(context.Background(), &RunPodSandboxRequest{Pod: s2}); err != nil {
		t.Fatal(err)
	}
	syncsBefore := a.syncCount()

	how.leave(t, r, b)
	waitOnlyActive(t, r, aID, "the older pod's instance serving again")
	if kind.oldMember {
		// A group's member is told nothing but its round, as upstream.
		eventually(t, func() bool { return a.syncCount() > syncsBefore }, "the member synchronized again")
	} else {
		for {
			role := receive(t, aRoles, "the older instance's role")
			if role == api.PluginRole_PLUGIN_ROLE_ACTIVE && a.syncCount() > syncsBefore {
				break
			}
		}
	}
	round := a.lastRound()
	if round.delta != kind.delta {
		t.Errorf("the round serving again: delta %v, want %v", round.delta, kind.delta)
	}
	if !slices.Contains(round.pods, "s2") || !kind.delta && !slices.Contains(round.pods, "s1") {
		t.Errorf("the round serving again lists pods %q: want what changed (s2) or, full, s1 and s2", round.pods)
	}
	if !kind.oldMember && !round.reactivation {
		t.Errorf("the round serving again is not marked as a reactivation")
	}

	before := recA.count("10-p:RunPodSandbox")
	if err := r.RunPodSandbox(context.Background(), &RunPodSandboxRequest{Pod: &api.PodSandbox{Id: "s4"}}); err != nil {
		t.Fatal(err)
	}
	if got := recA.count("10-p:RunPodSandbox") - before; got != 1 {
		t.Fatalf("the next event reached the older instance %d times, want 1", got)
	}
	select {
	case req := <-a.shutdowns:
		t.Fatalf("the older instance was told to shut down: %v %q", req.GetReason(), req.GetMessage())
	default:
	}
}

// waitSwitched waits until the instance id's switch completed and returns
// it.
func waitSwitched(t *testing.T, r *Adaptation, id string) *plugin {
	t.Helper()
	var p *plugin
	eventually(t, func() bool {
		r.reg.mu.Lock()
		defer r.reg.mu.Unlock()
		for q := range r.reg.all {
			if q.instance == id && q.state == stateActive && !q.join.switching() {
				p = q
				return true
			}
		}
		return false
	}, "the switch to "+id+" completed")
	return p
}

// slotStateOf is the state of the other instance, id, of p's name. r.reg.mu
// is held.
func (p *plugin) slotStateOf(r *Adaptation, id string) instanceState {
	for q := range r.reg.all {
		if q != p && q.base == p.base && q.instance == id {
			return q.state
		}
	}
	return stateGone
}

func (f *fakePlugin) syncCount() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, s := range f.syncs {
		if !s.GetMore() {
			n++
		}
	}
	return n
}

// syncSeen is what a plugin was told in its last synchronization round.
type syncSeen struct {
	pods         []string
	delta        bool
	reactivation bool
}

func (f *fakePlugin) lastRound() syncSeen {
	f.mu.Lock()
	defer f.mu.Unlock()
	var seen syncSeen
	start := len(f.syncs) - 1
	for start > 0 && f.syncs[start-1].GetMore() {
		start--
	}
	for _, s := range f.syncs[start:] {
		for _, p := range s.GetPods() {
			seen.pods = append(seen.pods, p.GetId())
		}
		seen.delta = seen.delta || s.GetDelta()
		seen.reactivation = seen.reactivation || s.GetTakeover().GetReactivation()
	}
	return seen
}

// A standby in a pod stands by for as long as its pod runs, but keeps its
// resume cursor only for resumeBound: an open cursor keeps every change the
// ledger records, removals included, so the ledger would grow for as long
// as the pod. Past it the cursor is closed (the ledger keeps none open),
// and a reactivation tells the standby the whole state in one full round.
func TestStandbyInPodPastResumeBoundGetsAFullRound(t *testing.T) {
	timed := make(chan struct{}, 4)
	hook := func(point string) {
		if point == pointGraceDone {
			timed <- struct{}{}
		}
	}
	rt := newFakeRuntime()
	rt.pods = []*api.PodSandbox{{Id: "s1"}}
	where := &podOfNext{}
	r, sock := startRuntime(t, rt, WithWorkloadResolver(where), WithScheduleHook(hook))
	defer r.Stop()
	r.reg.mu.Lock()
	r.reg.policy.resumeBound = time.Millisecond
	r.reg.mu.Unlock()

	aRoles := make(chan api.PluginRole, 8)
	a := handoverPlugin("10", "p", "a", 1, nil)
	a.roleChange = func(_ context.Context, req *api.RoleChangeRequest) error {
		aRoles <- req.GetRole()
		return nil
	}
	where.set("p-h1", 1, false)
	a.connect(t, sock)
	defer a.close()
	waitOnlyActive(t, r, "a", "a active")
	b := handoverPlugin("10", "p", "b", 2, nil)
	where.set("p-h2", 2, false)
	b.connect(t, sock)
	defer b.close()
	waitSwitched(t, r, "b")
	receive(t, timed, "the standby's timer")
	open := r.ledger.Stats().Cursors
	if open != 0 {
		t.Fatalf("%d ledger cursors open past the standby's resume bound, want none", open)
	}

	s2 := &api.PodSandbox{Id: "s2"}
	rt.mu.Lock()
	rt.pods = append(rt.pods, s2)
	rt.mu.Unlock()
	if err := r.RunPodSandbox(context.Background(), &RunPodSandboxRequest{Pod: s2}); err != nil {
		t.Fatal(err)
	}
	b.close()
	waitOnlyActive(t, r, "a", "a serving again")
	for _, want := range []api.PluginRole{api.PluginRole_PLUGIN_ROLE_ACTIVE, api.PluginRole_PLUGIN_ROLE_STANDBY, api.PluginRole_PLUGIN_ROLE_ACTIVE} {
		if got := receive(t, aRoles, "a's role"); got != want {
			t.Fatalf("a told %v, want %v", got, want)
		}
	}
	round := a.lastRound()
	if round.delta || !round.reactivation || !slices.Contains(round.pods, "s1") || !slices.Contains(round.pods, "s2") {
		t.Fatalf("a's reactivation round: delta %v, reactivation %v, pods %q; want a full reactivation round with s1 and s2",
			round.delta, round.reactivation, round.pods)
	}
}

// A standby reactivated after its successor went away is told what changed
// while it stood by, in a delta round marked as a reactivation, not the
// whole node again; and the journal kept for it goes with it.
func TestReactivatedStandbyGetsWhatChangedSinceItStoodBy(t *testing.T) {
	rt := newFakeRuntime()
	pod := &api.PodSandbox{Id: "p1"}
	rt.pods = []*api.PodSandbox{pod}
	rt.containers = []*api.Container{{Id: "c1", PodSandboxId: "p1", State: api.ContainerState_CONTAINER_RUNNING}}
	r, sock := startRuntime(t, rt, WithStandbyGrace(time.Hour))
	defer r.Stop()

	optIn := func(id string, gen uint64) func(*api.RegisterPluginRequest) {
		return func(q *api.RegisterPluginRequest) {
			q.InstanceId, q.Generation = id, gen
			q.Features = []string{api.FeatureHandover, api.FeatureDeltaSync}
		}
	}
	a := newFakePlugin("10", "p", nil)
	a.regReq = optIn("a", 1)
	a.connect(t, sock)
	defer a.close()
	waitActive(t, r, "10-p")
	b := newFakePlugin("10", "p", nil)
	b.regReq = optIn("b", 2)
	b.connect(t, sock)
	waitOnlyActive(t, r, "b", "b active, a standing by")

	c2 := &api.Container{Id: "c2", PodSandboxId: "p1"}
	if _, err := r.CreateContainer(context.Background(), &CreateContainerRequest{Pod: pod, Container: c2}); err != nil {
		t.Fatalf("CreateContainer: %v", err)
	}
	a.mu.Lock()
	before := len(a.syncs)
	a.mu.Unlock()
	b.close()
	// Read as an event reads it, after the reactivation's hold: a is in
	// the dispatch list from its swap, before its round.
	eventually(t, func() bool { return slices.Equal(dispatchedTo(r, "10-p"), []string{"a"}) }, "a reactivated")

	a.mu.Lock()
	rounds := slices.Clone(a.syncs[before:])
	a.mu.Unlock()
	if len(rounds) != 1 {
		t.Fatalf("a got %d rounds on reactivation, want 1", len(rounds))
	}
	got := rounds[0]
	if !got.GetDelta() || !got.GetTakeover().GetReactivation() {
		t.Fatalf("reactivation round: delta %v, takeover %v", got.GetDelta(), got.GetTakeover())
	}
	if ctrs := got.GetContainers(); len(ctrs) != 1 || ctrs[0].GetId() != "c2" {
		t.Fatalf("reactivation round carries %v, want only c2 (created while a stood by)", ctrs)
	}
	eventually(t, func() bool { return r.ledger.Stats().Cursors == 0 }, "the standby's journal released")
}
