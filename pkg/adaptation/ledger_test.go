package adaptation

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/nri-handover/nri/api"
	"github.com/nri-handover/nri/internal/adjust"
)

// The ledger keeps nothing before it is seeded; then it reports, per
// object, the state the latest event implies, only what came after a
// cursor's position, and forgets removals when the last cursor closes.
func TestLedgerReportsWhatEventsImply(t *testing.T) {
	j := ledger{kept: true}
	pod := &api.PodSandbox{Id: "p1"}
	ctr := func(id string) *api.Container {
		return &api.Container{Id: id, PodSandboxId: "p1", Annotations: map[string]string{"a": "1"}}
	}
	note := j.note
	note(api.Event_RUN_POD_SANDBOX, &api.RunPodSandboxRequest{Pod: pod}, nil, false) // not seeded: not kept
	if j.objs != nil {
		t.Fatal("the ledger kept an event before it was seeded")
	}
	j.seed(0, nil, nil)
	cur := j.openCursor()

	adjust := &api.ContainerAdjustment{Annotations: map[string]string{"stamp": "old", "-a": ""}}
	note(api.Event_RUN_POD_SANDBOX, &api.RunPodSandboxRequest{Pod: pod}, nil, false)
	note(api.Event_CREATE_CONTAINER, &api.CreateContainerRequest{Pod: pod, Container: ctr("c1")}, &api.CreateContainerResponse{Adjust: adjust}, false)
	note(api.Event_CREATE_CONTAINER, &api.CreateContainerRequest{Pod: pod, Container: ctr("failed")}, nil, true)
	note(api.Event_CREATE_CONTAINER, &api.CreateContainerRequest{Pod: pod, Container: ctr("c2")}, &api.CreateContainerResponse{}, false)
	note(api.Event_START_CONTAINER, &api.StartContainerRequest{Pod: pod, Container: ctr("c2")}, nil, false)
	note(api.Event_CREATE_CONTAINER, &api.CreateContainerRequest{Pod: pod, Container: ctr("c3")}, &api.CreateContainerResponse{}, false)
	note(api.Event_STOP_CONTAINER, &api.StopContainerRequest{Pod: pod, Container: ctr("c3")}, nil, false)
	note(api.Event_REMOVE_CONTAINER, &api.RemoveContainerRequest{Pod: pod, Container: ctr("c0")}, nil, false)

	d, ok := cur.since()
	if !ok {
		t.Fatal("cursor closed")
	}
	var ids []string
	states := map[string]api.ContainerState{}
	for _, c := range d.ctrs {
		ids = append(ids, c.Id)
		states[c.Id] = c.State
	}
	if want := []string{"c1", "c2", "c3"}; !slices.Equal(ids, want) {
		t.Errorf("containers %v, want %v (a failed creation is not a container)", ids, want)
	}
	if c1 := d.ctrs[0]; c1.Annotations["stamp"] != "old" || c1.Annotations["a"] != "" {
		t.Errorf("created container does not carry its merged adjustment: %v", c1.Annotations)
	}
	for id, want := range map[string]api.ContainerState{"c1": api.ContainerState_CONTAINER_CREATED,
		"c2": api.ContainerState_CONTAINER_RUNNING, "c3": api.ContainerState_CONTAINER_STOPPED} {
		if states[id] != want {
			t.Errorf("%s in state %v, want %v", id, states[id], want)
		}
	}
	if len(d.pods) != 1 || !slices.Equal(d.removedCtrs, []string{"c0"}) {
		t.Errorf("pods %v, removed containers %v", d.pods, d.removedCtrs)
	}

	note(api.Event_REMOVE_POD_SANDBOX, &api.RemovePodSandboxRequest{Pod: pod}, nil, false)
	if d, _ := cur.since(); len(d.ctrs)+len(d.pods) != 0 || !slices.Equal(d.removedPods, []string{"p1"}) {
		t.Errorf("second read: %+v, want only pod p1 removed", d)
	}
	if d, _ := cur.since(); !d.empty() {
		t.Errorf("a read with nothing new is not empty: %+v", d)
	}

	cur.close()
	cur.close()
	for key, e := range j.objs {
		if e.removed {
			t.Errorf("tombstone %s outlived the last cursor", key)
		}
	}
	if _, ctrs, _ := j.state(); len(ctrs) != 3 || j.open != 0 {
		t.Errorf("state after the cursors closed: %d containers, %d cursors; want 3, 0", len(ctrs), j.open)
	}
}

