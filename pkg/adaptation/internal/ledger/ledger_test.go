package ledger

import (
	"slices"
	"strconv"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/nri-handover/nri/api"
	"github.com/nri-handover/nri/internal/adjust"
)

// The ledger keeps nothing before it is seeded; then it reports, per
// object, the state the latest event implies, only what came after a
// cursor's position, and forgets removals when the last cursor closes.
func TestLedgerReportsWhatEventsImply(t *testing.T) {
	j := Ledger{Kept: true}
	pod := &api.PodSandbox{Id: "p1"}
	ctr := func(id string) *api.Container {
		return &api.Container{Id: id, PodSandboxId: "p1", Annotations: map[string]string{"a": "1"}}
	}
	note := j.Note
	note(api.Event_RUN_POD_SANDBOX, &api.RunPodSandboxRequest{Pod: pod}, nil, false) // not seeded: not kept
	if j.objs != nil {
		t.Fatal("the ledger kept an event before it was seeded")
	}
	j.Seed(0, nil, nil)
	cur := j.OpenCursor()

	adjust := &api.ContainerAdjustment{Annotations: map[string]string{"stamp": "old", "-a": ""}}
	note(api.Event_RUN_POD_SANDBOX, &api.RunPodSandboxRequest{Pod: pod}, nil, false)
	note(api.Event_CREATE_CONTAINER, &api.CreateContainerRequest{Pod: pod, Container: ctr("c1")}, &api.CreateContainerResponse{Adjust: adjust}, false)
	note(api.Event_CREATE_CONTAINER, &api.CreateContainerRequest{Pod: pod, Container: ctr("failed")}, nil, true)
	note(api.Event_CREATE_CONTAINER, &api.CreateContainerRequest{Pod: pod, Container: ctr("c2")}, &api.CreateContainerResponse{}, false)
	note(api.Event_START_CONTAINER, &api.StartContainerRequest{Pod: pod, Container: ctr("c2")}, nil, false)
	note(api.Event_CREATE_CONTAINER, &api.CreateContainerRequest{Pod: pod, Container: ctr("c3")}, &api.CreateContainerResponse{}, false)
	note(api.Event_STOP_CONTAINER, &api.StopContainerRequest{Pod: pod, Container: ctr("c3")}, nil, false)
	note(api.Event_REMOVE_CONTAINER, &api.RemoveContainerRequest{Pod: pod, Container: ctr("c0")}, nil, false)

	d, ok := cur.Since()
	if !ok {
		t.Fatal("cursor closed")
	}
	var ids []string
	states := map[string]api.ContainerState{}
	for _, c := range d.Ctrs {
		ids = append(ids, c.Id)
		states[c.Id] = c.State
	}
	if want := []string{"c1", "c2", "c3"}; !slices.Equal(ids, want) {
		t.Errorf("containers %v, want %v (a failed creation is not a container)", ids, want)
	}
	if c1 := d.Ctrs[0]; c1.Annotations["stamp"] != "old" || c1.Annotations["a"] != "" {
		t.Errorf("created container does not carry its merged adjustment: %v", c1.Annotations)
	}
	for id, want := range map[string]api.ContainerState{"c1": api.ContainerState_CONTAINER_CREATED,
		"c2": api.ContainerState_CONTAINER_RUNNING, "c3": api.ContainerState_CONTAINER_STOPPED} {
		if states[id] != want {
			t.Errorf("%s in state %v, want %v", id, states[id], want)
		}
	}
	if len(d.Pods) != 1 || !slices.Equal(d.RemovedCtrs, []string{"c0"}) {
		t.Errorf("pods %v, removed containers %v", d.Pods, d.RemovedCtrs)
	}

	note(api.Event_REMOVE_POD_SANDBOX, &api.RemovePodSandboxRequest{Pod: pod}, nil, false)
	if d, _ := cur.Since(); len(d.Ctrs)+len(d.Pods) != 0 || !slices.Equal(d.RemovedPods, []string{"p1"}) {
		t.Errorf("second read: %+v, want only pod p1 removed", d)
	}
	if d, _ := cur.Since(); !d.Empty() {
		t.Errorf("a read with nothing new is not empty: %+v", d)
	}

	cur.Close()
	cur.Close()
	for key, e := range j.objs {
		if e.removed {
			t.Errorf("tombstone %s outlived the last cursor", key)
		}
	}
	if _, ctrs, _ := j.State(); len(ctrs) != 3 || j.open != 0 {
		t.Errorf("state after the cursors closed: %d containers, %d cursors; want 3, 0", len(ctrs), j.open)
	}
}

