package adaptation

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"
	"testing"
	"time"
)

// One case per row of admission.go's table (docs/proposal.md, "Admission"),
// each decided where it matters: at registration and, for the rows whose
// facts can change in between, at the switch.
func TestAdmissionRules(t *testing.T) {
	for _, tc := range []struct {
		rule string
		run  func(t *testing.T, g *registry) error // the refusal the rule gives, nil if none
	}{
		{"stopping: at registration", func(t *testing.T, g *registry) error {
			g.close()
			_, err := g.place(g.optedIn("10", "p", "a", 1, ""))
			return err
		}},
		{"stopping: at the switch", func(t *testing.T, g *registry) error {
			p := g.optedIn("10", "p", "a", 1, "")
			place(t, g, p)
			g.close()
			_, err := g.swap(p)
			return err
		}},
		{"builtin", func(t *testing.T, g *registry) error {
			b := g.r.newPlugin(kindBuiltin)
			b.setName("10", "p")
			_ = g.track(b)
			_, err := g.place(g.optedIn("20", "p", "a", 1, ""))
			return err
		}},
		{"beside: at registration", func(t *testing.T, g *registry) error {
			place(t, g, g.optedIn("10", "p", "a", 1, ""))
			_, err := g.place(g.legacyOf("10", "p", 0))
			return err
		}},
		{"beside: at the switch", func(t *testing.T, g *registry) error {
			l := g.legacyOf("10", "p", 0)
			place(t, g, l) // registered first, commits last
			o := g.optedIn("10", "p", "a", 1, "")
			place(t, g, o)
			g.switchNow(t, o)
			_, err := g.swap(l)
			return err
		}},
		// A member the newer rule refuses is not disconnected: it stays
		// idle (TestGroupNextAsksAdmission follows it further).
		{"newer: at registration", func(t *testing.T, g *registry) error {
			g.policy.resolver = KubernetesResolver{}
			g.activeMember(t, g.member("p-b", 2, true))
			a := g.member("p-a", 2, true)
			g.mu.Lock()
			defer g.mu.Unlock()
			_, err := g.decide(a, nil, false)
			return err
		}},
		{"newer: at the switch", func(t *testing.T, g *registry) error {
			g.policy.resolver = KubernetesResolver{}
			g.activeMember(t, g.member("p-b", 2, true))
			a := g.member("p-a", 1, true)
			place(t, g, a)
			g.mu.Lock()
			g.move(a, a.slot, stateCandidate) // as if made the candidate before b took over
			g.mu.Unlock()
			_, err := g.swap(a)
			if a.state != stateIdle {
				t.Errorf("the refused member is %s, want idle", a.state)
			}
			return err
		}},
		{"identity", func(t *testing.T, g *registry) error {
			g.policy.resolver = KubernetesResolver{}
			p := g.optedIn("10", "p", "a", 1, "")
			p.cgroupErr, p.ident = nil, &verified{place: PeerUnknown}
			_, err := g.place(p)
			return err
		}},
		{"supersede: at registration (the name held by a pod of another workload)", func(t *testing.T, g *registry) error {
			g.policy.resolver = KubernetesResolver{}
			a := inPod(g.optedIn("10", "p", "a", 1, ""), "kube-system", "p-h1", "p", 1)
			place(t, g, a)
			g.switchNow(t, a)
			_, err := g.place(onHost(g.optedIn("10", "p", "x", 2, "")))
			return err
		}},
		{"supersede: at registration (a slot it may evict only part of)", func(t *testing.T, g *registry) error {
			g.policy.grace = time.Hour
			a := as(g.optedIn("10", "p", "a", 1, ""), 0, 0)
			place(t, g, a)
			g.switchNow(t, a)
			g.policy.supersede = SupersedeAnyPeer
			b := as(g.optedIn("10", "p", "b", 2, ""), 65534, 65534)
			place(t, g, b)
			g.switchNow(t, b) // a is b's standby
			t.Cleanup(a.slot.stopGrace)
			g.policy.supersede = nil
			_, err := g.place(as(g.optedIn("10", "p", "c", 3, ""), 65534, 65534))
			return err
		}},
		{"supersede: at the switch (the policy changed meanwhile)", func(t *testing.T, g *registry) error {
			g.policy.supersede = SupersedeAnyPeer
			a := as(g.optedIn("10", "p", "a", 1, ""), 0, 0)
			place(t, g, a)
			g.switchNow(t, a)
			b := as(g.optedIn("10", "p", "b", 2, ""), 65534, 65534)
			place(t, g, b)
			g.policy.supersede = SupersedeSameUID
			_, err := g.swap(b)
			return err
		}},
		{"retired", func(t *testing.T, g *registry) error {
			a := g.optedIn("10", "p", "a", 1, "")
			place(t, g, a)
			g.switchNow(t, a)
			b := g.optedIn("10", "p", "b", 2, "")
			place(t, g, b)
			g.switchNow(t, b)
			_, err := g.place(g.optedIn("10", "p", "a", 3, ""))
			return err
		}},
		{"generation", func(t *testing.T, g *registry) error {
			b := g.optedIn("10", "p", "b", 2, "")
			place(t, g, b)
			g.switchNow(t, b)
			_, err := g.place(g.optedIn("10", "p", "c", 1, ""))
			return err
		}},
		{"downgrade", func(t *testing.T, g *registry) error {
			g.policy.refuseDowngrades = true
			b := g.optedIn("10", "p", "b", 2, "v2")
			place(t, g, b)
			g.switchNow(t, b)
			_, err := g.place(g.optedIn("10", "p", "c", 3, "v1"))
			return err
		}},
	} {
		t.Run(tc.rule, func(t *testing.T) {
			g := testRegistry(handoverPolicy{grace: 0})
			err := tc.run(t, g)
			if err == nil {
				t.Fatalf("rule %q refused nothing", tc.rule)
			}
			t.Logf("refusal: %v", err)
		})
	}
}