// A seed replaces what the runtime reports anew, but not an object that an
// event changed after the seed's SyncFn call began (the event is newer), and
// a cursor sees what the seed changed.
func TestLedgerSeedKeepsNewerEvents(t *testing.T) {
	j := ledger{kept: true}
	c := func(id string, st api.ContainerState) *api.Container {
		return &api.Container{Id: id, PodSandboxId: "p1", State: st}
	}
	j.seed(0, nil, []*api.Container{c("c1", api.ContainerState_CONTAINER_RUNNING), c("c2", api.ContainerState_CONTAINER_RUNNING)})
	cur := j.openCursor()
	defer cur.close()
	from := j.version()
	j.note(api.Event_STOP_CONTAINER, &api.StopContainerRequest{Container: c("c1", api.ContainerState_CONTAINER_RUNNING)}, nil, false)
	// SyncFn read its state before the exit was stored, and c2 is gone.
	j.seed(from, nil, []*api.Container{c("c1", api.ContainerState_CONTAINER_RUNNING), c("c3", api.ContainerState_CONTAINER_CREATED)})
	_, ctrs, _ := j.state()
	got := map[string]api.ContainerState{}
	for _, x := range ctrs {
		got[x.Id] = x.State
	}
	if len(got) != 2 || got["c1"] != api.ContainerState_CONTAINER_STOPPED || got["c3"] != api.ContainerState_CONTAINER_CREATED {
		t.Fatalf("ledger after the seed: %v; want c1 stopped (the newer event), c3 created, c2 gone", got)
	}
	d, _ := cur.since()
	if !slices.Equal(d.removedCtrs, []string{"c2"}) || len(d.ctrs) != 2 {
		t.Fatalf("cursor saw %+v; want c1, c3 changed and c2 removed", d)
	}
}

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
	eventually(t, func() bool { return r.ledger.cursors() == 0 }, "the standby's journal released")
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

	cur := r.ledger.openCursor()
	defer cur.close()
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

	d, ok := cur.since()
	if !ok || len(d.ctrs) != 1 {
		t.Fatalf("journal: ok %v, containers %v", ok, d.ctrs)
	}
	got := d.ctrs[0]
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

// removals counts the relayed removals remembered, for tests.
func (l *ledger) removals() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.gone)
}

// cursors counts the open cursors, for tests.
func (l *ledger) cursors() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.open
}

// A comparison with a listing counts what is missing from the ledger, extra
// in it, or different, but neither an object an event changed after the
// listing began nor one whose removal was relayed; only a comparison that
// found nothing makes the ledger usable for a takeover.
func TestLedgerComparisonCountsWhatDiffers(t *testing.T) {
	j := ledger{kept: true}
	c := func(id string, st api.ContainerState) *api.Container {
		return &api.Container{Id: id, PodSandboxId: "p1", State: st}
	}
	running, stopped := api.ContainerState_CONTAINER_RUNNING, api.ContainerState_CONTAINER_STOPPED
	if cmp := j.seed(0, nil, []*api.Container{c("same", running), c("differs", running), c("extra", running),
		c("removed", running), c("changed", running)}); cmp.done || j.usable() {
		t.Fatalf("the first seed compared (%+v) or made the ledger usable: nothing was compared", cmp)
	}
	j.note(api.Event_REMOVE_CONTAINER, &api.RemoveContainerRequest{Container: c("removed", stopped)}, nil, false)
	from := j.version()
	j.note(api.Event_STOP_CONTAINER, &api.StopContainerRequest{Container: c("changed", running)}, nil, false)
	cmp := j.seed(from, nil, []*api.Container{c("same", running), c("differs", stopped), c("missing", running),
		c("removed", stopped), c("changed", running)})
	want := []string{"different ctr/differs (state)", "extra ctr/extra", "missing ctr/missing"}
	if !cmp.done || cmp.differ != 3 || !slices.Equal(cmp.sample, want) {
		t.Errorf("comparison %+v; want 3 differing: %v", cmp, want)
	}
	if j.usable() {
		t.Error("the ledger is usable after a comparison found differences")
	}
	_, ctrs, _ := j.state()
	var ids []string
	for _, x := range ctrs {
		ids = append(ids, x.Id)
	}
	if want := []string{"changed", "differs", "missing", "same"}; !slices.Equal(ids, want) {
		t.Errorf("reseeded to %v; want %v (the relayed removal stays removed)", ids, want)
	}
	if cmp := j.seed(j.version(), nil, ctrs); cmp.differ != 0 || !j.usable() {
		t.Errorf("comparison with the same listing: %+v, usable %v; want 0 differing, usable", cmp, j.usable())
	}
	if j.removals() != 0 {
		t.Errorf("%d removals remembered after a listing without them", j.removals())
	}
	j.distrust()
	if j.usable() {
		t.Error("usable after an update whose outcome is unknown")
	}
}

