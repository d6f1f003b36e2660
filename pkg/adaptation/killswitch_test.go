package adaptation

import (
	"strings"
	"testing"
)

// The kill switch rolled out with surge ($NRI_PLUGIN_HANDOVER=off on the new
// pods of an opted-in workload): the new pod registers as a plugin written
// for upstream beside the opted-in instance that holds its name and index.

// legacyInPod is a plugin written for upstream in a pod of the workload
// app=p in kube-system with pod-template-generation tg.
func (g *registry) legacyInPod(name string, tg int64) *plugin {
	p := inPod(g.legacyOf("10", "p", 0), "kube-system", name, "p", tg)
	p.instance = "uid-" + name
	return p
}

// A later generation of the workload takes over at its switch, as a plugin
// written for upstream: the opted-in instance is out of the dispatch and
// told it was superseded, naming its successor; an earlier one, or one of
// the same generation, is refused as before.
func TestKillSwitchLaterGenerationTakesOver(t *testing.T) {
	g := workloadRegistry()
	a := inPod(g.optedIn("10", "p", "uid-p-h1", 0, "v1"), "kube-system", "p-h1", "p", 1)
	place(t, g, a)
	g.switchNow(t, a)

	if _, err := g.place(g.legacyInPod("p-h1", 1)); err == nil {
		t.Fatal("an instance of the same generation without handover was admitted beside the opted-in one")
	}

	n := g.legacyInPod("p-h2", 2)
	place(t, g, n)
	if len(g.plugins) != 1 || g.plugins[0] != a {
		t.Fatalf("receiving events before the switch: %v, want the opted-in instance alone", g.plugins)
	}
	sw, err := g.swap(n)
	if err != nil {
		t.Fatalf("the later generation without handover was refused at its switch: %v", err)
	}
	if _, err := g.activated(sw); err != nil {
		t.Fatal(err)
	}
	if len(sw.optedIn) != 1 || sw.optedIn[0] != a {
		t.Fatalf("the switch takes over %v, want the opted-in instance", sw.optedIn)
	}
	if len(g.plugins) != 1 || g.plugins[0] != n {
		t.Fatalf("receiving events after the switch: %v, want the new instance alone", g.plugins)
	}
	if a.state != stateGone || len(g.named["p"]) != 0 {
		t.Fatalf("the opted-in instance is %s, slots of its name %d: want gone, none", a.state, len(g.named["p"]))
	}
}

// Once a plugin written for upstream took over, the superseded opted-in pod
// restarted by the kubelet does not take over again (it would flap back);
// a later opted-in generation does (handover turned back on).
func TestKillSwitchNoFlapBack(t *testing.T) {
	g := workloadRegistry()
	a := inPod(g.optedIn("10", "p", "uid-p-h1", 0, "v1"), "kube-system", "p-h1", "p", 1)
	place(t, g, a)
	g.switchNow(t, a)
	n := g.legacyInPod("p-h2", 2)
	place(t, g, n)
	g.switchNow(t, n)

	back := inPod(g.optedIn("10", "p", "uid-p-h1", 0, "v1"), "kube-system", "p-h1", "p", 1)
	_, err := g.place(back)
	if err == nil {
		t.Fatal("the superseded opted-in pod, restarted, was admitted over its successor without handover")
	}
	if !strings.Contains(err.Error(), "is older than") || !strings.Contains(err.Error(), "p-h2") {
		t.Errorf("refusal %q does not say it is older than the pod p-h2", err)
	}

	on := inPod(g.optedIn("10", "p", "uid-p-h3", 0, "v1"), "kube-system", "p-h3", "p", 3)
	place(t, g, on)
	g.switchNow(t, on)
	if len(g.plugins) != 1 || g.plugins[0] != on {
		t.Fatalf("receiving events: %v, want the opted-in generation 3 alone", g.plugins)
	}
}

// Outside pods the declared generation decides, between processes of one
// uid; a plugin written for upstream that declares none (upstream's stub)
// is refused beside the opted-in instance, as before, and so is one of
// another workload, which neither may supersede, left to run beside it.
func TestKillSwitchOutsidePodsAndOtherWorkloads(t *testing.T) {
	g := testRegistry(handoverPolicy{})
	a := as(g.optedIn("10", "p", "a", 1, "v1"), 0, 0)
	place(t, g, a)
	g.switchNow(t, a)
	if _, err := g.place(g.legacyOf("10", "p", 0)); err == nil {
		t.Fatal("a plugin written for upstream without a generation was admitted beside the opted-in instance")
	}
	n := g.legacyOf("10", "p", 0)
	n.instance, n.generation = "n", 2
	place(t, g, n)
	g.switchNow(t, n)
	if len(g.plugins) != 1 || g.plugins[0] != n {
		t.Fatalf("receiving events: %v, want the later generation alone", g.plugins)
	}

	w := workloadRegistry()
	b := inPod(w.optedIn("10", "p", "uid-p-h1", 0, "v1"), "kube-system", "p-h1", "p", 1)
	place(t, w, b)
	w.switchNow(t, b)
	other := inPod(w.legacyOf("10", "p", 0), "kube-system", "q-h1", "q", 9)
	place(t, w, other) // the opted-in instance may not supersede it: upstream's behaviour
	w.switchNow(t, other)
	if len(w.plugins) != 2 {
		t.Fatalf("receiving events: %v, want both (another workload runs beside)", w.plugins)
	}
}