func place(t *testing.T, g *registry, p *plugin) {
	t.Helper()
	if _, err := g.place(p); err != nil {
		t.Fatalf("place %s: %v", p.describe(), err)
	}
}

// legacyOf is a placed-to-be plugin written for upstream, of uid.
func (g *registry) legacyOf(idx, base string, uid int) *plugin {
	p := as(g.r.newPlugin(kindExternal), uid, uid)
	p.setName(idx, base)
	_ = g.track(p)
	return p
}

// The first to register a name does not own it across users: another
// user's opted-in instance that came first, with the highest generation
// there is, neither keeps the real plugin's successors out nor a plugin
// written for upstream with that name and index (which upstream admits).
func TestSquatterKeepsNobodyOut(t *testing.T) {
	g := testRegistry(handoverPolicy{})
	squatter := as(g.optedIn("10", "p", "x", math.MaxUint64, ""), 65534, 65534)
	place(t, g, squatter)
	g.switchNow(t, squatter)

	legacy := g.legacyOf("10", "p", 0)
	place(t, g, legacy) // the squatter may not supersede it: upstream's behaviour
	g.switchNow(t, legacy)

	real1 := as(g.optedIn("10", "p", "a", 1, ""), 0, 0)
	place(t, g, real1)
	if real1.slot == squatter.slot {
		t.Fatal("the real plugin shares the squatter's slot")
	}
	g.switchNow(t, real1)
	real2 := as(g.optedIn("10", "p", "b", 2, ""), 0, 0)
	place(t, g, real2)
	g.switchNow(t, real2)

	if real2.slot.active != real2 || squatter.slot.active != squatter {
		t.Fatalf("active: real %v, squatter %v", real2.slot.active, squatter.slot.active)
	}
	if legacy.slot.active == legacy {
		t.Fatal("the real plugin did not take over the plugin written for upstream with its name and index")
	}
	for _, p := range g.plugins {
		if p == real1 {
			t.Fatal("the superseded real instance still receives events")
		}
	}
}

// A refusal names both instances and both uids.
func TestSupersedeRefusalNamesBothSides(t *testing.T) {
	g := testRegistry(handoverPolicy{})
	g.policy.supersede = SupersedeAnyPeer
	a := as(g.optedIn("10", "p", "a", 1, ""), 0, 0)
	place(t, g, a)
	g.switchNow(t, a)
	b := as(g.optedIn("10", "p", "b", 2, ""), 65534, 65534)
	place(t, g, b)
	g.policy.supersede = nil
	_, err := g.swap(b)
	if err == nil {
		t.Fatal("the switch let in what the policy forbids")
	}
	for _, want := range []string{"instance b generation 2 (uid 65534)", "instance a generation 1 (uid 0)"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("refusal %q does not name %q", err, want)
		}
	}
}

// handoverOutcomes records RecordHandover's outcomes.
type handoverOutcomes struct {
	noopMetrics
	outcomes []string
}

func (m *handoverOutcomes) RecordHandover(_, outcome string, _, _ time.Duration) {
	m.outcomes = append(m.outcomes, outcome)
}