// A relayed removal is not undone by a listing made before the runtime's
// stores changed (CRI-O), with no cursor open to keep a tombstone; the
// removals remembered stay bounded between listings.
func TestLedgerRelayedRemovalStands(t *testing.T) {
	j := ledger{kept: true}
	c1 := &api.Container{Id: "c1", PodSandboxId: "p1", State: api.ContainerState_CONTAINER_STOPPED}
	j.seed(0, nil, []*api.Container{c1})
	j.note(api.Event_REMOVE_CONTAINER, &api.RemoveContainerRequest{Container: c1}, nil, false)
	j.seed(j.version(), nil, []*api.Container{c1})
	if _, ctrs, _ := j.state(); len(ctrs) != 0 {
		t.Fatalf("a listing brought back %v, whose removal was relayed", ctrs)
	}
	for i := range maxGone + 10 {
		id := "x" + strconv.Itoa(i)
		j.note(api.Event_REMOVE_CONTAINER, &api.RemoveContainerRequest{Container: &api.Container{Id: id}}, nil, false)
	}
	if n := j.removals(); n != maxGone {
		t.Errorf("%d removals remembered; want at most %d", n, maxGone)
	}
}

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
	r.ledger.seed(0, nil, nil)

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
	r.ledger.seed(0, nil, []*api.Container{c1})
	r.ledger.note(api.Event_REMOVE_CONTAINER, &api.RemoveContainerRequest{Container: &api.Container{Id: "c0"}}, nil, false)
	r.ledger.seed(r.ledger.version(), nil, []*api.Container{c1})
	if !r.ledger.usable() {
		t.Fatal("not usable after a comparison found no difference")
	}
	u := &api.ContainerUpdate{ContainerId: "c1", Linux: &api.LinuxContainerUpdate{Resources: &api.LinuxResources{Cpu: &api.LinuxCPU{Cpus: "0-1"}}}}
	if _, err := r.updateContainers(context.Background(), []*ContainerUpdate{u}); err == nil {
		t.Fatal("UpdateFn's error was not returned")
	}
	if r.ledger.usable() {
		t.Error("the ledger is used after an update with an unknown outcome")
	}
}

// A creation relayed before the runtime stores it (CRI-O) is not undone by
// a listing taken in between, nor counted as a difference; a second listing
// without it drops it (its creation failed after it was relayed).
func TestLedgerKeepsARelayedCreationUntilListed(t *testing.T) {
	l := &ledger{kept: true}
	c0 := &api.Container{Id: "c0", PodSandboxId: "p", State: api.ContainerState_CONTAINER_RUNNING}
	l.seed(0, nil, []*api.Container{c0})
	l.note(api.Event_CREATE_CONTAINER, &api.CreateContainerRequest{Container: &api.Container{Id: "c1", PodSandboxId: "p"}}, &api.CreateContainerResponse{}, false)

	if c := l.seed(l.version(), nil, []*api.Container{c0}); c.differ != 0 {
		t.Fatalf("a creation not stored yet counted: %d differ (%v)", c.differ, c.sample)
	}
	if _, ctrs, _ := l.state(); len(ctrs) != 2 {
		t.Fatalf("the ledger holds %d containers after a listing without the relayed creation; want c0 and c1", len(ctrs))
	}
	if c := l.seed(l.version(), nil, []*api.Container{c0}); c.differ != 1 {
		t.Errorf("a creation no second listing showed: %d differ, want 1 (c1 extra)", c.differ)
	}
	if _, ctrs, _ := l.state(); len(ctrs) != 1 {
		t.Errorf("the ledger still holds %d containers; want c0 alone", len(ctrs))
	}
}

