package adaptation

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nri-handover/nri/api"
)

// eventWaiting tells whether an event waits for a hold.
func eventWaiting(r *Adaptation) bool {
	h := &r.hold
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.events) > len(h.flight)
}

// switchQueued tells whether a slot's candidate has a switch ticket queued
// or held.
func switchQueued(r *Adaptation) bool {
	g := r.reg
	g.mu.Lock()
	defer g.mu.Unlock()
	for p := range g.all {
		if p.slot != nil && p.slot.switching != nil {
			return true
		}
	}
	return false
}

// A candidate displaced while its switch is queued leaves no ticket behind:
// when the active instance is then lost, the hold is reserved for the new
// candidate, joining from the ledger, and an event sent meanwhile waits for
// its switch and reaches it (the proposal's "A dies while B synchronizes
// from the ledger: events wait for B's switch"). The displaced candidate's
// stale ticket, urged instead, ended at once and let the event reach nobody.
func TestActiveLostAfterCandidateDisplacedWhileItsSwitchQueued(t *testing.T) {
	rt := newFakeRuntime()
	r, sock := startRuntime(t, rt)
	defer r.Stop()

	// a is active and handles an event that stays in flight: b's switch
	// queues behind it.
	inFlight, stuck := make(chan struct{}), make(chan struct{})
	defer close(stuck)
	var inFlightOnce sync.Once
	a := handoverPlugin("10", "p", "a", 1, nil)
	a.events.Set(api.Event_RUN_POD_SANDBOX)
	a.handle = func(context.Context, api.Event, any) (any, error) {
		inFlightOnce.Do(func() { close(inFlight) })
		<-stuck
		return nil, nil
	}
	a.connect(t, sock)
	defer a.close()
	eventually(t, func() bool { return slices.Equal(activeInstances(r, "10-p"), []string{"a"}) }, "a active")
	e1 := make(chan error, 1)
	go func() {
		e1 <- r.RunPodSandbox(context.Background(), &RunPodSandboxRequest{Pod: &PodSandbox{Id: "pod1"}})
	}()
	receive(t, inFlight, "the first event in a's handler")

	// b, without delta rounds, joins from the ledger: its switch queues.
	b := handoverPlugin("10", "p", "b", 2, nil)
	b.regReq = func(q *api.RegisterPluginRequest) {
		q.InstanceId, q.Generation, q.Features = "b", 2, []string{api.FeatureHandover}
	}
	b.connect(t, sock)
	defer b.close()
	eventually(t, func() bool { return switchQueued(r) }, "b's switch queued")

	// c displaces b and is in its first round from the ledger.
	handled := make(chan string, 4)
	inRound, roundGo := make(chan struct{}), make(chan struct{})
	var roundOnce sync.Once
	c := handoverPlugin("10", "p", "c", 3, nil)
	c.events.Set(api.Event_RUN_POD_SANDBOX)
	c.onSync = func(*api.SynchronizeRequest) {
		roundOnce.Do(func() { close(inRound); <-roundGo })
	}
	c.handle = func(_ context.Context, _ api.Event, req any) (any, error) {
		handled <- req.(*api.RunPodSandboxRequest).GetPod().GetId()
		return nil, nil
	}
	c.connect(t, sock)
	defer c.close()
	receive(t, inRound, "c in its round from the ledger")

	// a is lost; an event sent now must wait for c's switch.
	a.close()
	eventually(t, func() bool { return len(activeInstances(r, "10-p")) == 0 }, "a out of the dispatch")
	<-e1 // ended with a's connection
	e2 := make(chan error, 1)
	go func() {
		e2 <- r.RunPodSandbox(context.Background(), &RunPodSandboxRequest{Pod: &PodSandbox{Id: "pod2"}})
	}()
	eventually(t, func() bool { return len(e2) > 0 || eventWaiting(r) }, "the event sent or waiting")
	close(roundGo)
	if err := receive(t, e2, "the event sent while c joined"); err != nil {
		t.Fatalf("RunPodSandbox: %v", err)
	}
	select {
	case id := <-handled:
		if id != "pod2" {
			t.Fatalf("c handled %s, want pod2", id)
		}
	default:
		t.Fatalf("the event sent while c synchronized from the ledger reached no instance (active now: %q)", activeInstances(r, "10-p"))
	}
}