// With a standby grace, an opted-in instance without delta rounds, which no
// standby can be made of, is counted when it registers (and logged), not
// found out when its successor dies.
func TestStandbyUnavailableIsCounted(t *testing.T) {
	g, w := warnedRegistry(handoverPolicy{grace: time.Minute})
	m := &handoverOutcomes{}
	g.r.metrics = m
	p := g.optedIn("10", "p", "a", 1, "")
	p.features = p.features[:1] // handover without delta rounds
	place(t, g, p)
	q := g.optedIn("10", "q", "b", 1, "") // with delta rounds
	place(t, g, q)
	if len(m.outcomes) != 1 || m.outcomes[0] != "standby-unavailable" {
		t.Fatalf("outcomes %q, want one standby-unavailable", m.outcomes)
	}
	// The warning names what the plugin's author implements, once.
	got := w.saying("plugin 10-p ", "delta rounds")
	if len(got) != 1 || strings.Count(got[0], "api.FeatureDeltaSync") != 1 || strings.Count(got[0], "stub.SynchronizeRoundInterface") != 1 {
		t.Fatalf("warned %q, want one line naming api.FeatureDeltaSync and stub.SynchronizeRoundInterface", w.lines)
	}
}

// The workload rule in admission: who may take over, and who is refused,
// when the runtime placed each instance's process (identity.go). The
// identities are set as resolveIdentities sets them; TestResolveIdentities
// covers the listing itself.

func workloadRegistry() *registry {
	return testRegistry(handoverPolicy{resolver: KubernetesResolver{}})
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
				tk := joinOf(g, b).takeoverFrom()
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

// warnings keeps the warnings logged, for tests of what an operator is told.
type warnings struct {
	mu    sync.Mutex
	lines []string
}

func (w *warnings) Debugf(context.Context, string, ...any) {}
func (w *warnings) Infof(context.Context, string, ...any)  {}
func (w *warnings) Errorf(context.Context, string, ...any) {}
func (w *warnings) Warnf(_ context.Context, f string, a ...any) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.lines = append(w.lines, fmt.Sprintf(f, a...))
}

// saying returns the warnings containing every one of subs.
func (w *warnings) saying(subs ...string) []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []string
next:
	for _, l := range w.lines {
		for _, s := range subs {
			if !strings.Contains(l, s) {
				continue next
			}
		}
		out = append(out, l)
	}
	return out
}

func warnedRegistry(pol handoverPolicy) (*registry, *warnings) {
	g := testRegistry(pol)
	w := &warnings{}
	g.r.log = w
	return g, w
}

// Registrations the rules admit but that are likely mistakes are warned
// about when the plugin registers, naming both instances, before they show
// as failures.
func TestMistakesAreWarnedAtRegistration(t *testing.T) {
	t.Run("a renamed plugin beside its old name in the same workload", func(t *testing.T) {
		g, w := warnedRegistry(handoverPolicy{resolver: KubernetesResolver{}})
		old := inPod(g.optedIn("10", "myplugin", "uid-p-h1", 1, "v1"), "kube-system", "p-h1", "p", 1)
		place(t, g, old)
		g.switchNow(t, old)
		renamed := inPod(g.optedIn("10", "my-plugin", "uid-p-h2", 2, "v2"), "kube-system", "p-h2", "p", 2)
		place(t, g, renamed)
		if got := w.saying("10-my-plugin", "10-myplugin", "under another name"); len(got) != 1 {
			t.Fatalf("warnings %q: want one naming both the renamed and the old plugin", w.lines)
		}
	})
	t.Run("two plugins of one pod, or of other workloads, are no rename", func(t *testing.T) {
		g, w := warnedRegistry(handoverPolicy{resolver: KubernetesResolver{}})
		a := inPod(g.optedIn("10", "cpu", "uid-p-h1", 1, "v1"), "kube-system", "p-h1", "p", 1)
		place(t, g, a)
		g.switchNow(t, a)
		place(t, g, inPod(g.optedIn("20", "mem", "uid-p-h1", 1, "v1"), "kube-system", "p-h1", "p", 1))
		place(t, g, inPod(g.optedIn("30", "net", "uid-q-h1", 1, "v1"), "kube-system", "q-h1", "q", 1))
		if got := w.saying("under another name"); len(got) != 0 {
			t.Fatalf("warned %q", got)
		}
	})
	t.Run("a successor with another index", func(t *testing.T) {
		g, w := warnedRegistry(handoverPolicy{})
		a := g.optedIn("10", "p", "a", 1, "v1")
		place(t, g, a)
		g.switchNow(t, a)
		place(t, g, g.optedIn("20", "p", "b", 2, "v2"))
		if got := w.saying("20-p version v2 instance b", "10-p version v1 instance a", "from 10 to 20"); len(got) != 1 {
			t.Fatalf("warnings %q: want one naming both instances and both indexes", w.lines)
		}
	})
	t.Run("an opted-in instance without identity", func(t *testing.T) {
		g, w := warnedRegistry(handoverPolicy{})
		place(t, g, g.optedIn("10", "p", "", 0, "v1"))
		if got := w.saying("10-p version v1", "NRI_PLUGIN_INSTANCE_ID"); len(got) != 1 {
			t.Fatalf("warnings %q: want one naming the plugin and what to set", w.lines)
		}
	})
	t.Run("a handover annotation with a value the runtime does not know", func(t *testing.T) {
		g, w := warnedRegistry(handoverPolicy{resolver: KubernetesResolver{}})
		p := g.member("p-a", 1, true)
		p.ident.pod.Handover = "workloads"
		place(t, g, p)
		if got := w.saying(`nri.containerd.io/handover="workloads"`, `it accepts "workload"`); len(got) != 1 {
			t.Fatalf("warnings %q: want one naming the value and the accepted one", w.lines)
		}
	})
	t.Run("nothing for a plain rollout", func(t *testing.T) {
		g, w := warnedRegistry(handoverPolicy{})
		a := g.optedIn("10", "p", "a", 1, "v1")
		place(t, g, a)
		g.switchNow(t, a)
		place(t, g, g.optedIn("10", "p", "b", 2, "v2"))
		if len(w.lines) != 0 {
			t.Fatalf("warned %q", w.lines)
		}
	})
}

