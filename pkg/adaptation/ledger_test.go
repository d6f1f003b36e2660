package adaptation

import (
	"context"
	"errors"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/nri-handover/nri/api"
	"github.com/nri-handover/nri/internal/adjust"
)

// A standby reactivated after its successor went away is told what changed
// while it stood by, in a delta round marked as a reactivation, not the
// whole node again; and the journal kept for it goes with it.
func TestReactivatedStandbyGetsWhatChangedSinceItStoodBy(t *testing.T) {
	rt := newFakeRuntime()
	pod := &api.PodSandbox{Id: "p1"}
	rt.pods = []*api.PodSandbox{pod}
	rt.containers = []*api.Container{{Id: "c1", PodSandboxId: "p1", State: api.ContainerState_CONTAINER_RUNNING}}
	r, sock := startRuntime(t, rt, WithStandbyGrace(time.Hour))
	defer r.Stop()

	optIn := func(id string, gen uint64) func(*api.RegisterPluginRequest) {
		return func(q *api.RegisterPluginRequest) {
			q.InstanceId, q.Generation = id, gen
			q.Features = []string{api.FeatureHandover, api.FeatureDeltaSync}
		}
	}
	a := newFakePlugin("10", "p", nil)
	a.regReq = optIn("a", 1)
	a.connect(t, sock)
	defer a.close()
	waitActive(t, r, "10-p")
	b := newFakePlugin("10", "p", nil)
	b.regReq = optIn("b", 2)
	b.connect(t, sock)
	waitOnlyActive(t, r, "b", "b active, a standing by")

	c2 := &api.Container{Id: "c2", PodSandboxId: "p1"}
	if _, err := r.CreateContainer(context.Background(), &CreateContainerRequest{Pod: pod, Container: c2}); err != nil {
		t.Fatalf("CreateContainer: %v", err)
	}
	a.mu.Lock()
	before := len(a.syncs)
	a.mu.Unlock()
	b.close()
	// Read as an event reads it, after the reactivation's hold: a is in
	// the dispatch list from its swap, before its round.
	eventually(t, func() bool { return slices.Equal(dispatchedTo(r, "10-p"), []string{"a"}) }, "a reactivated")

	a.mu.Lock()
	rounds := slices.Clone(a.syncs[before:])
	a.mu.Unlock()
	if len(rounds) != 1 {
		t.Fatalf("a got %d rounds on reactivation, want 1", len(rounds))
	}
	got := rounds[0]
	if !got.GetDelta() || !got.GetTakeover().GetReactivation() {
		t.Fatalf("reactivation round: delta %v, takeover %v", got.GetDelta(), got.GetTakeover())
	}
	if ctrs := got.GetContainers(); len(ctrs) != 1 || ctrs[0].GetId() != "c2" {
		t.Fatalf("reactivation round carries %v, want only c2 (created while a stood by)", ctrs)
	}
	eventually(t, func() bool { return r.ledger.Stats().Cursors == 0 }, "the standby's journal released")
}

// A container created while a cursor is open is journaled as the runtime
// reports it once created: the merged adjustment applied once, as the
// runtime's generator applies it, to the container as the runtime sent it
// (merging the replies edits the request's container in place).
func TestLedgerCreatedContainerIsTheRuntimes(t *testing.T) {
	rt := newFakeRuntime()
	pod := &api.PodSandbox{Id: "p1"}
	rt.pods = []*api.PodSandbox{pod}
	r, sock := startRuntime(t, rt)
	defer r.Stop()

	p := newFakePlugin("10", "p", nil)
	p.handle = func(_ context.Context, e api.Event, _ any) (any, error) {
		if e != api.Event_CREATE_CONTAINER {
			return nil, nil
		}
		a := &api.ContainerAdjustment{}
		a.RemoveMount("/data")
		a.AddMount(&api.Mount{Destination: "/cache", Type: "tmpfs", Source: "tmpfs"})
		a.AddHooks(&api.Hooks{Poststop: []*api.Hook{{Path: "/bin/cleanup"}}})
		a.AddRlimit("RLIMIT_NPROC", 10, 5)
		a.RemoveEnv("A")
		a.AddEnv("X", "1")
		a.AddDevice(&api.LinuxDevice{Path: "/dev/nvidia0", Type: "c", Major: 195})
		a.SetLinuxMemoryLimit(1 << 30)
		a.SetLinuxMemoryReservation(1 << 29) // the runtime does not apply it
		a.SetLinuxOomScoreAdj(ptrTo(-500))
		return &api.CreateContainerResponse{Adjust: a}, nil
	}
	p.connect(t, sock)
	defer p.close()
	waitActive(t, r, "10-p")

	cur := r.ledger.OpenCursor()
	defer cur.Close()
	sent := &api.Container{
		Id: "c1", PodSandboxId: "p1", Name: "c1",
		Args:   []string{"/bin/app"},
		Env:    []string{"A=1", "B=2"},
		Mounts: []*api.Mount{{Destination: "/data", Type: "bind", Source: "/srv"}},
		Hooks:  &api.Hooks{Poststop: []*api.Hook{{Path: "/bin/old"}}},
		Linux:  &api.LinuxContainer{Resources: &api.LinuxResources{Cpu: &api.LinuxCPU{Cpus: "0"}}},
	}
	rsp, err := r.CreateContainer(context.Background(), &CreateContainerRequest{Pod: pod, Container: proto.Clone(sent).(*api.Container)})
	if err != nil {
		t.Fatalf("CreateContainer: %v", err)
	}

	d, ok := cur.Since()
	if !ok || len(d.Ctrs) != 1 {
		t.Fatalf("journal: ok %v, containers %v", ok, d.Ctrs)
	}
	got := d.Ctrs[0]
	want := proto.Clone(sent).(*api.Container)
	if err := adjust.Apply(want, rsp.GetAdjust()); err != nil {
		t.Fatal(err)
	}
	want.State = api.ContainerState_CONTAINER_CREATED
	if !proto.Equal(got, want) {
		t.Errorf("journaled\n%v\nthe runtime has\n%v", got, want)
	}
	var dests []string
	for _, m := range got.Mounts {
		dests = append(dests, m.Destination)
	}
	if !slices.Equal(dests, []string{"/cache"}) {
		t.Errorf("mounts %v, want [/cache]", dests)
	}
	if hooks := got.GetHooks().GetPoststop(); len(hooks) != 2 {
		t.Errorf("poststop hooks %v, want the container's and the plugin's", hooks)
	}
	// The merged adjustment carries no environment removal (upstream's
	// merge drops them), so the runtime keeps A; the request's container,
	// edited in place, lost it.
	if len(got.Rlimits) != 1 || !slices.Equal(got.Env, []string{"A=1", "B=2", "X=1"}) {
		t.Errorf("rlimits %v, env %v", got.Rlimits, got.Env)
	}
	l := got.GetLinux()
	if len(l.GetDevices()) != 1 || l.GetOomScoreAdj().GetValue() != -500 ||
		l.GetResources().GetMemory().GetLimit().GetValue() != 1<<30 ||
		l.GetResources().GetMemory().GetReservation() != nil || l.GetResources().GetCpu().GetCpus() != "0" {
		t.Errorf("linux %v", l)
	}
}

