package adaptation

import (
	"context"
	"errors"
	"math"
	"strconv"
	"strings"
	"testing"
)

// The workload rule in admission: who may take over, and who is refused,
// when the runtime placed each instance's process (identity.go). The
// identities are set as resolveIdentities sets them; TestResolveIdentities
// covers the listing itself.

func workloadRegistry() *registry {
	return testRegistry(handoverPolicy{resolver: KubernetesResolver{}})
}

// inPod places p in a pod of namespace ns with the app label app and
// pod-template-generation tg (none if tg < 0).
func inPod(p *plugin, ns, name, app string, tg int64) *plugin {
	labels := map[string]string{"app": app, "controller-revision-hash": name}
	if tg >= 0 {
		labels["pod-template-generation"] = strconv.FormatInt(tg, 10)
	}
	p.cgroupErr = nil
	p.ident = &verified{place: PeerInPod, pod: &PeerPod{Namespace: ns, Name: name, UID: "uid-" + name,
		TemplateGeneration: max(tg, 0), HasTemplateGeneration: tg >= 0, Labels: labels}}
	return p
}

// onHost places p outside any pod.
func onHost(p *plugin) *plugin {
	p.cgroupErr = nil
	p.ident = &verified{place: PeerOutsidePod}
	return p
}

// squatters are the processes that register an opted-in instance of the
// real plugin's name (10-p, app=p in kube-system), each with the highest
// generation there is: none may take over, none may keep the real
// successor out.
var squatters = []struct {
	name   string
	reason string
	make   func(g *registry) *plugin
}{
	{"host root process", "pod-vs-host", func(g *registry) *plugin {
		return onHost(as(g.optedIn("10", "p", "host", math.MaxUint64, "9"), 0, 0))
	}},
	{"pod of another namespace", "other-namespace", func(g *registry) *plugin {
		return inPod(as(g.optedIn("10", "p", "ns", math.MaxUint64, "9"), 0, 0), "other", "p-n", "p", 99)
	}},
	{"pod of another DaemonSet of the namespace", "other-workload", func(g *registry) *plugin {
		return inPod(as(g.optedIn("10", "p", "labels", math.MaxUint64, "9"), 0, 0), "kube-system", "evil", "evil", 99)
	}},
	{"older pod of the workload declaring 2^64-1", "", func(g *registry) *plugin {
		return inPod(as(g.optedIn("10", "p", "old", math.MaxUint64, "9"), 0, 0), "kube-system", "p-old", "p", 0)
	}},
}

// realPair is the real plugin's active pod instance a (template generation
// 1) and its successor b (2), which declares a lower generation than a:
// precedence is the pod's, not the plugin's word.
func realPair(t *testing.T, g *registry) (a, b *plugin) {
	t.Helper()
	a = inPod(as(g.optedIn("10", "p", "a", 7, "1"), 0, 0), "kube-system", "p-h1", "p", 1)
	place(t, g, a)
	g.switchNow(t, a)
	b = inPod(as(g.optedIn("10", "p", "b", 3, "2"), 1000, 1000), "kube-system", "p-h2", "p", 2)
	return a, b
}

// Every squatter, registering before the real successor or after it (while
// it is the pending candidate), is refused, naming both sides; the
// successor then takes over, and its Takeover names its predecessor's pod.
func TestWorkloadSquattersBothOrders(t *testing.T) {
	for _, sq := range squatters {
		for _, order := range []string{"squatter first", "successor first"} {
			t.Run(sq.name+", "+order, func(t *testing.T) {
				g := workloadRegistry()
				a, b := realPair(t, g)
				s := sq.make(g)
				if order == "successor first" {
					place(t, g, b)
				}
				_, err := g.place(s)
				if err == nil {
					t.Fatalf("squatter %s admitted", s.describe())
				}
				var ir *IdentityRefusal
				if sq.reason != "" && (!errors.As(err, &ir) || ir.Reason != sq.reason) {
					t.Fatalf("refusal %v: want reason %q", err, sq.reason)
				}
				for _, want := range []string{"instance " + s.instance, "kube-system/p-h"} {
					if !strings.Contains(err.Error(), want) {
						t.Errorf("refusal %q does not name %q", err, want)
					}
				}
				if s.slot != nil {
					t.Fatal("refused squatter placed")
				}
				if order == "squatter first" {
					place(t, g, b)
				}
				tk := g.takeoverFrom(b)
				if pod := tk.GetPredecessorPod(); pod.GetNamespace() != "kube-system" || pod.GetName() != "p-h1" || pod.GetTemplateGeneration() != 1 {
					t.Fatalf("Takeover names predecessor pod %v, want kube-system/p-h1 generation 1", pod)
				}
				g.switchNow(t, b)
				if b.slot.active != b || a.slot.active == a {
					t.Fatalf("the successor did not take over")
				}
				if len(g.plugins) != 1 || g.plugins[0] != b {
					t.Fatalf("receiving events: %v, want only the successor", g.plugins)
				}
			})
		}
	}
}

