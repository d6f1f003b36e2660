package annotator

import (
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"github.com/nri-handover/nri/api"
	"github.com/nri-handover/nri/pkg/stub"
)

func discard() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

func ctr(id, stamp string) *api.Container {
	c := &api.Container{Id: id}
	if stamp != "" {
		c.Annotations = map[string]string{HandledBy: stamp}
	}
	return c
}

func TestFullRoundSkipsWhatPredecessorsStamped(t *testing.T) {
	inv := inventory{"gone": "v1/a"}
	sum := inv.apply("v2/b", &stub.SyncInfo{Takeover: &api.Takeover{PredecessorInstance: "a"}},
		[]*api.Container{ctr("c1", "v1/a"), ctr("c2", "v0/z"), ctr("c3", ""), ctr("c4", "v2/b")})

	want := roundSummary{mine: 1, others: 2, unstamped: 1}
	if sum != want {
		t.Errorf("summary %+v, want %+v", sum, want)
	}
	wantInv := inventory{"c1": "v1/a", "c2": "v0/z", "c3": "", "c4": "v2/b"}
	if !equalInv(inv, wantInv) {
		t.Errorf("inventory %v, want %v: a full round replaces it", inv, wantInv)
	}
}

func TestDeltaRoundChangesOnlyWhatIsListed(t *testing.T) {
	inv := inventory{"c1": "v1/a", "c2": "v1/a", "c3": ""}
	sum := inv.apply("v2/b", &stub.SyncInfo{Delta: true, RemovedContainers: []string{"c2", "unknown"}},
		[]*api.Container{ctr("c4", "v1/a")})

	want := roundSummary{others: 1, removed: 1}
	if sum != want {
		t.Errorf("summary %+v, want %+v", sum, want)
	}
	wantInv := inventory{"c1": "v1/a", "c3": "", "c4": "v1/a"}
	if !equalInv(inv, wantInv) {
		t.Errorf("inventory %v, want %v", inv, wantInv)
	}
}

func equalInv(a, b inventory) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

func newTestPlugin(t *testing.T, stamp, path string) *Plugin {
	t.Helper()
	p := newPlugin(discard(), &stateFile{path: path})
	p.stamp = stamp
	return p
}

func active(t *testing.T, p *Plugin, peer string) {
	t.Helper()
	err := p.RoleChange(context.Background(), &api.RoleChangeRequest{Role: api.PluginRole_PLUGIN_ROLE_ACTIVE, PeerInstance: peer})
	if err != nil {
		t.Fatal(err)
	}
}

func create(t *testing.T, p *Plugin, id string) {
	t.Helper()
	adj, _, err := p.CreateContainer(context.Background(), &api.PodSandbox{}, ctr(id, ""))
	if err != nil {
		t.Fatal(err)
	}
	if got := adj.GetAnnotations()[HandledBy]; got != p.stamp {
		t.Fatalf("container %s stamped %q, want %q", id, got, p.stamp)
	}
}

