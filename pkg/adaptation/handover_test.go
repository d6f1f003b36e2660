package adaptation

import (
	"context"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/nri-handover/nri/api"
)

// testRegistry is a registry of an adaptation that offers handover, for
// unit tests of the membership rules.
func testRegistry(pol handoverPolicy) *registry {
	r := &Adaptation{handover: true, metrics: noopMetrics{}, log: defaultLogger()}
	r.reg = newRegistry(r)
	r.reg.policy = pol
	return r.reg
}

// optedIn is an external instance that asked for handover.
func (g *registry) optedIn(idx, base, id string, gen uint64, version string) *plugin {
	p := g.r.newPlugin(kindExternal)
	p.setName(idx, base)
	p.instance, p.generation, p.version = id, gen, version
	p.features = []string{api.FeatureHandover, api.FeatureDeltaSync}
	p.cred = PeerCredentials{PID: os.Getpid(), UID: os.Getuid(), GID: os.Getgid()}
	_ = g.track(p)
	return p
}

// switchNow makes p, the candidate of its slot, the active instance, as a
// switch does, without the notices.
func (g *registry) switchNow(t *testing.T, p *plugin) {
	t.Helper()
	sw, err := g.swap(p)
	if err != nil {
		t.Fatalf("swap %s: %v", p.describe(), err)
	}
	if _, err := sw.activate(); err != nil {
		t.Fatalf("activate %s: %v", p.describe(), err)
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

// A slot forgets its superseded instances when it empties, and remembers at
// most maxRetired of them while it lives.
func TestRetiredIDsLiveWithTheirSlot(t *testing.T) {
	g := testRegistry(handoverPolicy{})
	var last *plugin
	for i := range maxRetired + 4 {
		p := g.optedIn("10", "p", strconv.Itoa(i), 0, "")
		if _, err := g.place(p); err != nil {
			t.Fatal(err)
		}
		g.switchNow(t, p)
		last = p
	}
	s := last.slot
	if len(s.retired) != maxRetired {
		t.Fatalf("slot remembers %d retired ids, want %d", len(s.retired), maxRetired)
	}
	g.remove(last)
	if _, ok := g.named["p"]; ok {
		t.Fatal("an empty slot was kept")
	}
	if _, err := g.place(g.optedIn("10", "p", "0", 0, "")); err != nil {
		t.Fatalf("a retired id is refused after its slot emptied: %v", err)
	}
}

func TestVersionLess(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want bool
	}{
		{"v1.2.3", "v1.10.0", true},
		{"1.10", "1.9", false},
		{"v2.0.0-rc1", "v2.0.0", false}, // pre-releases compare by their release
		{"v1", "v1.0.1", true},
		{"main", "v1", false},
		{"", "v1", false},
	} {
		if got := versionLess(tc.a, tc.b); got != tc.want {
			t.Errorf("versionLess(%q, %q) = %v, want %v", tc.a, tc.b, got, tc.want)
		}
	}
}

// A standby asking to update containers while its successor is gone and it
// is being reactivated (the slot has no active instance) is refused with an
// error, not a nil dereference (issue 10, finding 2).
func TestStandbyUpdateWhileReactivating(t *testing.T) {
	g := testRegistry(handoverPolicy{})
	a := g.optedIn("10", "p", "a", 1, "v1")
	if _, err := g.place(a); err != nil {
		t.Fatal(err)
	}
	g.switchNow(t, a)
	a.conn = connRegistered
	s := a.slot
	s.active, s.standby = nil, a // the successor was lost; a waits for its re-sync
	err := g.mayUpdate(a)
	if err == nil || !strings.Contains(err.Error(), "not the active instance") {
		t.Fatalf("mayUpdate of a standby being reactivated: %v", err)
	}
}

// A runtime that stops while it tells a joining plugin it is active tells
// the plugin RUNTIME_SHUTDOWN: the cancelled notice is not the plugin's
// failure.
func TestStopDuringActiveNoticeIsRuntimeShutdown(t *testing.T) {
	rt := newFakeRuntime()
	r, sock := startRuntime(t, rt)

	told := make(chan struct{})
	release := make(chan struct{})
	defer close(release)
	f := newFakePlugin("10", "p", nil)
	f.regReq = func(q *api.RegisterPluginRequest) {
		q.InstanceId, q.Features = "a", []string{api.FeatureHandover, api.FeatureDeltaSync}
	}
	f.roleChange = func(context.Context, *api.RoleChangeRequest) error {
		close(told)
		<-release
		return nil
	}
	f.connect(t, sock)
	defer f.close()
	receive(t, told, "the ACTIVE notice")
	r.Stop()
	req := receive(t, f.shutdowns, "shutdown")
	if req.GetReason() != api.ShutdownReason_SHUTDOWN_REASON_RUNTIME_SHUTDOWN {
		t.Fatalf("shutdown reason %v (%q), want RUNTIME_SHUTDOWN", req.GetReason(), req.GetMessage())
	}
}
