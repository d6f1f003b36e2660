package adaptation

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/nri-handover/nri/api"
)

func TestClaimRules(t *testing.T) {
	inst := func(id string, gen uint64, version string) *plugin {
		return &plugin{idx: "10", base: "p", instance: id, generation: gen, version: version}
	}
	type step struct {
		p       *plugin
		commit  bool   // make it the active instance after the claim
		wantErr string // substring; "" means accepted
	}
	a, b := inst("a", 1, "v1"), inst("b", 2, "v2")
	for _, tc := range []struct {
		name      string
		downgrade bool
		steps     []step
	}{
		{"first instance", false, []step{{p: a}}},
		{"rollout", false, []step{{p: a, commit: true}, {p: b}}},
		{"rollback runs an older version", false, []step{{p: b, commit: true}, {p: inst("c", 3, "v1")}}},
		{"refused downgrade", true, []step{{p: b, commit: true}, {p: inst("c", 3, "v1"), wantErr: "downgrades are refused"}}},
		{"lower generation", false, []step{{p: b, commit: true}, {p: inst("c", 1, "v3"), wantErr: "rollout generation 1 < 2"}}},
		{"superseded instance comes back", false, []step{{p: a, commit: true}, {p: b, commit: true}, {p: inst("a", 0, "v1"), wantErr: "was superseded by"}}},
		{"unknown generations never block", false, []step{{p: inst("x", 0, ""), commit: true}, {p: inst("y", 0, "")}}},
		{"unparsable versions never block", true, []step{{p: inst("x", 0, "main"), commit: true}, {p: inst("y", 0, "dev")}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := &registry{slots: map[string]*slot{}, policy: handoverPolicy{refuseDowngrades: tc.downgrade}}
			for i, s := range tc.steps {
				_, err := g.claim(s.p)
				switch {
				case s.wantErr == "" && err != nil:
					t.Fatalf("step %d: unexpected refusal: %v", i, err)
				case s.wantErr != "" && (err == nil || !strings.Contains(err.Error(), s.wantErr)):
					t.Fatalf("step %d: error %v, want one containing %q", i, err, s.wantErr)
				}
				if s.commit {
					sl := g.slots["p"]
					if old := sl.active; old != nil && old.instance != "" {
						sl.retired[old.instance] = s.p
					}
					sl.active, sl.candidate = s.p, nil
				}
			}
		})
	}
}

func TestNewerCandidateDisplacesPendingOne(t *testing.T) {
	g := &registry{slots: map[string]*slot{}}
	b := &plugin{base: "p", instance: "b", generation: 2}
	c := &plugin{base: "p", instance: "c", generation: 2}
	if d, err := g.claim(b); d != nil || err != nil {
		t.Fatalf("claim b: %v %v", d, err)
	}
	if d, err := g.claim(c); d != b || err != nil {
		t.Fatalf("claim c: displaced %v, %v; want b", d, err)
	}
	if _, err := g.claim(&plugin{base: "p", instance: "o", generation: 1}); err == nil {
		t.Fatal("a lower generation displaced the pending candidate")
	}
}

func TestSnapshotDiff(t *testing.T) {
	pod := func(id, uid string) *api.PodSandbox { return &api.PodSandbox{Id: id, Uid: uid} }
	ctr := func(id string, st api.ContainerState) *api.Container { return &api.Container{Id: id, State: st} }
	before := &snapshot{
		pods: []*api.PodSandbox{pod("p1", "u1"), pod("p2", "u2")},
		ctrs: []*api.Container{ctr("c1", api.ContainerState_CONTAINER_CREATED), ctr("c2", api.ContainerState_CONTAINER_RUNNING)},
	}
	now := &snapshot{
		pods: []*api.PodSandbox{pod("p1", "u1"), pod("p3", "u3")},
		ctrs: []*api.Container{ctr("c1", api.ContainerState_CONTAINER_RUNNING), ctr("c3", api.ContainerState_CONTAINER_CREATED)},
	}
	before.encode()
	diff := func(base, now *snapshot) *delta {
		g := &registry{r: &Adaptation{syncFn: func(ctx context.Context, cb SyncCB) error {
			_, err := cb(ctx, now.pods, now.ctrs)
			return err
		}}}
		d, err := g.changesSince(context.Background(), base)
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	d := diff(before, now)
	ids := func(n int, id func(int) string) []string {
		var out []string
		for i := range n {
			out = append(out, id(i))
		}
		return out
	}
	if got := ids(len(d.pods), func(i int) string { return d.pods[i].Id }); !slices.Equal(got, []string{"p3"}) {
		t.Errorf("changed pods %v", got)
	}
	if got := ids(len(d.ctrs), func(i int) string { return d.ctrs[i].Id }); !slices.Equal(got, []string{"c1", "c3"}) {
		t.Errorf("changed containers %v", got)
	}
	if !slices.Equal(d.removedPods, []string{"p2"}) || !slices.Equal(d.removedCtrs, []string{"c2"}) {
		t.Errorf("removed %v %v", d.removedPods, d.removedCtrs)
	}
	if !diff(before, before).empty() {
		t.Error("a snapshot differs from itself")
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