// A container whose UpdateFn call is in flight may be listed either side of
// the update: a comparison meanwhile does not count it, and the update is
// noted when UpdateFn returns (hack/model/ledger.pml, BUG_PEND_COUNTED).
func TestLedgerComparisonSkipsUpdatesInFlight(t *testing.T) {
	l := &ledger{kept: true}
	c1 := &api.Container{Id: "c1", PodSandboxId: "p", State: api.ContainerState_CONTAINER_RUNNING,
		Linux: &api.LinuxContainer{Resources: &api.LinuxResources{Cpu: &api.LinuxCPU{Cpus: "0-3"}}}}
	l.seed(0, nil, []*api.Container{c1})
	u := &api.ContainerUpdate{ContainerId: "c1", Linux: &api.LinuxContainerUpdate{Resources: &api.LinuxResources{Cpu: &api.LinuxCPU{Cpus: "0-1"}}}}
	l.updatingBegins([]*api.ContainerUpdate{u})
	applied := proto.Clone(c1).(*api.Container)
	applied.Linux.Resources.Cpu.Cpus = "0-1" // the runtime applied it; UpdateFn has not returned
	l.relaysLife = true
	if c := l.seed(l.version(), nil, []*api.Container{applied}); c.differ != 0 {
		t.Fatalf("an update in flight counted: %d differ (%v)", c.differ, c.sample)
	}
	if l.usable() {
		t.Error("trusted after a comparison that skipped an update in flight")
	}
	l.applied([]*api.ContainerUpdate{u}, nil)
	if c := l.seed(l.version(), nil, []*api.Container{applied}); c.differ != 0 {
		t.Errorf("after the update was noted: %d differ (%v)", c.differ, c.sample)
	}
	if !l.usable() {
		t.Error("not trusted after a comparison found no difference")
	}
	if len(l.updating) != 0 {
		t.Errorf("updates in flight left behind: %v", l.updating)
	}
}

// What a runtime changes about a pod after relaying its stop (containerd
// tears its network namespace down, and its pid is gone) is taken from the
// next listing and not counted; the same change to a pod still running is.
func TestLedgerReseedsAStoppedPodUncounted(t *testing.T) {
	withNet := func(id string) *api.PodSandbox {
		return &api.PodSandbox{Id: id, Pid: 42, Linux: &api.LinuxPodSandbox{Namespaces: []*api.LinuxNamespace{
			{Type: "network", Path: "/var/run/netns/" + id}, {Type: "ipc"}}}}
	}
	torn := func(id string) *api.PodSandbox {
		return &api.PodSandbox{Id: id, Linux: &api.LinuxPodSandbox{Namespaces: []*api.LinuxNamespace{{Type: "ipc"}}}}
	}
	l := &ledger{kept: true}
	l.seed(0, []*api.PodSandbox{withNet("stopped"), withNet("running")}, nil)
	l.note(api.Event_STOP_POD_SANDBOX, &api.StopPodSandboxRequest{Pod: withNet("stopped")}, nil, false)
	c := l.seed(l.version(), []*api.PodSandbox{torn("stopped"), torn("running")}, nil)
	if c.differ != 1 || !strings.HasPrefix(c.sample[0], "different pod/running (") {
		t.Errorf("comparison %+v; want the running pod alone counted", c)
	}
	pods, _, _ := l.state()
	for _, p := range pods {
		if len(p.GetLinux().GetNamespaces()) != 1 {
			t.Errorf("pod %s not reseeded from the listing: %v", p.GetId(), p.GetLinux().GetNamespaces())
		}
	}
}

// containerd lists no exited container: a container whose stop was relayed
// and that the listing lacks leaves the ledger uncounted; a running one the
// listing lacks is counted (its removal was not relayed).
func TestLedgerDropsAStoppedContainerUncounted(t *testing.T) {
	ctr := func(id string) *api.Container {
		return &api.Container{Id: id, PodSandboxId: "p", State: api.ContainerState_CONTAINER_RUNNING}
	}
	l := &ledger{kept: true}
	l.seed(0, nil, []*api.Container{ctr("exited"), ctr("running")})
	l.note(api.Event_STOP_CONTAINER, &api.StopContainerRequest{Container: ctr("exited")}, nil, false)
	c := l.seed(l.version(), nil, nil)
	if c.differ != 1 || c.sample[0] != "extra ctr/running" {
		t.Errorf("comparison %+v; want the running container alone counted", c)
	}
	if _, ctrs, _ := l.state(); len(ctrs) != 0 {
		t.Errorf("the ledger holds %d containers; want none, as listed", len(ctrs))
	}
}