func readState(t *testing.T, path string) state {
	t.Helper()
	st, err := (&stateFile{path: path}).load()
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// The runtime tells the old instance SUPERSEDED (or STANDBY) before it tells
// the new one ACTIVE: the old one's release is its last write, and the new
// one finds the file released.
func TestStateFileHandOffInTheRuntimesOrder(t *testing.T) {
	for _, tc := range []struct {
		name      string
		standDown func(*Plugin)
	}{
		{"superseded", func(p *Plugin) {
			p.ShutdownWithReason(context.Background(), &api.ShutdownRequest{
				Reason: api.ShutdownReason_SHUTDOWN_REASON_SUPERSEDED, SuccessorVersion: "v2", SuccessorInstance: "b"})
		}},
		{"standby", func(p *Plugin) {
			if err := p.RoleChange(context.Background(), &api.RoleChangeRequest{Role: api.PluginRole_PLUGIN_ROLE_STANDBY}); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "state.json")
			a, b := newTestPlugin(t, "v1/a", path), newTestPlugin(t, "v2/b", path)

			active(t, a, "")
			if a.taken.kind != handoffFresh {
				t.Errorf("first owner: hand-off %v, want fresh", a.taken)
			}
			create(t, a, "c1")
			if st := readState(t, path); st.Owner != "v1/a" || st.Containers["c1"] != "v1/a" || st.Released {
				t.Fatalf("while A is active: %+v", st)
			}

			tc.standDown(a)
			released := readState(t, path)
			if !released.Released || released.Owner != "v1/a" {
				t.Fatalf("after A stood down: %+v, want released by v1/a", released)
			}
			// A late event on A (there are none through a handover runtime)
			// would not touch the file any more.
			create(t, a, "late")
			if st := readState(t, path); st.Containers["late"] != "" || !st.Released {
				t.Errorf("A wrote after standing down: %+v", st)
			}

			active(t, b, "a")
			if b.taken.kind != handoffClean || b.taken.previous != "v1/a" || b.taken.epoch != 2 {
				t.Errorf("B's hand-off %+v, want clean from v1/a at epoch 2", b.taken)
			}
			if st := readState(t, path); st.Owner != "v2/b" || st.Epoch != 2 || st.Released {
				t.Errorf("after B took over: %+v", st)
			}
		})
	}
}

func TestStateFileTakenFromALostOwnerIsReportedUnclean(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.json")
	a, b := newTestPlugin(t, "v1/a", path), newTestPlugin(t, "v2/b", path)
	active(t, a, "")
	// A is killed: no release.
	active(t, b, "a")
	if b.taken.kind != handoffUnclean || b.taken.previous != "v1/a" {
		t.Errorf("hand-off %+v, want unclean from v1/a", b.taken)
	}
	// A restarted instance that owned the file last takes it back as its own.
	b.release("test")
	active(t, b, "")
	if b.taken.kind != handoffSelf || b.taken.epoch != 3 {
		t.Errorf("hand-off %+v, want self at epoch 3", b.taken)
	}
}

func TestUnreadableStateFileIsKeptAside(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.json")
	if err := os.WriteFile(path, []byte("{not json"), 0o600); err != nil {
		t.Fatal(err)
	}
	p := newTestPlugin(t, "v1/a", path)
	active(t, p, "")
	if !p.active || p.taken.kind != handoffFresh {
		t.Errorf("active %v, hand-off %v: an unreadable file must not keep the plugin from taking over", p.active, p.taken)
	}
	if b, err := os.ReadFile(path + ".unreadable"); err != nil || string(b) != "{not json" {
		t.Errorf("unreadable file not kept aside: %q, %v", b, err)
	}
	if st := readState(t, path); st.Owner != "v1/a" {
		t.Errorf("new state %+v", st)
	}
}

// Without -state-file nothing is written. A plugin that wrote anyway would
// use a default path, likely relative: the test runs in an empty working
// directory and looks there (the temporary directory alone is a place the
// plugin never hears of).
func TestNoStateFileWithoutTheFlag(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	p := newPlugin(discard(), nil)
	p.stamp = "v1/a"
	active(t, p, "")
	if !p.active {
		t.Error("without a state file the instance did not become active")
	}
	create(t, p, "c1")
	p.release("test")
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 0 {
		t.Errorf("files written: %v", entries)
	}
}

// A successor synchronizes while its predecessor is still active and
// writing: the round must not touch the file.
func TestSynchronizationBeforeActiveWritesNothing(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.json")
	p := newTestPlugin(t, "v2/b", path)
	if _, err := p.SynchronizeRound(context.Background(), &stub.SyncInfo{Takeover: &api.Takeover{PredecessorInstance: "a"}},
		nil, []*api.Container{ctr("c1", "v1/a")}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("state file written before the runtime made the instance active (%v)", err)
	}
}