func ptrTo[T any](v T) *T { return &v }

// The comparison taken when the gate is free is not made while a hold is
// queued (an event waiting for the hold may hold the runtime's lock, which
// SyncFn takes), and its caller does not wait for a SyncFn that blocks: the
// gate stays held until SyncFn returns.
func TestLedgerCheckNeverStallsItsCaller(t *testing.T) {
	release := make(chan struct{})
	var calls atomic.Int32
	var block atomic.Bool
	r, err := New("test-runtime", "v0", func(ctx context.Context, cb SyncCB) error {
		calls.Add(1)
		if block.Load() {
			<-release
		}
		_, err := cb(ctx, nil, nil)
		return err
	}, func(context.Context, []*ContainerUpdate) ([]*ContainerUpdate, error) { return nil, nil }, WithLogger(testLogger()))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Stop()
	r.ledger.Seed(0, nil, nil)

	held := r.hold.enqueue()
	r.checkLedger(context.Background())
	if n := calls.Load(); n != 0 {
		t.Errorf("SyncFn called %d times while a hold was queued", n)
	}
	r.release(held)

	block.Store(true)
	r.checkLedger(context.Background()) // returns while SyncFn blocks
	if n := calls.Load(); n != 1 {
		t.Fatalf("SyncFn called %d times; want 1", n)
	}
	if r.syncGate.TryLock() {
		r.syncGate.Unlock()
		t.Error("the gate was free while SyncFn ran")
	}
	close(release)
	eventually(t, func() bool {
		if r.syncGate.TryLock() {
			r.syncGate.Unlock()
			return true
		}
		return false
	}, "the gate released once SyncFn returned")
}

// What the runtime applied of updates whose UpdateFn failed is unknown: the
// ledger is not used for a takeover until a comparison finds it exact.
func TestLedgerDistrustedWhenUpdateFnFails(t *testing.T) {
	c1 := &api.Container{Id: "c1", PodSandboxId: "p1", State: api.ContainerState_CONTAINER_RUNNING}
	r, err := New("test-runtime", "v0", func(ctx context.Context, cb SyncCB) error {
		_, err := cb(ctx, nil, []*api.Container{c1})
		return err
	}, func(context.Context, []*ContainerUpdate) ([]*ContainerUpdate, error) {
		return nil, errors.New("the runtime's store is gone")
	}, WithLogger(testLogger()))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Stop()
	r.ledger.Seed(0, nil, []*api.Container{c1})
	r.ledger.Note(api.Event_REMOVE_CONTAINER, &api.RemoveContainerRequest{Container: &api.Container{Id: "c0"}}, nil, false)
	r.ledger.Seed(r.ledger.Version(), nil, []*api.Container{c1})
	if !r.ledger.Usable() {
		t.Fatal("not usable after a comparison found no difference")
	}
	u := &api.ContainerUpdate{ContainerId: "c1", Linux: &api.LinuxContainerUpdate{Resources: &api.LinuxResources{Cpu: &api.LinuxCPU{Cpus: "0-1"}}}}
	if _, err := r.updateContainers(context.Background(), []*ContainerUpdate{u}); err == nil {
		t.Fatal("UpdateFn's error was not returned")
	}
	if r.ledger.Usable() {
		t.Error("the ledger is used after an update with an unknown outcome")
	}
}