// holdWaiter tells whether anything waits for a change of the hold (a
// plugin's UpdateContainers waiting for a release, when no event and no
// holder waits).
func holdWaiter(r *Adaptation) bool {
	h := &r.hold
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.changed != nil
}

// updateReply is what UpdateContainers answered.
type updateReply struct {
	rpl *api.UpdateContainersResponse
	err error
}

// sendUpdates calls UpdateContainers from f in the background.
func sendUpdates(f *fakePlugin, ids ...string) chan updateReply {
	var updates []*api.ContainerUpdate
	for _, id := range ids {
		updates = append(updates, &api.ContainerUpdate{ContainerId: id})
	}
	ch := make(chan updateReply, 1)
	go func() {
		rpl, err := f.runtime.UpdateContainers(context.Background(), &api.UpdateContainersRequest{Update: updates})
		ch <- updateReply{rpl, err}
	}()
	return ch
}

// switchInActiveNotice starts b's takeover from the active instance of 10-p
// and returns once b's switch holds the dispatch, in b's ACTIVE handler;
// closing the returned channel lets the handler return.
func switchInActiveNotice(t *testing.T, sock string, id string, gen uint64) (b *fakePlugin, release chan struct{}) {
	t.Helper()
	told, release := make(chan struct{}), make(chan struct{})
	b = handoverPlugin("10", "p", id, gen, nil)
	b.roleChange = func(_ context.Context, req *api.RoleChangeRequest) error {
		if req.GetRole() == api.PluginRole_PLUGIN_ROLE_ACTIVE {
			close(told)
			<-release
		}
		return nil
	}
	b.connect(t, sock)
	receive(t, told, "b's ACTIVE notice")
	return b, release
}

// A plugin that did not opt in sees upstream's UpdateContainers while
// another plugin switches: its call waits for the switch's hold, which is
// short, and is answered with what UpdateFn returned, after it ran. It used
// to be deferred to the release and answered at once with nothing failed,
// whatever UpdateFn then said.
func TestUpdateContainersDuringHoldGetsUpdateFnsReply(t *testing.T) {
	rt := newFakeRuntime()
	rt.fail = func(u []*api.ContainerUpdate) []*api.ContainerUpdate {
		return slices.DeleteFunc(slices.Clone(u), func(x *api.ContainerUpdate) bool { return x.GetContainerId() != "c2" })
	}
	r, sock := startRuntime(t, rt)
	defer r.Stop()

	legacy := newFakePlugin("20", "l", nil)
	legacy.connect(t, sock)
	defer legacy.close()
	a := handoverPlugin("10", "p", "a", 1, nil)
	a.connect(t, sock)
	defer a.close()
	waitActive(t, r, "20-l", "10-p")

	b, release := switchInActiveNotice(t, sock, "b", 2)
	defer b.close()
	reply := sendUpdates(legacy, "c1", "c2")
	eventually(t, func() bool { return len(reply) > 0 || holdWaiter(r) }, "the updates answered or waiting")
	select {
	case got := <-reply:
		t.Fatalf("UpdateContainers answered during the switch's hold: %v, %v", got.rpl, got.err)
	case <-rt.updates:
		t.Fatal("UpdateFn called during the switch's hold")
	default:
	}
	close(release)

	got := receive(t, reply, "the reply")
	select {
	case applied := <-rt.updates:
		if len(applied) != 2 {
			t.Fatalf("UpdateFn got %d updates, want 2", len(applied))
		}
	default:
		t.Fatal("answered before UpdateFn ran")
	}
	if got.err != nil {
		t.Fatalf("UpdateContainers: %v", got.err)
	}
	if f := got.rpl.GetFailed(); len(f) != 1 || f[0].GetContainerId() != "c2" {
		t.Fatalf("reply's failed updates: %v, want UpdateFn's (c2)", f)
	}
}