// A running container listed with another pid (containerd reads it from the
// live task: 0 while its exit is in flight) is taken from the listing and not
// counted; another field that differs is.
func TestLedgerTakesAPidUncounted(t *testing.T) {
	ctr := func(id string, pid uint32, name string) *api.Container {
		return &api.Container{Id: id, PodSandboxId: "p", Name: name, Pid: pid, State: api.ContainerState_CONTAINER_RUNNING}
	}
	l := &ledger{kept: true}
	l.seed(0, nil, []*api.Container{ctr("exiting", 7, "a"), ctr("renamed", 8, "b")})
	c := l.seed(l.version(), nil, []*api.Container{ctr("exiting", 0, "a"), ctr("renamed", 0, "c")})
	if c.differ != 1 || !strings.HasPrefix(c.sample[0], "different ctr/renamed") {
		t.Errorf("comparison %+v; want the renamed container alone counted", c)
	}
}

// A creation whose merged adjustment the runtime's generator rejects leaves
// no container: not in the state, not in a cursor's read, not as an extra
// entry in the next comparison; one it accepts is there as created, and its
// start, noted before anything read it, replaces it whole.
func TestLedgerRejectedCreationLeavesNoContainer(t *testing.T) {
	l := &ledger{kept: true}
	pod := &api.PodSandbox{Id: "p1"}
	l.seed(l.version(), []*api.PodSandbox{pod}, nil)
	cur := l.openCursor()
	defer cur.close()

	bad := &api.ContainerAdjustment{}
	// a shared mount from a path that is not a mount point: the generator
	// fails to read its propagation
	bad.AddMount(&api.Mount{Destination: "/x", Type: "bind", Source: t.TempDir() + "/none", Options: []string{"rbind", "rshared"}})
	if err := adjust.Apply(&api.Container{}, bad); err == nil {
		t.Fatal("the generator accepts the adjustment the test needs it to reject")
	}
	good := &api.ContainerAdjustment{}
	good.AddAnnotation("a", "1")
	create := func(id string, a *api.ContainerAdjustment) *api.Container {
		c := &api.Container{Id: id, PodSandboxId: "p1", Env: []string{"A=1"}}
		l.note(api.Event_CREATE_CONTAINER, &api.CreateContainerRequest{Pod: pod, Container: cloneContainer(c)},
			&api.CreateContainerResponse{Adjust: a}, false)
		return c
	}
	create("bad", bad)
	create("good", good)
	started := create("started", good)
	started.State = api.ContainerState_CONTAINER_RUNNING
	started.Annotations = map[string]string{"a": "1"}
	l.note(api.Event_START_CONTAINER, &api.StartContainerRequest{Pod: pod, Container: started}, nil, false)

	d, ok := cur.since()
	if !ok {
		t.Fatal("cursor closed")
	}
	var ids []string
	for _, c := range d.ctrs {
		ids = append(ids, c.GetId())
	}
	if !slices.Equal(ids, []string{"good", "started"}) {
		t.Errorf("cursor read %v, want [good started]", ids)
	}
	_, ctrs, _ := l.state()
	want := map[string]*api.Container{
		"good":    {Id: "good", PodSandboxId: "p1", Env: []string{"A=1"}, Annotations: map[string]string{"a": "1"}, State: api.ContainerState_CONTAINER_CREATED},
		"started": started,
	}
	if len(ctrs) != len(want) {
		t.Errorf("state holds %d containers, want %d", len(ctrs), len(want))
	}
	for _, c := range ctrs {
		if w := want[c.GetId()]; !proto.Equal(c, w) {
			t.Errorf("state holds\n%v\nwant\n%v", c, w)
		}
	}
	if cmp := l.seed(l.version(), []*api.PodSandbox{pod}, []*api.Container{want["good"], started}); cmp.differ != 0 {
		t.Errorf("comparison found %v", cmp.sample)
	}
}