// A process on the host that registered a DaemonSet plugin's name first
// keeps no pod out: the pod instance runs beside it (neither may supersede
// the other) and its own successors take over from it, not from the host
// process.
func TestWorkloadHostSquatterFirstKeepsNoPodOut(t *testing.T) {
	g := workloadRegistry()
	s := onHost(as(g.optedIn("10", "p", "host", math.MaxUint64, "9"), 0, 0))
	place(t, g, s)
	g.switchNow(t, s)
	a, b := realPair(t, g)
	if a.slot == s.slot {
		t.Fatal("the pod instance joined the host process's lineage")
	}
	place(t, g, b)
	if b.slot != a.slot {
		t.Fatal("the successor is not in its workload's lineage")
	}
	g.switchNow(t, b)
	if b.slot.active != b || s.slot.active != s {
		t.Fatalf("active: successor %v, host process %v", b.slot.active == b, s.slot.active == s)
	}
}

// An opted-in process the runtime cannot place (it exited before its cgroup
// was verified, or its container is not listed yet) is refused; the same
// plugin once placed is admitted.
func TestWorkloadUnknownPeerRefusedThenAdmitted(t *testing.T) {
	g := workloadRegistry()
	early := as(g.optedIn("10", "p", "a", 1, "1"), 0, 0)
	early.cgroupErr, early.ident = nil, &verified{place: PeerUnknown}
	if _, err := g.place(early); err == nil || !strings.Contains(err.Error(), "cannot place its process") {
		t.Fatalf("unknown peer: %v", err)
	}
	exited := as(g.optedIn("10", "p", "a", 1, "1"), 0, 0)
	exited.cgroupErr = errors.New("peer pid 42 exited before its cgroup was verified")
	if _, err := g.place(exited); err == nil || !strings.Contains(err.Error(), "exited") {
		t.Fatalf("exited peer: %v", err)
	}
	again := inPod(as(g.optedIn("10", "p", "a", 1, "1"), 0, 0), "kube-system", "p-h1", "p", 1)
	place(t, g, again)
	g.switchNow(t, again)
}

// Where the platform cannot verify a peer (no SO_PEERPIDFD), the credential
// policy decides alone, as with the workload rule off: same uid takes over.
func TestWorkloadUnsupportedFallsBackToCredentials(t *testing.T) {
	g := workloadRegistry()
	a := as(g.optedIn("10", "p", "a", 1, "1"), 0, 0) // cgroupErr: errIdentityUnsupported
	place(t, g, a)
	g.switchNow(t, a)
	b := as(g.optedIn("10", "p", "b", 2, "2"), 0, 0)
	place(t, g, b)
	g.switchNow(t, b)
	c := as(g.optedIn("10", "p", "c", 3, "3"), 65534, 65534)
	place(t, g, c)
	if c.slot == b.slot {
		t.Fatal("another uid joined the lineage")
	}
}

// Plugins written for upstream are never refused by the workload rule: one
// of the holder's workload is refused beside it (the "beside" rule, as with
// the uid rule), one of another workload runs beside it; an opted-in
// successor takes over the former, not the latter.
func TestWorkloadLegacyPlugins(t *testing.T) {
	g := workloadRegistry()
	legacyOther := inPod(g.legacyOf("10", "p", 0), "other", "legacy-o", "p", 1)
	place(t, g, legacyOther)
	g.switchNow(t, legacyOther)
	legacyOwn := inPod(g.legacyOf("10", "p", 0), "kube-system", "p-k", "p", 1)
	place(t, g, legacyOwn)
	g.switchNow(t, legacyOwn)

	a := inPod(as(g.optedIn("10", "p", "a", 1, "1"), 0, 0), "kube-system", "p-h1", "p", 2)
	place(t, g, a)
	victims, err := g.admitSwitch(a)
	if err != nil || len(victims) != 1 || victims[0] != legacyOwn {
		t.Fatalf("victims %v, %v: want only the legacy plugin of its workload", victims, err)
	}
	g.switchNow(t, a)
	if _, err := g.place(inPod(g.legacyOf("10", "p", 0), "kube-system", "p-k2", "p", 1)); err == nil {
		t.Fatal("a plugin written for upstream of the holder's workload ran beside it")
	}
	place(t, g, inPod(g.legacyOf("10", "p", 0), "other", "legacy-o2", "p", 1))
}

