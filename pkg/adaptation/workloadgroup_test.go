package adaptation

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// Workload groups' edges (groupKey, the newer row, groupNext) at the registry, where the
// decisions are made: who is placed as the candidate and who idle, whose
// switch goes through, who may send updates and what a refusal names, who
// joins when nobody serves. The join itself (the Synchronize under the gate)
// runs with plugins on upstream's stubs in test/legacyhandover.

// member is a plugin written for upstream in pod name of the DaemonSet p in
// kube-system at pod-template-generation tg, its pod annotated for handover
// if annotated, registered.
func (g *registry) member(name string, tg int64, annotated bool) *plugin {
	p := g.legacyInPod(name, tg)
	if annotated {
		p.ident.pod.Handover = HandoverWorkload
	}
	p.conn = connRegistered
	return p
}

// groupSwitch is the switch p's join takes in the hold it opened in its
// SyncFn call, once p answered its Synchronize.
func (g *registry) groupSwitch(p *plugin) error {
	_, err := joinOf(g, p).switchHeld(context.Background(), nil, nil, &holdTicket{})
	return err
}

// activeMember places p and switches to it, as its join does.
func (g *registry) activeMember(t *testing.T, p *plugin) *plugin {
	t.Helper()
	place(t, g, p)
	p.join = joinConfigured // configured: its join ran
	if err := g.groupSwitch(p); err != nil {
		t.Fatalf("switch to %s: %v", p.describe(), err)
	}
	return p
}

func wantState(t *testing.T, p *plugin, want instanceState) {
	t.Helper()
	if p.state != want {
		t.Fatalf("%s is %s, want %s", p.identity().PodString(), p.state, want)
	}
}

// wantDispatch fails t unless exactly ps receive events.
func wantDispatch(t *testing.T, g *registry, ps ...*plugin) {
	t.Helper()
	if len(g.plugins) != len(ps) {
		t.Fatalf("%d plugins receive events, want %d", len(g.plugins), len(ps))
	}
	for i, p := range ps {
		if g.plugins[i] != p {
			t.Fatalf("plugin %d receiving events is %s, want %s", i, g.plugins[i].identity().PodString(), p.identity().PodString())
		}
	}
}

// wantRefused fails t unless p's updates are refused with an error naming
// each of want.
func wantRefused(t *testing.T, g *registry, p *plugin, want ...string) {
	t.Helper()
	err := g.mayUpdate(p)
	if err == nil {
		t.Fatalf("updates of %s accepted", p.identity().PodString())
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("refusal %q does not name %q", err, w)
		}
	}
}

func wantAccepted(t *testing.T, g *registry, p *plugin) {
	t.Helper()
	if err := g.mayUpdate(p); err != nil {
		t.Fatalf("updates of %s refused: %v", p.identity().PodString(), err)
	}
}

