package adaptation

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/nri-handover/nri/api"
)

func TestDispatchOrderIsTotal(t *testing.T) {
	mk := func(idx, base string, seq uint64) *plugin { return &plugin{idx: idx, base: base, seq: seq} }
	ps := []*plugin{mk("10", "b", 1), mk("10", "a", 5), mk("05", "z", 3), mk("10", "a", 2)}
	slices.SortFunc(ps, dispatchOrder)
	var got []string
	for _, p := range ps {
		got = append(got, p.name()+"#"+string(rune('0'+p.seq)))
	}
	want := []string{"05-z#3", "10-a#2", "10-a#5", "10-b#1"}
	if !slices.Equal(got, want) {
		t.Fatalf("order %v, want %v", got, want)
	}
}

// Without handover, instances sharing a name and index all get events, as upstream.
func TestSameNameAndIndexDispatchInRegistrationOrder(t *testing.T) {
	rt := newFakeRuntime()
	r, sock := startRuntime(t, rt, WithPluginHandover(false))
	defer r.Stop()

	rec := newRecorder()
	first := newFakePlugin("10", "twin", rec)
	first.connect(t, sock)
	defer first.close()
	receive(t, first.synced, "first twin synchronized")
	second := newFakePlugin("10", "twin", rec)
	second.connect(t, sock)
	defer second.close()
	receive(t, second.synced, "second twin synchronized")
	eventually(t, func() bool { return len(r.reg.active()) == 2 }, "both twins active")

	first.handle = func(context.Context, api.Event, any) (any, error) { rec.add("first"); return nil, nil }
	second.handle = func(context.Context, api.Event, any) (any, error) { rec.add("second"); return nil, nil }
	if err := r.StartContainer(context.Background(), &StartContainerRequest{}); err != nil {
		t.Fatal(err)
	}
	got := slices.DeleteFunc(rec.list(), func(s string) bool { return s != "first" && s != "second" })
	if !slices.Equal(got, []string{"first", "second"}) {
		t.Fatalf("twins called as %v", got)
	}
}

// Registrations of one name and index arriving at once, opted-in and
// written for upstream alike, never read each other's identity while it is
// being written (run with the race detector), and settle as the rules say
// whatever the order: the highest rollout generation is the one instance
// of the name that receives events; every other connection is refused,
// displaced or superseded, none stays beside it.
func TestConcurrentRegistrationsOfOneName(t *testing.T) {
	rt := newFakeRuntime()
	r, sock := startRuntime(t, rt)
	defer r.Stop()

	const n = 8
	plugins := make([]*fakePlugin, n)
	for i := range plugins {
		f := newFakePlugin("10", "p", nil)
		if i%2 == 0 {
			id := fmt.Sprintf("i%d", i)
			f.regReq = func(q *api.RegisterPluginRequest) {
				q.InstanceId, q.Generation = id, uint64(i+1)
				q.Features = []string{api.FeatureHandover, api.FeatureDeltaSync}
			}
		}
		f.dial(t, sock)
		defer f.close()
		plugins[i] = f
	}
	var wg sync.WaitGroup
	for _, f := range plugins {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_ = f.register(context.Background()) // refusals are checked below, by the outcome
		}()
	}
	wg.Wait()
	newest := fmt.Sprintf("i%d", n-2)
	eventually(t, func() bool {
		ids := activeInstances(r, "10-p")
		if len(ids) > 1 {
			for _, id := range ids {
				if id == newest {
					t.Fatalf("active instances of 10-p: %q: the newest beside others", ids)
				}
			}
		}
		if len(ids) != 1 || ids[0] != newest {
			return false
		}
		for i, f := range plugins {
			if i != n-2 && !f.gone() {
				return false
			}
		}
		return true
	}, "the newest generation active alone, every other connection closed")
	if plugins[n-2].gone() {
		t.Fatal("the newest instance was disconnected")
	}
}

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

func wantAccepted(t *testing.T, g *registry, p *plugin) {
	t.Helper()
	if err := g.mayUpdate(p); err != nil {
		t.Fatalf("updates of %s refused: %v", p.identity().PodString(), err)
	}
}