// A start reuses its creation's copy only while nothing has read it: a
// container a listing handed out between the creation and the start stays
// as it was read, and the ledger holds the started container either way.
func TestLedgerStartLeavesWhatWasReadAlone(t *testing.T) {
	for _, read := range []bool{false, true} {
		t.Run("read="+strconv.FormatBool(read), func(t *testing.T) {
			l := &ledger{kept: true}
			pod := &api.PodSandbox{Id: "p1"}
			l.seed(l.version(), []*api.PodSandbox{pod}, nil)
			adj := &api.ContainerAdjustment{}
			adj.AddAnnotation("b", "2")
			l.note(api.Event_CREATE_CONTAINER, &api.CreateContainerRequest{Pod: pod, Container: &api.Container{
				Id: "c1", PodSandboxId: "p1", Annotations: map[string]string{"a": "1"}, Env: []string{"A=1"},
			}}, &api.CreateContainerResponse{Adjust: adj}, false)
			var seen, asRead *api.Container
			if read {
				_, ctrs, _ := l.listing()
				seen = ctrs[0]
				asRead = proto.Clone(seen).(*api.Container)
			}
			started := &api.Container{Id: "c1", PodSandboxId: "p1", State: api.ContainerState_CONTAINER_RUNNING,
				Annotations: map[string]string{"a": "1", "b": "2", "c": "3"}, Env: []string{"A=1", "B=2"}}
			l.note(api.Event_START_CONTAINER, &api.StartContainerRequest{Pod: pod, Container: proto.Clone(started).(*api.Container)}, nil, false)
			if read && !proto.Equal(seen, asRead) {
				t.Errorf("the start changed the container a listing handed out:\n%v\nwas\n%v", seen, asRead)
			}
			if _, ctrs, _ := l.listing(); len(ctrs) != 1 || !proto.Equal(ctrs[0], started) {
				t.Errorf("the ledger holds %v, want %v", ctrs, started)
			}
		})
	}
}

// The parts merging sets where the runtime sent none are shared by the
// started containers whose creation copy lacked them (mergedEmpty): they
// are what merging sets, and an update applied to one container, as a
// plugin's UpdateContainers or the runtime's UpdateContainer, changes that
// container alone.
func TestLedgerSharedEmptyPartsStayEmpty(t *testing.T) {
	filled := collectCreateContainerResult(&api.CreateContainerRequest{}).request.create.Container
	if !proto.Equal(mergedEmpty, filled) {
		t.Fatalf("mergedEmpty is %v, merging sets %v", mergedEmpty, filled)
	}
	l := &ledger{kept: true}
	pod := &api.PodSandbox{Id: "p1"}
	l.seed(l.version(), []*api.PodSandbox{pod}, nil)
	var started []*api.Container
	for _, id := range []string{"c1", "c2"} {
		req := &api.CreateContainerRequest{Pod: pod, Container: &api.Container{Id: id, PodSandboxId: "p1"}}
		sent := cloneContainer(req.Container)
		collectCreateContainerResult(req) // merging sets the unset parts, empty
		l.note(api.Event_CREATE_CONTAINER, &api.CreateContainerRequest{Pod: pod, Container: sent},
			&api.CreateContainerResponse{Adjust: &api.ContainerAdjustment{}}, false)
		req.Container.State = api.ContainerState_CONTAINER_RUNNING
		l.note(api.Event_START_CONTAINER, &api.StartContainerRequest{Pod: pod, Container: req.Container}, nil, false)
		started = append(started, proto.Clone(req.Container).(*api.Container))
	}
	u := &api.ContainerUpdate{ContainerId: "c1"}
	u.SetLinuxMemoryLimit(1 << 20)
	u.SetLinuxCPUShares(512)
	l.applied(l.updatingBegins([]*api.ContainerUpdate{u}), nil)
	res := &api.LinuxResources{Memory: &api.LinuxMemory{Limit: api.Int64(2 << 20)}, Cpu: &api.LinuxCPU{Cpus: "0"}}
	c2 := proto.Clone(started[1]).(*api.Container)
	l.note(api.Event_UPDATE_CONTAINER, &api.UpdateContainerRequest{Pod: pod, Container: c2, LinuxResources: res},
		&api.UpdateContainerResponse{}, false)

	if !proto.Equal(mergedEmpty, filled) {
		t.Fatalf("an update changed the shared parts: %v", mergedEmpty)
	}
	_, ctrs, _ := l.state()
	if len(ctrs) != 2 || ctrs[0].GetLinux().GetResources().GetMemory().GetLimit().GetValue() != 1<<20 ||
		ctrs[1].GetLinux().GetResources().GetMemory().GetLimit().GetValue() != 2<<20 ||
		ctrs[1].GetLinux().GetResources().GetCpu().GetCpus() != "0" {
		t.Errorf("the ledger holds %v", ctrs)
	}
}