// Two pods of one generation (the controller deleted one and created its
// replacement, or a node's pod recreated beside the old one): neither is
// newer, so the one serving keeps serving and the other is idle, whatever
// the order of connections; when nobody serves, the last registered of the
// newest generation is the one synchronized again.
func TestGroupSameGeneration(t *testing.T) {
	g := workloadRegistry()
	a := g.activeMember(t, g.member("p-a", 1, true))
	x := g.member("p-x", 1, true)
	place(t, g, x)
	wantState(t, x, stateIdle)
	wantDispatch(t, g, a)
	wantRefused(t, g, x, "superseded by", "kube-system/p-a")

	// Its join, had it started one, would not switch either.
	g.mu.Lock()
	g.move(x, x.slot, stateCandidate)
	g.mu.Unlock()
	if err := g.groupSwitch(x); !errors.Is(err, errIdled) {
		t.Fatalf("switch of an instance of the active one's generation: %v, want it idled", err)
	}
	wantState(t, x, stateIdle)
	wantDispatch(t, g, a)

	y := g.member("p-y", 1, true)
	old := g.member("p-old", 0, true)
	for _, p := range []*plugin{y, old} {
		place(t, g, p)
		wantState(t, p, stateIdle)
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, p := range []*plugin{x, y, old} {
		p.join = joinConfigured
	}
	if got := g.newestIdle(a.slot); got != y {
		t.Fatalf("next to serve: %s, want the last registered of generation 1", got.identity().PodString())
	}
	y.conn = connClosing
	if got := g.newestIdle(a.slot); got != x {
		t.Fatalf("next to serve with the last one closing: %s, want the other of generation 1", got.identity().PodString())
	}
}

// The older instance restarts (its connection goes, it connects again)
// while the newer is in its Synchronize: the newer is the candidate, so the
// restarted older is idle from its registration, not a second candidate,
// and no join starts for it; the newer's switch then has nobody to take over
// from and is the only one receiving events.
func TestGroupOlderReconnectsWhileNewerSynchronizes(t *testing.T) {
	g := workloadRegistry()
	a := g.activeMember(t, g.member("p-a", 1, true))
	b := g.member("p-b", 2, true)
	place(t, g, b)
	wantState(t, b, stateCandidate)
	b.join = joinRunning // in its Synchronize

	g.remove(a)
	wantState(t, a, stateGone)
	wantDispatch(t, g)
	if b.slot.candidate != b {
		t.Fatal("the newer lost its candidacy when the older went")
	}
	a2 := g.member("p-a", 1, true)
	place(t, g, a2)
	wantState(t, a2, stateIdle)
	// Nobody is active: the candidate may update, as a fresh upstream join;
	// the idle one may not.
	wantAccepted(t, g, b)
	wantRefused(t, g, a2, "no instance of its workload is active")

	if err := g.groupSwitch(b); err != nil {
		t.Fatal(err)
	}
	wantState(t, b, stateActive)
	wantState(t, a2, stateIdle)
	wantDispatch(t, g, b)
	wantRefused(t, g, a2, "superseded by", "kube-system/p-b", "template generation 2")
}

// Updates: the active instance's are applied; a candidate's are refused
// while an older one serves (naming it); an idle one's are refused naming
// the newer instance and its pod, before and after another rollout.
func TestGroupUpdatesOnlyFromTheActive(t *testing.T) {
	g := workloadRegistry()
	a := g.activeMember(t, g.member("p-a", 1, true))
	wantAccepted(t, g, a)

	b := g.member("p-b", 2, true)
	place(t, g, b)
	wantAccepted(t, g, a)
	wantRefused(t, g, b, "has not taken over from", "kube-system/p-a")

	if err := g.groupSwitch(b); err != nil {
		t.Fatal(err)
	}
	wantAccepted(t, g, b)
	wantRefused(t, g, a, "superseded by", "kube-system/p-b (template generation 2)")

	c := g.activeMember(t, g.member("p-c", 3, true))
	wantAccepted(t, g, c)
	for _, p := range []*plugin{a, b} {
		wantRefused(t, g, p, "superseded by", "kube-system/p-c (template generation 3)")
	}
	wantDispatch(t, g, c)
}

// A newer instance registering while another is in its Synchronize takes
// the candidacy; the one it displaced goes idle, still connected, and its
// switch, when its Synchronize returns, is refused; one no newer than the
// candidate is idle at once.
func TestGroupNewerDisplacesPendingCandidate(t *testing.T) {
	g := workloadRegistry()
	a := g.activeMember(t, g.member("p-a", 1, true))
	b := g.member("p-b", 2, true)
	place(t, g, b)
	c := g.member("p-c", 3, true)
	place(t, g, c)
	wantState(t, b, stateIdle)
	wantState(t, c, stateCandidate)
	mid := g.member("p-b2", 2, true)
	place(t, g, mid)
	wantState(t, mid, stateIdle)

	if err := g.groupSwitch(b); !errors.Is(err, errIdled) {
		t.Fatalf("the displaced candidate's switch: %v, want it idled", err)
	}
	wantDispatch(t, g, a)
	if err := g.groupSwitch(c); err != nil {
		t.Fatal(err)
	}
	wantState(t, a, stateIdle)
	wantDispatch(t, g, c)
}

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

// Which connections are members: only a process in a pod annotated with
// the known value and carrying a pod-template-generation, with the workload
// rule on; every other one is a plugin written for upstream as upstream runs
// it, beside the group (both receive events). Pods of another namespace or
// another DaemonSet are another group.
func TestGroupMembership(t *testing.T) {
	for _, c := range []struct {
		name    string
		newer   func(g *registry) *plugin
		grouped bool
	}{
		{"annotated", func(g *registry) *plugin { return g.member("p-b", 2, true) }, true},
		{"not annotated", func(g *registry) *plugin { return g.member("p-b", 2, false) }, false},
		{"unknown value", func(g *registry) *plugin {
			p := g.member("p-b", 2, true)
			p.ident.pod.Handover = "yes"
			return p
		}, false},
		{"no pod-template-generation", func(g *registry) *plugin { return g.member("p-b", -1, true) }, false},
		{"outside any pod", func(g *registry) *plugin {
			p := onHost(g.legacyOf("10", "p", 0))
			p.conn = connRegistered
			return p
		}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			g := workloadRegistry()
			a := g.activeMember(t, g.member("p-a", 1, true))
			b := c.newer(g)
			place(t, g, b)
			g.mu.Lock()
			key, grouped := g.groupKey(b)
			g.mu.Unlock()
			if grouped != c.grouped {
				t.Fatalf("grouped %v (key %q), want %v", grouped, key, c.grouped)
			}
			if c.grouped {
				if err := g.groupSwitch(b); err != nil {
					t.Fatal(err)
				}
				wantDispatch(t, g, b)
				return
			}
			// As upstream: its own slot, its own switch, both receive events
			// and both may update.
			if b.slot == nil || b.slot.group != "" || b.slot == a.slot {
				t.Fatal("a plugin outside the group was placed in it")
			}
			g.switchNow(t, b)
			if len(g.plugins) != 2 {
				t.Fatalf("%d plugins receive events, want both", len(g.plugins))
			}
			wantAccepted(t, g, a)
			wantAccepted(t, g, b)
		})
	}

	// Another namespace or another DaemonSet: another group, whose
	// instance is active beside this group's.
	for _, other := range []struct{ name, ns, pod string }{
		{"other namespace", "other", "p-o"},
		{"other DaemonSet", "kube-system", "impostor-o"},
	} {
		t.Run(other.name, func(t *testing.T) {
			g := workloadRegistry()
			a := g.activeMember(t, g.member("p-a", 1, true))
			o := g.member("p-o", 9, true)
			inPod(o, other.ns, other.pod, "p", 9).ident.pod.Handover = HandoverWorkload
			g.activeMember(t, o)
			if o.slot == a.slot {
				t.Fatal("a pod of another workload joined the group")
			}
			wantState(t, a, stateActive)
			if len(g.plugins) != 2 {
				t.Fatalf("%d plugins receive events, want both", len(g.plugins))
			}
		})
	}

	// The workload rule off: nobody is grouped.
	g := testRegistry(handoverPolicy{})
	p := g.member("p-a", 1, true)
	g.mu.Lock()
	_, grouped := g.groupKey(p)
	g.mu.Unlock()
	if grouped {
		t.Fatal("grouped with the workload rule off")
	}
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