// An opted-in instance's update that waited across its successor's switch
// is checked again when it would be applied: the instance was superseded
// meanwhile, so it is refused, and never applied after its successor's
// first updates (those of the successor's ACTIVE handler, applied at the
// release).
func TestSupersededUpdateWaitingAcrossSwitchIsRefused(t *testing.T) {
	hook, arm, atSwap, release := pauseAtSwap()
	rt := newFakeRuntime()
	r, sock := startRuntime(t, rt, WithStandbyGrace(time.Hour), WithScheduleHook(hook))
	defer r.Stop()

	a := handoverPlugin("10", "p", "a", 1, nil)
	a.connect(t, sock)
	defer a.close()
	waitOnlyActive(t, r, "a", "a active")

	b := handoverPlugin("10", "p", "b", 2, nil)
	b.roleChange = func(ctx context.Context, req *api.RoleChangeRequest) error {
		if req.GetRole() != api.PluginRole_PLUGIN_ROLE_ACTIVE {
			return nil
		}
		_, err := b.runtime.UpdateContainers(ctx, &api.UpdateContainersRequest{
			Update: []*api.ContainerUpdate{{ContainerId: "from-b"}},
		})
		return err
	}
	arm()
	b.connect(t, sock)
	defer b.close()
	receive(t, atSwap, "b's switch holding the dispatch")
	reply := sendUpdates(a, "from-a")
	eventually(t, func() bool { return len(reply) > 0 || holdWaiter(r) }, "a's updates answered or waiting")
	close(release)

	got := receive(t, reply, "a's reply")
	if got.err == nil || !strings.Contains(got.err.Error(), "was superseded by") {
		t.Fatalf("a's update that waited across b's switch: %v, %v; want refused as superseded", got.rpl, got.err)
	}
	for {
		u := receive(t, rt.updates, "b's update applied")
		if id := u[0].GetContainerId(); id == "from-a" {
			t.Fatal("a's update applied after its successor's")
		} else if id == "from-b" {
			break
		}
	}
	select {
	case u := <-rt.updates:
		t.Fatalf("applied after b's: %v", u)
	default:
	}
}

// Stop while a plugin's UpdateContainers waits for a hold answers it at
// once with an error: it neither waits for the hold nor reaches UpdateFn.
func TestStopWhileUpdateContainersWaitsForHold(t *testing.T) {
	rt := newFakeRuntime()
	r, sock := startRuntime(t, rt)
	stopped := false
	defer func() {
		if !stopped {
			r.Stop()
		}
	}()

	legacy := newFakePlugin("20", "l", nil)
	legacy.connect(t, sock)
	defer legacy.close()
	a := handoverPlugin("10", "p", "a", 1, nil)
	a.connect(t, sock)
	defer a.close()
	waitActive(t, r, "20-l", "10-p")

	b, release := switchInActiveNotice(t, sock, "b", 2)
	defer b.close()
	defer close(release)
	reply := sendUpdates(legacy, "c1")
	eventually(t, func() bool { return len(reply) > 0 || holdWaiter(r) }, "the updates answered or waiting")
	stopDone := make(chan struct{})
	go func() {
		defer close(stopDone)
		r.Stop()
	}()
	stopped = true
	got := receive(t, reply, "the reply after Stop")
	if got.err == nil || !strings.Contains(got.err.Error(), errStopped.Error()) {
		t.Fatalf("UpdateContainers waiting when Stop began: %v, %v; want an error saying the runtime stops", got.rpl, got.err)
	}
	select {
	case u := <-rt.updates:
		t.Fatalf("UpdateFn called after Stop began: %v", u)
	default:
	}
	receive(t, stopDone, "Stop")
}