// A seed replaces what the runtime reports anew, but not an object that an
// event changed after the seed's SyncFn call began (the event is newer), and
// a cursor sees what the seed changed.
func TestLedgerSeedKeepsNewerEvents(t *testing.T) {
	j := Ledger{Kept: true}
	c := func(id string, st api.ContainerState) *api.Container {
		return &api.Container{Id: id, PodSandboxId: "p1", State: st}
	}
	j.Seed(0, nil, []*api.Container{c("c1", api.ContainerState_CONTAINER_RUNNING), c("c2", api.ContainerState_CONTAINER_RUNNING)})
	cur := j.OpenCursor()
	defer cur.Close()
	from := j.Version()
	j.Note(api.Event_STOP_CONTAINER, &api.StopContainerRequest{Container: c("c1", api.ContainerState_CONTAINER_RUNNING)}, nil, false)
	// SyncFn read its state before the exit was stored, and c2 is gone.
	j.Seed(from, nil, []*api.Container{c("c1", api.ContainerState_CONTAINER_RUNNING), c("c3", api.ContainerState_CONTAINER_CREATED)})
	_, ctrs, _ := j.State()
	got := map[string]api.ContainerState{}
	for _, x := range ctrs {
		got[x.Id] = x.State
	}
	if len(got) != 2 || got["c1"] != api.ContainerState_CONTAINER_STOPPED || got["c3"] != api.ContainerState_CONTAINER_CREATED {
		t.Fatalf("ledger after the seed: %v; want c1 stopped (the newer event), c3 created, c2 gone", got)
	}
	d, _ := cur.Since()
	if !slices.Equal(d.RemovedCtrs, []string{"c2"}) || len(d.Ctrs) != 2 {
		t.Fatalf("cursor saw %+v; want c1, c3 changed and c2 removed", d)
	}
}

// removals counts the relayed removals remembered, for tests.
func (l *Ledger) removals() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.gone)
}

// cursors counts the open cursors, for tests.
func (l *Ledger) cursors() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.open
}

// A comparison with a listing counts what is missing from the ledger, extra
// in it, or different, but neither an object an event changed after the
// listing began nor one whose removal was relayed; only a comparison that
// found nothing makes the ledger usable for a takeover.
func TestLedgerComparisonCountsWhatDiffers(t *testing.T) {
	j := Ledger{Kept: true}
	c := func(id string, st api.ContainerState) *api.Container {
		return &api.Container{Id: id, PodSandboxId: "p1", State: st}
	}
	running, stopped := api.ContainerState_CONTAINER_RUNNING, api.ContainerState_CONTAINER_STOPPED
	if cmp := j.Seed(0, nil, []*api.Container{c("same", running), c("differs", running), c("extra", running),
		c("removed", running), c("changed", running)}); cmp.Done || j.Usable() {
		t.Fatalf("the first seed compared (%+v) or made the ledger usable: nothing was compared", cmp)
	}
	j.Note(api.Event_REMOVE_CONTAINER, &api.RemoveContainerRequest{Container: c("removed", stopped)}, nil, false)
	from := j.Version()
	j.Note(api.Event_STOP_CONTAINER, &api.StopContainerRequest{Container: c("changed", running)}, nil, false)
	cmp := j.Seed(from, nil, []*api.Container{c("same", running), c("differs", stopped), c("missing", running),
		c("removed", stopped), c("changed", running)})
	want := []string{"different ctr/differs (state)", "extra ctr/extra", "missing ctr/missing"}
	if !cmp.Done || cmp.Differ != 3 || !slices.Equal(cmp.Sample, want) {
		t.Errorf("comparison %+v; want 3 differing: %v", cmp, want)
	}
	if j.Usable() {
		t.Error("the ledger is usable after a comparison found differences")
	}
	_, ctrs, _ := j.State()
	var ids []string
	for _, x := range ctrs {
		ids = append(ids, x.Id)
	}
	if want := []string{"changed", "differs", "missing", "same"}; !slices.Equal(ids, want) {
		t.Errorf("reseeded to %v; want %v (the relayed removal stays removed)", ids, want)
	}
	if cmp := j.Seed(j.Version(), nil, ctrs); cmp.Differ != 0 || !j.Usable() {
		t.Errorf("comparison with the same listing: %+v, usable %v; want 0 differing, usable", cmp, j.Usable())
	}
	if j.removals() != 0 {
		t.Errorf("%d removals remembered after a listing without them", j.removals())
	}
	j.Distrust()
	if j.Usable() {
		t.Error("usable after an update whose outcome is unknown")
	}
}

