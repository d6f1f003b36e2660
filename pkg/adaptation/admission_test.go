package adaptation

import (
	"math"
	"strings"
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
		// idle (workloadgroup_test.go follows it further).
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

func TestClaimRules(t *testing.T) {
	type step struct {
		id, version string
		gen         uint64
		commit      bool   // make it the active instance after the claim
		wantErr     string // substring; "" means accepted
	}
	for _, tc := range []struct {
		name      string
		downgrade bool
		steps     []step
	}{
		{"first instance", false, []step{{id: "a", gen: 1, version: "v1"}}},
		{"rollout", false, []step{{id: "a", gen: 1, version: "v1", commit: true}, {id: "b", gen: 2, version: "v2"}}},
		{"rollback runs an older version", false, []step{{id: "b", gen: 2, version: "v2", commit: true}, {id: "c", gen: 3, version: "v1"}}},
		{"refused downgrade", true, []step{{id: "b", gen: 2, version: "v2", commit: true}, {id: "c", gen: 3, version: "v1", wantErr: "downgrades are refused"}}},
		{"lower generation", false, []step{{id: "b", gen: 2, version: "v2", commit: true}, {id: "c", gen: 1, version: "v3", wantErr: "rollout generation 1 < 2"}}},
		{"superseded instance comes back", false, []step{{id: "a", gen: 1, commit: true}, {id: "b", gen: 1, commit: true}, {id: "a", wantErr: "was superseded"}}},
		{"superseded twice over comes back", false, []step{{id: "a", commit: true}, {id: "b", commit: true}, {id: "c", commit: true}, {id: "a", wantErr: "was superseded"}}},
		{"unknown generations never block", false, []step{{id: "x", commit: true}, {id: "y"}}},
		{"unparsable versions never block", true, []step{{id: "x", version: "main", commit: true}, {id: "y", version: "dev"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := testRegistry(handoverPolicy{refuseDowngrades: tc.downgrade})
			for i, s := range tc.steps {
				p := g.optedIn("10", "p", s.id, s.gen, s.version)
				_, err := g.place(p)
				switch {
				case s.wantErr == "" && err != nil:
					t.Fatalf("step %d: unexpected refusal: %v", i, err)
				case s.wantErr != "" && (err == nil || !strings.Contains(err.Error(), s.wantErr)):
					t.Fatalf("step %d: error %v, want one containing %q", i, err, s.wantErr)
				}
				if s.commit {
					g.switchNow(t, p)
				}
			}
		})
	}
}

func TestNewerCandidateDisplacesPendingOne(t *testing.T) {
	g := testRegistry(handoverPolicy{})
	b := g.optedIn("10", "p", "b", 2, "")
	c := g.optedIn("10", "p", "c", 2, "")
	if d, err := g.place(b); d != nil || err != nil {
		t.Fatalf("place b: %v %v", d, err)
	}
	if d, err := g.place(c); d != b || err != nil {
		t.Fatalf("place c: displaced %v, %v; want b", d, err)
	}
	if _, err := g.place(g.optedIn("10", "p", "o", 1, "")); err == nil {
		t.Fatal("a lower generation displaced the pending candidate")
	}
}