// A plugin that calls UpdateContainers from its handler of an event, while
// a switch's hold is queued behind that event, gets UpdateFn's reply at
// once, as upstream's does: waiting for the hold would stall the event it
// is handling until the request timeout and drop the plugin.
func TestUpdateContainersFromAnEventHandlerPassesAQueuedHold(t *testing.T) {
	rt := newFakeRuntime()
	r, sock := startRuntime(t, rt)
	defer r.Stop()

	inHandler, queued := make(chan struct{}), make(chan struct{})
	var fromHandler updateReply
	legacy := newFakePlugin("20", "l", nil)
	legacy.handle = func(ctx context.Context, e api.Event, _ any) (any, error) {
		if e == api.Event_RUN_POD_SANDBOX {
			close(inHandler)
			<-queued
			rpl, err := legacy.runtime.UpdateContainers(ctx, &api.UpdateContainersRequest{
				Update: []*api.ContainerUpdate{{ContainerId: "c1"}}})
			fromHandler = updateReply{rpl, err}
		}
		return nil, nil
	}
	legacy.connect(t, sock)
	defer legacy.close()
	a := handoverPlugin("10", "p", "a", 1, nil)
	a.connect(t, sock)
	defer a.close()
	waitActive(t, r, "20-l", "10-p")

	ran := make(chan error, 1)
	go func() {
		ran <- r.RunPodSandbox(context.Background(), &api.RunPodSandboxRequest{Pod: &api.PodSandbox{Id: "pod0"}})
	}()
	receive(t, inHandler, "the legacy plugin's RunPodSandbox handler")
	b := handoverPlugin("10", "p", "b", 2, nil)
	b.connect(t, sock)
	defer b.close()
	eventually(t, func() bool {
		r.hold.mu.Lock()
		defer r.hold.mu.Unlock()
		return len(r.hold.holders) > 0
	}, "b's switch queued behind the event")
	close(queued)

	if err := receive(t, ran, "RunPodSandbox"); err != nil {
		t.Fatalf("RunPodSandbox: %v", err)
	}
	if fromHandler.err != nil {
		t.Fatalf("UpdateContainers from the handler: %v", fromHandler.err)
	}
	select {
	case <-rt.updates:
	default:
		t.Fatal("UpdateFn was not called for the handler's updates")
	}
	if legacy.gone() {
		t.Fatal("the legacy plugin was dropped")
	}
	eventually(t, func() bool { return slices.Equal(activeInstances(r, "10-p"), []string{"b"}) }, "b took over")
}

// Issue 30 finding 3 (and the case the vacancy watch served): the active instance
// lost, no standby, while a candidate synchronizes from the ledger: events
// wait for the candidate instead of reaching nobody.
func TestEventsWaitForTheCandidateOnceNobodyServes(t *testing.T) {
	rt := newFakeRuntime()
	pod := &api.PodSandbox{Id: "p1"}
	rt.pods = []*api.PodSandbox{pod}
	r, sock := startRuntime(t, rt)
	defer r.Stop()
	a := handoverPlugin("10", "p", "a", 1, nil)
	a.connect(t, sock)
	waitOnlyActive(t, r, "a", "a active")

	recB := newRecorder()
	b := handoverPlugin("10", "p", "b", 2, recB)
	inSync, release := holdFullRound(b)
	b.connect(t, sock)
	defer b.close()
	receive(t, inSync, "b synchronizing")
	a.close()
	eventually(t, func() bool { return len(r.reg.active()) == 0 }, "a gone")
	ran := make(chan error, 1)
	go func() { ran <- r.RunPodSandbox(context.Background(), &RunPodSandboxRequest{Pod: pod}) }()
	close(release)
	if err := receive(t, ran, "the event"); err != nil {
		t.Fatal(err)
	}
	waitOnlyActive(t, r, "b", "b active")
	if !slices.Contains(recB.list(), "10-p:RunPodSandbox") {
		t.Fatalf("an event dispatched while nobody served reached nobody: b handled %v", recB.list())
	}
}

// The active instance lost while its successor's switch is queued behind
// another hold: the queued switch becomes urgent (it must not wait behind a
// second hold reserved for it, which nobody would take), and the successor
// becomes active.
func TestActiveLostWhileSuccessorSwitchIsQueued(t *testing.T) {
	rt := newFakeRuntime()
	r, sock := startRuntime(t, rt)
	defer r.Stop()
	a := handoverPlugin("10", "p", "a", 1, nil)
	a.connect(t, sock)
	waitOnlyActive(t, r, "a", "a active")

	other := r.hold.enqueue() // another switch holding the dispatch
	if err := r.acquire(context.Background(), other); err != nil {
		t.Fatal(err)
	}
	b := handoverPlugin("10", "p", "b", 2, nil)
	b.connect(t, sock)
	defer b.close()
	eventually(t, func() bool {
		r.reg.mu.Lock()
		defer r.reg.mu.Unlock()
		for q := range r.reg.all {
			if q.instance == "b" && q.slot != nil && q.slot.switching != nil {
				return true
			}
		}
		return false
	}, "b's switch queued")
	a.close()
	eventually(t, func() bool { return len(r.reg.active()) == 0 }, "a gone")
	r.release(other)
	waitOnlyActive(t, r, "b", "b active after a was lost while its switch was queued")
}
