package adaptation

import (
	"context"
	"maps"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/nri-handover/nri/api"
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
// written for upstream: the opted-in instance is out of the dispatch and,
// its pod not deleted, stands by (it serves again if the new pod goes:
// TestSupersededInPodServesAgainWhenSuccessorLeaves); an earlier one, or one
// of the same generation, is refused as before. (It was retired and told
// SUPERSEDED until issue 39 finding 8.)
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
	if _, err := sw.activate(); err != nil {
		t.Fatal(err)
	}
	if len(sw.standing) != 1 || sw.standing[0] != a || len(sw.optedIn) != 0 {
		t.Fatalf("the switch retires %v and keeps %v standing by, want the opted-in instance standing by", sw.optedIn, sw.standing)
	}
	if len(g.plugins) != 1 || g.plugins[0] != n {
		t.Fatalf("receiving events after the switch: %v, want the new instance alone", g.plugins)
	}
	if a.state != stateStandby || a.slot.active != nil {
		t.Fatalf("the opted-in instance is %s: want the standby of a slot nobody else serves", a.state)
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

// podOfNext is a WorkloadResolver for in-process tests, where every plugin
// is the test process and so in one cgroup: it places each registering peer
// in the pod the test named last (set), as the runtime would place a
// DaemonSet's pod.
type podOfNext struct {
	mu  sync.Mutex
	pod *PeerPod
}

// set makes the next registering peer a plugin in pod name of the DaemonSet
// app=p in kube-system at pod-template-generation tg, its pod template
// annotated for handover if annotated.
func (n *podOfNext) set(name string, tg int64, annotated bool) {
	pod := &PeerPod{Namespace: "kube-system", Name: name, UID: "uid-" + name, ContainerID: "c-" + name,
		TemplateGeneration: tg, HasTemplateGeneration: true,
		Labels: map[string]string{"app": "p", "pod-template-generation": strconv.FormatInt(tg, 10), "controller-revision-hash": "h" + name}}
	if annotated {
		pod.Handover = HandoverWorkload
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	n.pod = pod
}

func (n *podOfNext) Place(string, []*api.PodSandbox, []*api.Container) (PeerPlace, *PeerPod) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.pod == nil {
		return PeerOutsidePod, nil
	}
	pod := *n.pod
	pod.Labels = maps.Clone(n.pod.Labels)
	return PeerInPod, &pod
}

func (n *podOfNext) Workload(pod *PeerPod) string { return KubernetesResolver{}.Workload(pod) }

// upstreamStub is a plugin on upstream's stub: no handover feature, no
// instance id, no generation.
func upstreamStub(rec *recorder) *fakePlugin {
	f := newFakePlugin("10", "p", rec)
	f.regReq = func(q *api.RegisterPluginRequest) { q.InstanceId, q.Generation, q.Features = "", 0, nil }
	return f
}

// count tells how many times rec saw event e.
func (r *recorder) count(e string) int {
	n := 0
	for _, s := range r.list() {
		if s == e {
			n++
		}
	}
	return n
}

// Issue 39 finding 1: a DaemonSet running a build WithHandover rolled back
// to an upstream-stub build, or rolled out with $NRI_PLUGIN_HANDOVER=off
// (the new pod's plugin does not opt in), and the reverse (a build on
// upstream's stub followed by one WithHandover). With the pod template
// annotated for handover the plugin that does not opt in is a workload
// group's member; the rule is the kill switch's all the same: the later
// generation takes over, the opted-in instance of the same name and
// workload is retired and told why (a plugin written for upstream is
// disconnected, as a member stays idle), and each event is handled once.
func TestKillSwitchInWorkloadGroup(t *testing.T) {
	for _, annotated := range []bool{true, false} {
		for _, optedInFirst := range []bool{true, false} {
			name := "opted-in first"
			if !optedInFirst {
				name = "upstream stub first"
			}
			if annotated {
				name += ", annotated"
			}
			t.Run(name, func(t *testing.T) {
				rt := newFakeRuntime()
				sandbox := &api.PodSandbox{Id: "s1"}
				rt.pods = []*api.PodSandbox{sandbox}
				where := &podOfNext{}
				r, sock := startRuntime(t, rt, WithWorkloadResolver(where))
				defer r.Stop()

				recOld, recNew := newRecorder(), newRecorder()
				old, oldID := upstreamStub(recOld), ""
				nw, newID := handoverPlugin("10", "p", "b", 2, recNew), "b"
				oldRoles := make(chan *api.RoleChangeRequest, 8)
				if optedInFirst {
					old, oldID = handoverPlugin("10", "p", "a", 1, recOld), "a"
					nw, newID = upstreamStub(recNew), ""
					old.roleChange = func(_ context.Context, req *api.RoleChangeRequest) error {
						oldRoles <- req
						return nil
					}
				}
				where.set("p-h1", 1, annotated)
				old.connect(t, sock)
				defer old.close()
				waitOnlyActive(t, r, oldID, "the first pod's instance active")

				where.set("p-h2", 2, annotated)
				nw.connect(t, sock)
				defer nw.close()
				waitOnlyActive(t, r, newID, "the later generation's instance alone active")
				if optedInFirst {
					// Its pod not deleted, it stands by (issue 39 finding 8;
					// it was told SUPERSEDED before).
					for {
						req := receive(t, oldRoles, "the opted-in instance told it stands by")
						if req.GetRole() == api.PluginRole_PLUGIN_ROLE_STANDBY {
							if !strings.Contains(req.GetMessage(), "does not use handover") {
								t.Fatalf("the opted-in instance was told %q, want superseded by a successor that does not use handover", req.GetMessage())
							}
							break
						}
					}
				} else if !annotated {
					receive(t, old.lost, "the plugin written for upstream disconnected")
				} else {
					// A workload group's member has no notion of standing by
					// and would exit if disconnected: it stays, idle.
					eventually(t, func() bool {
						r.reg.mu.Lock()
						defer r.reg.mu.Unlock()
						for q := range r.reg.all {
							if q.instance == "" && q.state == stateIdle {
								return true
							}
						}
						return false
					}, "the group's member idle")
				}

				if err := r.RunPodSandbox(context.Background(), &RunPodSandboxRequest{Pod: sandbox}); err != nil {
					t.Fatal(err)
				}
				if o, n := recOld.count("10-p:RunPodSandbox"), recNew.count("10-p:RunPodSandbox"); o != 0 || n != 1 {
					t.Fatalf("RunPodSandbox handled %d times by the old instance and %d by the new one, want 0 and 1", o, n)
				}

				// The old pod's plugin, restarted by the kubelet, does not
				// take over again, nor run beside.
				again := upstreamStub(recOld)
				if optedInFirst {
					again = handoverPlugin("10", "p", "a", 1, recOld)
				}
				where.set("p-h1", 1, annotated)
				again.dial(t, sock)
				defer again.close()
				if err := again.register(context.Background()); err == nil {
					t.Fatal("the old pod's restarted plugin was admitted")
				}
				receive(t, again.lost, "the old pod's restarted plugin refused")
				waitOnlyActive(t, r, newID, "the later generation's instance still alone active")
			})
		}
	}
}
