package adaptation

import (
	"testing"
)

// serveNext's rows for workload groups (groupNext, groupsServeAgain) at the
// registry: who joins when nobody serves, and only as admission lets it.
// The join itself (the Synchronize under the gate) runs with plugins on
// upstream's stubs in test/legacyhandover.

// A candidate displaced by a newer one that goes before its switch (it
// died in its Synchronize) is the candidate again and takes over from the
// older one serving, as it would have without the newer one: the newest
// connected instance serves. An idle instance older than the one serving
// never joins.
func TestGroupDisplacedCandidateJoinsWhenTheNewerGoes(t *testing.T) {
	g := workloadRegistry()
	a := g.activeMember(t, g.member("p-a", 1, true))
	old := g.member("p-old", 0, true)
	place(t, g, old)
	b := g.member("p-b", 2, true)
	place(t, g, b)
	for _, p := range []*plugin{old, b} {
		p.join = joinConfigured
	}
	b.join = joinRunning // in its Synchronize: its join loop goes on
	c := g.member("p-c", 3, true)
	place(t, g, c)
	wantState(t, b, stateIdle)

	g.remove(c)
	wantState(t, b, stateCandidate)
	wantState(t, old, stateIdle)
	wantDispatch(t, g, a)
	if err := g.groupSwitch(b); err != nil {
		t.Fatal(err)
	}
	wantState(t, a, stateIdle)
	wantDispatch(t, g, b)

	// The one serving goes: the newest idle one is the candidate, never an
	// older one while a newer serves.
	b.join = joinConfigured
	a.join = joinRunning // its join loop, started by the loss, is not run here
	g.remove(b)
	wantState(t, a, stateCandidate)
	wantState(t, old, stateIdle)
}

// The one serving goes while the newest idle member is registered but not
// configured yet: that one is the candidate (it joins once configured), not
// an older configured one, which would be switched to and from at once.
func TestGroupNewestIdleJoinsOnceConfigured(t *testing.T) {
	g := workloadRegistry()
	c := g.activeMember(t, g.member("p-c", 3, true))
	a := g.member("p-a", 1, true)
	place(t, g, a)
	a.join = joinConfigured
	b := g.member("p-b", 2, true)
	place(t, g, b) // not configured yet
	g.remove(c)
	wantState(t, b, stateCandidate)
	wantState(t, a, stateIdle)
	wantDispatch(t, g)
}

// Who serves next is admission's: an idle member is not made the candidate
// (and so neither synchronized under the gate for nothing nor let update
// containers as a fresh join) when admission would refuse it at its switch.
// Here an opted-in build of a later generation took over the group's
// active member (a rollout WithHandover after the annotated upstream-stub
// build); when another member goes, the idle older one stays idle.
func TestGroupNextAsksAdmission(t *testing.T) {
	g := workloadRegistry()
	a := g.activeMember(t, g.member("p-a", 1, true))
	old := g.member("p-old", 0, true)
	place(t, g, old)
	other := g.member("p-x", 0, true)
	place(t, g, other)
	b := inPod(g.optedIn("10", "p", "b", 0, "v2"), "kube-system", "p-b", "p", 2)
	b.ident.pod.Handover = HandoverWorkload
	place(t, g, b)
	g.switchNow(t, b)
	wantState(t, a, stateIdle) // a member, it is not disconnected
	wantDispatch(t, g, b)
	wantRefused(t, g, a, "no instance of its workload is active")

	g.remove(other)
	wantState(t, a, stateIdle)
	wantState(t, old, stateIdle)
	wantDispatch(t, g, b)
	wantRefused(t, g, old, "no instance of its workload is active")
}