// A runtime without handover (upstream NRI) sends no roles: the instance
// owns the file once synchronized.
func TestWithoutHandoverSynchronizedIsActive(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.json")
	p := newTestPlugin(t, "v1/a", path)
	p.handover = func() bool { return false }
	if _, err := p.SynchronizeRound(context.Background(), nil, nil, []*api.Container{ctr("c1", "")}); err != nil {
		t.Fatal(err)
	}
	if st := readState(t, path); st.Owner != "v1/a" || st.Epoch != 1 || len(st.Containers) != 1 {
		t.Errorf("state %+v", st)
	}
}

// Without handover two connected instances both get a creation, in turn;
// the second sees the first one's stamp and sets nothing (upstream refuses
// a container two plugins set one annotation on). With handover only the
// active instance gets it, and it stamps what it is given.
func TestWithoutHandoverTheSecondInstanceLeavesAStampedContainer(t *testing.T) {
	p := newTestPlugin(t, "v2/b", filepath.Join(t.TempDir(), "state.json"))
	p.handover = func() bool { return false }
	p.leave = true
	adj, _, err := p.CreateContainer(context.Background(), &api.PodSandbox{}, ctr("c1", "v1/a"))
	if err != nil || adj != nil {
		t.Errorf("adjustment %v, error %v: want none for a container another instance stamped", adj, err)
	}
	if p.inv["c1"] != "v1/a" {
		t.Errorf("inventory %v: want c1 recorded as v1/a's", p.inv)
	}
	adj, _, err = p.CreateContainer(context.Background(), &api.PodSandbox{}, ctr("c2", ""))
	if err != nil || adj.GetAnnotations()[HandledBy] != "v2/b" {
		t.Errorf("unstamped container: adjustment %v, error %v: want the stamp", adj, err)
	}

	p.leave = false // the default: it stamps, and upstream would fail the creation
	adj, _, err = p.CreateContainer(context.Background(), &api.PodSandbox{}, ctr("c4", "v1/a"))
	if err != nil || adj.GetAnnotations()[HandledBy] != "v2/b" {
		t.Errorf("without -leave-stamped: adjustment %v, error %v: want the stamp", adj, err)
	}
	p.leave = true

	p.handover = func() bool { return true }
	adj, _, err = p.CreateContainer(context.Background(), &api.PodSandbox{}, ctr("c3", "v1/a"))
	if err != nil || adj.GetAnnotations()[HandledBy] != "v2/b" {
		t.Errorf("with handover: adjustment %v, error %v: want the stamp", adj, err)
	}
}

func TestEnvStampIsReadBackAndWritten(t *testing.T) {
	envCtr := &api.Container{Id: "c1", Env: []string{"PATH=/bin", HandledByEnv + "=v1/a"}}
	inv := inventory{}
	sum := inv.apply("v2/b", nil, []*api.Container{envCtr, ctr("c2", "v2/b"), {Id: "c3", Env: []string{"A=b"}}})
	if want := (roundSummary{mine: 1, others: 1, unstamped: 1}); sum != want {
		t.Errorf("summary %+v, want %+v: a stamp in the environment counts as one", sum, want)
	}

	p := newPlugin(discard(), nil)
	p.stamp, p.stampKind = "v2/b", StampEnv
	adj, _, err := p.CreateContainer(context.Background(), &api.PodSandbox{}, &api.Container{Id: "c4"})
	if err != nil {
		t.Fatal(err)
	}
	if len(adj.GetAnnotations()) != 0 {
		t.Errorf("annotations %v: -stamp-env must add none (Docker Engine refuses them)", adj.GetAnnotations())
	}
	if env := adj.GetEnv(); len(env) != 1 || env[0].GetKey() != HandledByEnv || env[0].GetValue() != "v2/b" {
		t.Errorf("env %v, want %s=v2/b", env, HandledByEnv)
	}
}