// TestResolveIdentities places peers from the runtime's state as the ledger
// records it (never from a SyncFn call beside runtime operations): the
// container whose cgroup the peer is in, and its pod. With nothing recorded
// (a ledger dropped for its size) the ledger is seeded from SyncFn if the
// sync gate is free at once; if it is not, the peer is unknown (refused),
// never guessed.
func TestResolveIdentities(t *testing.T) {
	pods, ctrs := identFixture("/kubepods/besteffort/pod" + podUID + "/" + ctrID)
	syncs := 0
	r, err := New("test-runtime", "v0", func(ctx context.Context, cb SyncCB) error {
		syncs++
		_, err := cb(ctx, pods, ctrs)
		return err
	}, func(context.Context, []*ContainerUpdate) ([]*ContainerUpdate, error) { return nil, nil }, WithLogger(testLogger()))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Stop()
	g := r.reg
	r.ledger.seed(0, pods, ctrs)

	p := g.optedIn("10", "p", "a", 1, "1")
	p.cgroupErr, p.cgroup = nil, "/kubepods/besteffort/pod"+podUID+"/"+ctrID
	g.resolveIdentities(context.Background(), p)
	if id := p.identity(); id.Place != PeerInPod || id.Pod.Name != "nri-plugin-x7" || id.Pod.TemplateGeneration != 4 {
		t.Fatalf("placed %v %+v", id.Place, id.Pod)
	}
	pods[0].Labels["app"] = "changed" // the plugin keeps a copy
	if p.identity().Pod.Labels["app"] != "nri-plugin" {
		t.Fatal("the identity refers to the runtime's own labels")
	}

	host := g.optedIn("10", "p", "h", 1, "1")
	host.cgroupErr, host.cgroup = nil, "/user.slice/session-1.scope"
	g.resolveIdentities(context.Background(), host)
	if host.identity().Place != PeerOutsidePod {
		t.Fatalf("host process placed %v", host.identity().Place)
	}

	if syncs != 0 {
		t.Fatalf("placing peers called SyncFn %d times", syncs)
	}
	r.ledger = ledger{kept: true}   // nothing recorded
	inFlight := r.BlockPluginSync() // a runtime operation
	q := g.optedIn("10", "p", "b", 2, "2")
	q.cgroupErr, q.cgroup = nil, "/kubepods/besteffort/pod"+podUID+"/"+ctrID
	g.resolveIdentities(context.Background(), q)
	if q.identity().Place != PeerUnknown || syncs != 0 {
		t.Fatalf("placed without a listing: %v (%d SyncFn calls)", q.identity().Place, syncs)
	}
	if _, err := g.place(q); err == nil {
		t.Fatal("an unplaced peer was admitted")
	}
	inFlight.Unblock()
	q2 := g.optedIn("10", "p", "c", 3, "3")
	q2.cgroupErr, q2.cgroup = nil, "/kubepods/besteffort/pod"+podUID+"/"+ctrID
	g.resolveIdentities(context.Background(), q2)
	if q2.identity().Place != PeerInPod || syncs != 1 {
		t.Fatalf("with the gate free: placed %v after %d SyncFn calls; want in its pod after 1", q2.identity().Place, syncs)
	}
}

// appResolver names a workload by its app label alone: a runtime's own
// notion of a workload, replacing the default's.
type appResolver struct{ KubernetesResolver }

func (appResolver) Workload(pod *PeerPod) string { return pod.Labels["app"] }

// The workload is the resolver's: a pod of another DaemonSet of the
// namespace with the same app label is another workload by default and the
// same one by a resolver that looks at its app label only; with no resolver
// the uid rule decides.
func TestWorkloadIsTheResolversAndNilTurnsTheRuleOff(t *testing.T) {
	for _, tc := range []struct {
		name     string
		resolver WorkloadResolver
		refused  string
	}{
		{"default", KubernetesResolver{}, "other-workload"},
		{"by app label", appResolver{}, ""},
		{"none", nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := testRegistry(handoverPolicy{resolver: tc.resolver})
			a := inPod(as(g.optedIn("10", "p", "a", 1, "1"), 0, 0), "kube-system", "p-h1", "p", 1)
			place(t, g, a)
			g.switchNow(t, a)
			b := inPod(as(g.optedIn("10", "p", "b", 2, "2"), 0, 0), "kube-system", "q-h2", "p", 2)
			g.mu.Lock()
			err := g.maySupersede(a, b)
			g.mu.Unlock()
			var refusal *IdentityRefusal
			switch {
			case tc.refused == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.refused != "" && (!errors.As(err, &refusal) || refusal.Reason != tc.refused):
				t.Fatalf("error %v, want a refusal %q", err, tc.refused)
			}
		})
	}
}