// A relayed removal is not undone by a listing made before the runtime's
// stores changed (CRI-O), with no cursor open to keep a tombstone; the
// removals remembered stay bounded between listings.
func TestLedgerRelayedRemovalStands(t *testing.T) {
	j := Ledger{Kept: true}
	c1 := &api.Container{Id: "c1", PodSandboxId: "p1", State: api.ContainerState_CONTAINER_STOPPED}
	j.Seed(0, nil, []*api.Container{c1})
	j.Note(api.Event_REMOVE_CONTAINER, &api.RemoveContainerRequest{Container: c1}, nil, false)
	j.Seed(j.Version(), nil, []*api.Container{c1})
	if _, ctrs, _ := j.State(); len(ctrs) != 0 {
		t.Fatalf("a listing brought back %v, whose removal was relayed", ctrs)
	}
	for i := range maxGone + 10 {
		id := "x" + strconv.Itoa(i)
		j.Note(api.Event_REMOVE_CONTAINER, &api.RemoveContainerRequest{Container: &api.Container{Id: id}}, nil, false)
	}
	if n := j.removals(); n != maxGone {
		t.Errorf("%d removals remembered; want at most %d", n, maxGone)
	}
}

// A creation relayed before the runtime stores it (CRI-O) is not undone by
// a listing taken in between, nor counted as a difference; a second listing
// without it drops it (its creation failed after it was relayed).
func TestLedgerKeepsARelayedCreationUntilListed(t *testing.T) {
	l := &Ledger{Kept: true}
	c0 := &api.Container{Id: "c0", PodSandboxId: "p", State: api.ContainerState_CONTAINER_RUNNING}
	l.Seed(0, nil, []*api.Container{c0})
	l.Note(api.Event_CREATE_CONTAINER, &api.CreateContainerRequest{Container: &api.Container{Id: "c1", PodSandboxId: "p"}}, &api.CreateContainerResponse{}, false)

	if c := l.Seed(l.Version(), nil, []*api.Container{c0}); c.Differ != 0 {
		t.Fatalf("a creation not stored yet counted: %d differ (%v)", c.Differ, c.Sample)
	}
	if _, ctrs, _ := l.State(); len(ctrs) != 2 {
		t.Fatalf("the ledger holds %d containers after a listing without the relayed creation; want c0 and c1", len(ctrs))
	}
	if c := l.Seed(l.Version(), nil, []*api.Container{c0}); c.Differ != 1 {
		t.Errorf("a creation no second listing showed: %d differ, want 1 (c1 extra)", c.Differ)
	}
	if _, ctrs, _ := l.State(); len(ctrs) != 1 {
		t.Errorf("the ledger still holds %d containers; want c0 alone", len(ctrs))
	}
}

