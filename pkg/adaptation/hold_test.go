package adaptation

import (
	"context"
	"slices"
	"sync"
	"testing"

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