// A new name at the index of an active plugin that opted into handover,
// outside pods, is most likely a rename: warned at registration, in either
// order of handover among the two, naming both; not for another index, an
// old plugin that did not opt in or is not active, or the same name.
func TestLikelyRenameIsWarnedAtRegistration(t *testing.T) {
	const says = "if it is that plugin renamed, it does not take over"
	for _, tc := range []struct {
		name string
		old  func(g *registry) *plugin
		new  func(g *registry) *plugin
		warn bool
	}{
		{"renamed, both opted in", func(g *registry) *plugin { return g.optedIn("40", "myplugin", "a", 1, "v1") },
			func(g *registry) *plugin { return g.optedIn("40", "my-plugin", "b", 2, "v2") }, true},
		{"renamed, the new one with handover turned off", func(g *registry) *plugin { return g.optedIn("40", "myplugin", "a", 1, "v1") },
			func(g *registry) *plugin { return g.legacyOf("40", "my-plugin", 2) }, true},
		{"another index", func(g *registry) *plugin { return g.optedIn("40", "myplugin", "a", 1, "v1") },
			func(g *registry) *plugin { return g.optedIn("50", "my-plugin", "b", 2, "v2") }, false},
		{"the old one did not opt in", func(g *registry) *plugin { return g.legacyOf("40", "myplugin", 1) },
			func(g *registry) *plugin { return g.optedIn("40", "my-plugin", "b", 2, "v2") }, false},
		{"the same name", func(g *registry) *plugin { return g.optedIn("40", "myplugin", "a", 1, "v1") },
			func(g *registry) *plugin { return g.optedIn("40", "myplugin", "b", 2, "v2") }, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g, w := warnedRegistry(handoverPolicy{})
			old := tc.old(g)
			place(t, g, old)
			g.switchNow(t, old)
			place(t, g, tc.new(g))
			got := w.saying(says)
			if !tc.warn {
				if len(got) != 0 {
					t.Fatalf("warned %q", got)
				}
				return
			}
			if len(got) != 1 || !strings.Contains(got[0], "40-my-plugin") || !strings.Contains(got[0], "40-myplugin") {
				t.Fatalf("warnings %q: want one naming both plugins", w.lines)
			}
		})
	}
	t.Run("not while the old one is only a candidate", func(t *testing.T) {
		g, w := warnedRegistry(handoverPolicy{})
		place(t, g, g.optedIn("40", "myplugin", "a", 1, "v1"))
		place(t, g, g.optedIn("40", "my-plugin", "b", 2, "v2"))
		if got := w.saying(says); len(got) != 0 {
			t.Fatalf("warned %q", got)
		}
	})
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