// A container whose UpdateFn call is in flight may be listed either side of
// the update: a comparison meanwhile does not count it, and the update is
// noted when UpdateFn returns (hack/model/ledger.pml, BUG_PEND_COUNTED).
func TestLedgerComparisonSkipsUpdatesInFlight(t *testing.T) {
	l := &Ledger{Kept: true}
	c1 := &api.Container{Id: "c1", PodSandboxId: "p", State: api.ContainerState_CONTAINER_RUNNING,
		Linux: &api.LinuxContainer{Resources: &api.LinuxResources{Cpu: &api.LinuxCPU{Cpus: "0-3"}}}}
	l.Seed(0, nil, []*api.Container{c1})
	u := &api.ContainerUpdate{ContainerId: "c1", Linux: &api.LinuxContainerUpdate{Resources: &api.LinuxResources{Cpu: &api.LinuxCPU{Cpus: "0-1"}}}}
	l.UpdatingBegins([]*api.ContainerUpdate{u})
	applied := proto.Clone(c1).(*api.Container)
	applied.Linux.Resources.Cpu.Cpus = "0-1" // the runtime applied it; UpdateFn has not returned
	l.relaysLife = true
	if c := l.Seed(l.Version(), nil, []*api.Container{applied}); c.Differ != 0 {
		t.Fatalf("an update in flight counted: %d differ (%v)", c.Differ, c.Sample)
	}
	if l.Usable() {
		t.Error("trusted after a comparison that skipped an update in flight")
	}
	l.Applied([]*api.ContainerUpdate{u}, nil)
	if c := l.Seed(l.Version(), nil, []*api.Container{applied}); c.Differ != 0 {
		t.Errorf("after the update was noted: %d differ (%v)", c.Differ, c.Sample)
	}
	if !l.Usable() {
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
	l := &Ledger{Kept: true}
	l.Seed(0, []*api.PodSandbox{withNet("stopped"), withNet("running")}, nil)
	l.Note(api.Event_STOP_POD_SANDBOX, &api.StopPodSandboxRequest{Pod: withNet("stopped")}, nil, false)
	c := l.Seed(l.Version(), []*api.PodSandbox{torn("stopped"), torn("running")}, nil)
	if c.Differ != 1 || !strings.HasPrefix(c.Sample[0], "different pod/running (") {
		t.Errorf("comparison %+v; want the running pod alone counted", c)
	}
	pods, _, _ := l.State()
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
	l := &Ledger{Kept: true}
	l.Seed(0, nil, []*api.Container{ctr("exited"), ctr("running")})
	l.Note(api.Event_STOP_CONTAINER, &api.StopContainerRequest{Container: ctr("exited")}, nil, false)
	c := l.Seed(l.Version(), nil, nil)
	if c.Differ != 1 || c.Sample[0] != "extra ctr/running" {
		t.Errorf("comparison %+v; want the running container alone counted", c)
	}
	if _, ctrs, _ := l.State(); len(ctrs) != 0 {
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
	l := &Ledger{Kept: true}
	l.Seed(0, nil, []*api.Container{ctr("exiting", 7, "a"), ctr("renamed", 8, "b")})
	c := l.Seed(l.Version(), nil, []*api.Container{ctr("exiting", 0, "a"), ctr("renamed", 0, "c")})
	if c.Differ != 1 || !strings.HasPrefix(c.Sample[0], "different ctr/renamed") {
		t.Errorf("comparison %+v; want the renamed container alone counted", c)
	}
}

// A creation whose merged adjustment the runtime's generator rejects leaves
// no container: not in the state, not in a cursor's read, not as an extra
// entry in the next comparison; one it accepts is there as created, and its
// start, noted before anything read it, replaces it whole.
func TestLedgerRejectedCreationLeavesNoContainer(t *testing.T) {
	l := &Ledger{Kept: true}
	pod := &api.PodSandbox{Id: "p1"}
	l.Seed(l.Version(), []*api.PodSandbox{pod}, nil)
	cur := l.OpenCursor()
	defer cur.Close()

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
		l.Note(api.Event_CREATE_CONTAINER, &api.CreateContainerRequest{Pod: pod, Container: CloneContainer(c)},
			&api.CreateContainerResponse{Adjust: a}, false)
		return c
	}
	create("bad", bad)
	create("good", good)
	started := create("started", good)
	started.State = api.ContainerState_CONTAINER_RUNNING
	started.Annotations = map[string]string{"a": "1"}
	l.Note(api.Event_START_CONTAINER, &api.StartContainerRequest{Pod: pod, Container: started}, nil, false)

	d, ok := cur.Since()
	if !ok {
		t.Fatal("cursor closed")
	}
	var ids []string
	for _, c := range d.Ctrs {
		ids = append(ids, c.GetId())
	}
	if !slices.Equal(ids, []string{"good", "started"}) {
		t.Errorf("cursor read %v, want [good started]", ids)
	}
	_, ctrs, _ := l.State()
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
	if cmp := l.Seed(l.Version(), []*api.PodSandbox{pod}, []*api.Container{want["good"], started}); cmp.Differ != 0 {
		t.Errorf("comparison found %v", cmp.Sample)
	}
}

// A start reuses its creation's copy only while nothing has read it: a
// container a listing handed out between the creation and the start stays
// as it was read, and the ledger holds the started container either way.
func TestLedgerStartLeavesWhatWasReadAlone(t *testing.T) {
	for _, read := range []bool{false, true} {
		t.Run("read="+strconv.FormatBool(read), func(t *testing.T) {
			l := &Ledger{Kept: true}
			pod := &api.PodSandbox{Id: "p1"}
			l.Seed(l.Version(), []*api.PodSandbox{pod}, nil)
			adj := &api.ContainerAdjustment{}
			adj.AddAnnotation("b", "2")
			l.Note(api.Event_CREATE_CONTAINER, &api.CreateContainerRequest{Pod: pod, Container: &api.Container{
				Id: "c1", PodSandboxId: "p1", Annotations: map[string]string{"a": "1"}, Env: []string{"A=1"},
			}}, &api.CreateContainerResponse{Adjust: adj}, false)
			var seen, asRead *api.Container
			if read {
				_, ctrs, _ := l.Listing()
				seen = ctrs[0]
				asRead = proto.Clone(seen).(*api.Container)
			}
			started := &api.Container{Id: "c1", PodSandboxId: "p1", State: api.ContainerState_CONTAINER_RUNNING,
				Annotations: map[string]string{"a": "1", "b": "2", "c": "3"}, Env: []string{"A=1", "B=2"}}
			l.Note(api.Event_START_CONTAINER, &api.StartContainerRequest{Pod: pod, Container: proto.Clone(started).(*api.Container)}, nil, false)
			if read && !proto.Equal(seen, asRead) {
				t.Errorf("the start changed the container a listing handed out:\n%v\nwas\n%v", seen, asRead)
			}
			if _, ctrs, _ := l.Listing(); len(ctrs) != 1 || !proto.Equal(ctrs[0], started) {
				t.Errorf("the ledger holds %v, want %v", ctrs, started)
			}
		})
	}
}
