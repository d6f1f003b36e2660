package adaptation

import (
	"context"
	"slices"
	"strconv"
	"sync"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/nri-handover/nri/api"
	"github.com/nri-handover/nri/internal/adjust"
	"github.com/nri-handover/nri/pkg/adaptation/builtin"
	"github.com/nri-handover/nri/pkg/adaptation/internal/ledger"
)

// The ledger against runtimes that relay what they change as containerd,
// CRI-O and moby do: a successor is told what SyncFn shows, or joins under
// the gate from SyncFn where the ledger cannot be exact.

type relaying int

const (
	// likeContainerd relays every change inside BlockPluginSync, and
	// applies a plugin's updates without an event.
	likeContainerd relaying = iota
	// likeCRIO takes no BlockPluginSync and relays RemoveContainer before
	// it removes the container from its stores.
	likeCRIO
	// likeMoby relays only creation.
	likeMoby
)

// modelRuntime keeps the pods and containers SyncFn lists, changed by the
// operations below as the runtime it models changes them.
type modelRuntime struct {
	relaying relaying
	r        *Adaptation

	mu    sync.Mutex
	pods  map[string]*api.PodSandbox
	ctrs  map[string]*api.Container
	syncs int             // SyncFn calls
	fail  map[string]bool // UpdateFn fails the updates of these containers
	// beforeStoreRemoval, if set, runs between a relayed removal and the
	// stores' (CRI-O).
	beforeStoreRemoval func()
}

func newModelRuntime(how relaying) *modelRuntime {
	return &modelRuntime{relaying: how, pods: map[string]*api.PodSandbox{}, ctrs: map[string]*api.Container{},
		fail: map[string]bool{}}
}

func (m *modelRuntime) start(t *testing.T, opts ...Option) (*Adaptation, string) {
	t.Helper()
	sock, opts := testOptions(t, opts...)
	r, err := New("model-runtime", "v0.0.1", m.sync, m.update, opts...)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	m.r = r
	if err := r.Start(); err != nil {
		t.Fatalf("Start: %v", err)
	}
	return r, sock
}

// listing is what SyncFn reports, in id order.
func (m *modelRuntime) listing() ([]*api.PodSandbox, []*api.Container) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var pods []*api.PodSandbox
	var ctrs []*api.Container
	for _, p := range m.pods {
		pods = append(pods, proto.Clone(p).(*api.PodSandbox))
	}
	for _, c := range m.ctrs {
		ctrs = append(ctrs, proto.Clone(c).(*api.Container))
	}
	slices.SortFunc(pods, func(a, b *api.PodSandbox) int { return cmpID(a.GetId(), b.GetId()) })
	slices.SortFunc(ctrs, func(a, b *api.Container) int { return cmpID(a.GetId(), b.GetId()) })
	return pods, ctrs
}

func cmpID(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func (m *modelRuntime) sync(ctx context.Context, cb SyncCB) error {
	m.mu.Lock()
	m.syncs++
	m.mu.Unlock()
	pods, ctrs := m.listing()
	updates, err := cb(ctx, pods, ctrs)
	if err == nil {
		m.mu.Lock()
		m.applyLocked(updates)
		m.mu.Unlock()
	}
	return err
}

func (m *modelRuntime) syncCalls() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.syncs
}

func (m *modelRuntime) update(_ context.Context, updates []*api.ContainerUpdate) ([]*api.ContainerUpdate, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.applyLocked(updates), nil
}

// applyLocked merges updates into the containers, as test/runtime does, and
// returns those it could not apply.
func (m *modelRuntime) applyLocked(updates []*api.ContainerUpdate) []*api.ContainerUpdate {
	var failed []*api.ContainerUpdate
	for _, u := range updates {
		if u == nil {
			continue
		}
		c := m.ctrs[u.GetContainerId()]
		if c == nil || c.State == api.ContainerState_CONTAINER_STOPPED || m.fail[u.GetContainerId()] {
			if !u.GetIgnoreFailure() {
				failed = append(failed, u)
			}
			continue
		}
		adjust.MergeResources(c, u.GetLinux().GetResources())
	}
	return failed
}

// block holds BlockPluginSync across an operation, where the runtime does.
func (m *modelRuntime) block() func() {
	if m.relaying == likeCRIO {
		return func() {}
	}
	return m.r.BlockPluginSync().Unblock
}

func (m *modelRuntime) pod(id string) *api.PodSandbox {
	m.mu.Lock()
	defer m.mu.Unlock()
	return proto.Clone(m.pods[id]).(*api.PodSandbox)
}

func (m *modelRuntime) ctr(id string) *api.Container {
	m.mu.Lock()
	defer m.mu.Unlock()
	return proto.Clone(m.ctrs[id]).(*api.Container)
}

func (m *modelRuntime) runPod(t *testing.T, id string) {
	t.Helper()
	defer m.block()()
	pod := &api.PodSandbox{Id: id, Name: id, Namespace: "default"}
	m.mu.Lock()
	m.pods[id] = pod
	m.mu.Unlock()
	if err := m.r.RunPodSandbox(context.Background(), &api.RunPodSandboxRequest{Pod: m.pod(id)}); err != nil {
		t.Fatalf("RunPodSandbox %s: %v", id, err)
	}
}

func (m *modelRuntime) create(t *testing.T, pod, id string, res *api.LinuxResources) {
	t.Helper()
	defer m.block()()
	c := &api.Container{Id: id, PodSandboxId: pod, Name: id, Linux: &api.LinuxContainer{Resources: res}}
	rsp, err := m.r.CreateContainer(context.Background(),
		&api.CreateContainerRequest{Pod: m.pod(pod), Container: proto.Clone(c).(*api.Container)})
	if err != nil {
		t.Fatalf("CreateContainer %s: %v", id, err)
	}
	if err := adjust.Apply(c, rsp.GetAdjust()); err != nil {
		t.Fatalf("adjusting %s: %v", id, err)
	}
	c.State = api.ContainerState_CONTAINER_CREATED
	m.mu.Lock()
	defer m.mu.Unlock()
	m.ctrs[id] = c
	m.applyLocked(rsp.GetUpdate())
}

func (m *modelRuntime) startCtr(t *testing.T, id string) {
	t.Helper()
	defer m.block()()
	if m.relaying != likeMoby {
		c := m.ctr(id)
		if err := m.r.StartContainer(context.Background(), &api.StartContainerRequest{Pod: m.pod(c.PodSandboxId), Container: c}); err != nil {
			t.Fatalf("StartContainer %s: %v", id, err)
		}
	}
	m.mu.Lock()
	m.ctrs[id].State = api.ContainerState_CONTAINER_RUNNING
	m.mu.Unlock()
}

// updateCtr relays UpdateContainer and applies what the reply says: the
// container's own merged resources if plugins changed them, else those
// asked for, and the updates of other containers.
func (m *modelRuntime) updateCtr(t *testing.T, id string, res *api.LinuxResources) {
	t.Helper()
	defer m.block()()
	c := m.ctr(id)
	rsp, err := m.r.UpdateContainer(context.Background(), &api.UpdateContainerRequest{Pod: m.pod(c.PodSandboxId), Container: c,
		LinuxResources: proto.Clone(res).(*api.LinuxResources)})
	if err != nil {
		t.Fatalf("UpdateContainer %s: %v", id, err)
	}
	own, others := res, []*api.ContainerUpdate(nil)
	for _, u := range rsp.GetUpdate() {
		switch {
		case u == nil:
		case u.GetContainerId() == id:
			own = u.GetLinux().GetResources()
		default:
			others = append(others, u)
		}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	adjust.MergeResources(m.ctrs[id], own)
	m.applyLocked(others)
}

func (m *modelRuntime) stop(t *testing.T, id string) {
	t.Helper()
	defer m.block()()
	var updates []*api.ContainerUpdate
	if m.relaying != likeMoby {
		c := m.ctr(id)
		rsp, err := m.r.StopContainer(context.Background(), &api.StopContainerRequest{Pod: m.pod(c.PodSandboxId), Container: c})
		if err != nil {
			t.Fatalf("StopContainer %s: %v", id, err)
		}
		updates = rsp.GetUpdate()
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.ctrs[id].State = api.ContainerState_CONTAINER_STOPPED
	m.applyLocked(updates)
}

func (m *modelRuntime) remove(t *testing.T, id string) {
	t.Helper()
	defer m.block()()
	c := m.ctr(id)
	drop := func() {
		m.mu.Lock()
		delete(m.ctrs, id)
		m.mu.Unlock()
	}
	switch m.relaying {
	case likeMoby:
		drop()
		return
	case likeContainerd:
		drop()
	}
	if err := m.r.RemoveContainer(context.Background(), &api.RemoveContainerRequest{Pod: m.pod(c.PodSandboxId), Container: c}); err != nil {
		t.Fatalf("RemoveContainer %s: %v", id, err)
	}
	if m.relaying == likeCRIO {
		if m.beforeStoreRemoval != nil {
			m.beforeStoreRemoval()
		}
		drop()
	}
}

// told is what f was told of the containers by its synchronization rounds:
// a full round, then the delta rounds after it.
func told(f *fakePlugin) map[string]*api.Container {
	f.mu.Lock()
	defer f.mu.Unlock()
	view := map[string]*api.Container{}
	first := true
	for _, s := range f.syncs {
		if first && !s.GetDelta() {
			view = map[string]*api.Container{}
		}
		for _, c := range s.GetContainers() {
			view[c.GetId()] = c
		}
		for _, id := range s.GetRemovedContainers() {
			delete(view, id)
		}
		first = !s.GetMore()
	}
	return view
}

// toldWhatSyncFnShows fails the test where what f was told of the containers
// differs from what SyncFn lists.
func (m *modelRuntime) toldWhatSyncFnShows(t *testing.T, f *fakePlugin, who string) {
	t.Helper()
	view := told(f)
	_, ctrs := m.listing()
	for _, c := range ctrs {
		if got, ok := view[c.GetId()]; !ok {
			t.Errorf("%s was not told of container %s, which SyncFn lists", who, c.GetId())
		} else if !proto.Equal(got, c) {
			t.Errorf("%s was told container %s is\n  %v\nSyncFn lists\n  %v", who, c.GetId(), got, c)
		}
		delete(view, c.GetId())
	}
	for id := range view {
		t.Errorf("%s was told of container %s, which SyncFn does not list", who, id)
	}
}

// ledgerComparisons records RecordLedgerComparison's counts.
type ledgerComparisons struct {
	noopMetrics
	mu     sync.Mutex
	counts []int
}

func (m *ledgerComparisons) RecordLedgerComparison(differing int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.counts = append(m.counts, differing)
}

func (m *ledgerComparisons) all() []int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.counts)
}

func deltaInstance(id string, gen uint64) func(*api.RegisterPluginRequest) {
	return func(q *api.RegisterPluginRequest) {
		q.InstanceId, q.Generation = id, gen
		q.Features = []string{api.FeatureHandover, api.FeatureDeltaSync}
	}
}

func cpus(set string) *api.LinuxResources {
	return &api.LinuxResources{Cpu: &api.LinuxCPU{Cpus: set}}
}

func update(id string, res *api.LinuxResources) *api.ContainerUpdate {
	return &api.ContainerUpdate{ContainerId: id, Linux: &api.LinuxContainerUpdate{Resources: res}}
}

// waitInstanceActive waits until the instance with id receives events.
func waitInstanceActive(t *testing.T, r *Adaptation, id string) {
	t.Helper()
	eventually(t, func() bool {
		return slices.ContainsFunc(r.reg.active(), func(p *plugin) bool { return p.instance == id })
	}, "instance "+id+" active")
}

// Finding 3 (issue 39): containerd applies a plugin's updates without an
// event (UpdateContainers, the updates for other containers in the replies
// of CreateContainer, UpdateContainer and StopContainer, and in a
// Synchronize reply), and an UpdateContainer event's container is recorded
// as updated. A CPU manager pins c1 to CPUs 0-1 (Synchronize reply,
// UpdateContainers), moves c0 to 2-7 (CreateContainer and StopContainer
// replies), and the runtime updates c3 (an UpdateContainer event, whose
// reply changes c0); a builtin plugin pins c4, which ran before the runtime
// restarted, in its reply to Start's Synchronize; no later event shows any
// of it. The CPU manager's successor,
// synchronized from the ledger (an operation holds the gate, so nothing
// reseeds it), is told what SyncFn lists, and every comparison of the
// ledger with SyncFn finds no difference.
func TestLedgerShowsWhatTheRuntimeApplied(t *testing.T) {
	m := newModelRuntime(likeContainerd)
	m.pods["p0"] = &api.PodSandbox{Id: "p0", Name: "p0", Namespace: "default"}
	m.ctrs["c4"] = &api.Container{Id: "c4", PodSandboxId: "p0", Name: "c4", State: api.ContainerState_CONTAINER_RUNNING,
		Linux: &api.LinuxContainer{Resources: cpus("0-7")}}
	pin := &builtin.BuiltinPlugin{Base: "pin", Index: "00", Handlers: builtin.BuiltinHandlers{
		Synchronize: func(_ context.Context, req *api.SynchronizeRequest) (*api.SynchronizeResponse, error) {
			if req.GetMore() {
				return &api.SynchronizeResponse{More: true}, nil
			}
			return &api.SynchronizeResponse{Update: []*api.ContainerUpdate{update("c4", cpus("7"))}}, nil
		}}}
	cmp := &ledgerComparisons{}
	r, sock := m.start(t, WithMetrics(cmp), WithBuiltinPlugins(pin))
	defer r.Stop()
	if got := m.ctr("c4").GetLinux().GetResources().GetCpu().GetCpus(); got != "7" {
		t.Fatalf("c4 on cpus %q after Start; want the builtin plugin's 7", got)
	}
	m.runPod(t, "p1")
	m.create(t, "p1", "c0", cpus("0-7"))
	m.create(t, "p1", "c1", cpus("0-3"))
	m.create(t, "p1", "c3", cpus("0-7"))
	m.startCtr(t, "c0")
	m.startCtr(t, "c1")
	m.startCtr(t, "c3")

	a := newFakePlugin("10", "cpu", nil)
	a.regReq = deltaInstance("a", 1)
	a.syncUpdates = []*api.ContainerUpdate{update("c1", &api.LinuxResources{Cpu: &api.LinuxCPU{Mems: "0"}})}
	a.handle = func(_ context.Context, e api.Event, req any) (any, error) {
		switch e {
		case api.Event_CREATE_CONTAINER: // the new one gets CPU 0-1's neighbours
			return &api.CreateContainerResponse{Update: []*api.ContainerUpdate{update("c0", cpus("2-7"))}}, nil
		case api.Event_UPDATE_CONTAINER:
			return &api.UpdateContainerResponse{Update: []*api.ContainerUpdate{
				update("c0", &api.LinuxResources{Memory: &api.LinuxMemory{Limit: api.Int64(1 << 30)}})}}, nil
		case api.Event_STOP_CONTAINER:
			return &api.StopContainerResponse{Update: []*api.ContainerUpdate{
				update("c0", &api.LinuxResources{Cpu: &api.LinuxCPU{Shares: api.UInt64(256)}})}}, nil
		}
		return nil, nil
	}
	a.connect(t, sock)
	defer a.close()
	waitInstanceActive(t, r, "a")
	eventually(t, func() bool {
		return m.ctr("c1").GetLinux().GetResources().GetCpu().GetMems() == "0"
	}, "the update a's Synchronize reply asked for applied")

	// Unsolicited: c1 pinned to 0-1; the runtime fails c0's update.
	m.mu.Lock()
	m.fail["c0"] = true
	m.mu.Unlock()
	rsp, err := a.runtime.UpdateContainers(context.Background(), &api.UpdateContainersRequest{
		Update: []*api.ContainerUpdate{update("c1", cpus("0-1")), update("c0", &api.LinuxResources{Cpu: &api.LinuxCPU{Mems: "1"}})}})
	if err != nil || len(rsp.GetFailed()) != 1 {
		t.Fatalf("UpdateContainers: failed %v, %v; want c0's failed", rsp.GetFailed(), err)
	}
	m.mu.Lock()
	m.fail["c0"] = false
	m.mu.Unlock()

	m.create(t, "p1", "c2", cpus("1")) // the reply moves c0 to 2-7
	m.startCtr(t, "c2")
	// The reply changes c0's memory limit.
	m.updateCtr(t, "c3", &api.LinuxResources{Cpu: &api.LinuxCPU{Shares: api.UInt64(512)}})
	m.stop(t, "c2") // the reply changes c0's shares

	// A runtime operation in flight: the takeover cannot compare the
	// ledger first, and is synchronized from it.
	unblock := r.BlockPluginSync().Unblock
	before := m.syncCalls()
	b := newFakePlugin("10", "cpu", nil)
	b.regReq = deltaInstance("b", 2)
	b.connect(t, sock)
	defer b.close()
	waitInstanceActive(t, r, "b")
	unblock()
	if n := m.syncCalls(); n != before {
		t.Errorf("the takeover called SyncFn %d times; want none (from the ledger)", n-before)
	}
	m.toldWhatSyncFnShows(t, b, "b")

	// b is active from its swap on, inside its switch's hold; a comparison
	// is taken only once no hold is queued.
	eventually(t, r.hold.idle, "b's switch released")
	r.checkLedger(context.Background())
	counts := cmp.all()
	if len(counts) < 2 || slices.ContainsFunc(counts, func(n int) bool { return n != 0 }) {
		t.Errorf("comparisons of the ledger with SyncFn found %v differing entries; want 0 at each of at least 2", counts)
	}
}

// Finding 4 (issue 39), CRI-O's order: RemoveContainer is relayed before the
// container leaves the runtime's stores, and no gate is taken, so a plugin
// joining meanwhile is synchronized from a listing that still shows it. The
// relayed removal stands: the ledger does not take the container back, the
// comparison does not count it, a successor is not told of it, and the
// removal is forgotten once a listing no longer shows the container.
func TestLedgerKeepsRelayedRemovals(t *testing.T) {
	m := newModelRuntime(likeCRIO)
	cmp := &ledgerComparisons{}
	r, sock := m.start(t, WithMetrics(cmp))
	defer r.Stop()
	m.runPod(t, "p1")
	m.create(t, "p1", "c1", nil)
	m.startCtr(t, "c1")
	m.create(t, "p1", "c2", nil)

	a := newFakePlugin("10", "p", nil)
	a.regReq = deltaInstance("a", 1)
	a.connect(t, sock)
	defer a.close()
	waitOnlyActive(t, r, "a", "a active")

	m.stop(t, "c1")
	x := newFakePlugin("20", "upstream", nil) // joins under the gate
	defer x.close()
	m.beforeStoreRemoval = func() {
		x.connect(t, sock)
		waitActive(t, r, "20-upstream")
	}
	m.remove(t, "c1")
	if view := told(x); view["c1"] == nil {
		t.Fatalf("the plugin joining before the stores changed was not told of c1; the scenario did not happen")
	}

	b := newFakePlugin("10", "p", nil)
	b.regReq = deltaInstance("b", 2)
	b.connect(t, sock)
	defer b.close()
	waitInstanceActive(t, r, "b")
	m.toldWhatSyncFnShows(t, b, "b")
	if counts := cmp.all(); len(counts) < 2 || slices.ContainsFunc(counts, func(n int) bool { return n != 0 }) {
		t.Errorf("comparisons of the ledger with SyncFn found %v differing entries; want 0 at each of at least 2", counts)
	}
	if n := r.ledger.Stats().Removals; n != 0 {
		t.Errorf("%d relayed removals remembered after a listing without them; want 0", n)
	}
}

// Finding 4 (issue 39), moby's order: only creation is relayed. A removed
// container stays in the ledger; the comparison before the takeover counts
// it, so the successor joins under the gate from SyncFn (as upstream's join
// does) and is told what SyncFn lists; and however many containers come and
// go, the ledger stays within its bound.
func TestLedgerNotUsedWhereRemovalsAreNotRelayed(t *testing.T) {
	m := newModelRuntime(likeMoby)
	cmp := &ledgerComparisons{}
	r, sock := m.start(t, WithMetrics(cmp))
	defer r.Stop()
	m.runPod(t, "p1")
	m.create(t, "p1", "c1", nil)
	m.create(t, "p1", "c2", nil)

	a := newFakePlugin("10", "p", nil)
	a.regReq = deltaInstance("a", 1)
	a.connect(t, sock)
	defer a.close()
	waitOnlyActive(t, r, "a", "a active")

	m.stop(t, "c1")
	m.remove(t, "c1")
	before := m.syncCalls()
	b := newFakePlugin("10", "p", nil)
	b.regReq = deltaInstance("b", 2)
	b.connect(t, sock)
	defer b.close()
	waitOnlyActive(t, r, "b", "b took over")
	m.toldWhatSyncFnShows(t, b, "b")
	if n := m.syncCalls() - before; n != 2 {
		t.Errorf("the takeover called SyncFn %d times; want 2 (the comparison, then the join under the gate)", n)
	}
	if counts := cmp.all(); !slices.Contains(counts, 1) {
		t.Errorf("comparisons found %v differing entries; want one finding c1 (extra)", counts)
	}

	// However many containers come and go unrelayed, the ledger stays
	// within twice its bound and then some: past its bound it is not
	// trusted, past the next one dropped.
	limit := r.ledger.Stats().Limit
	most := 0
	for i := range limit + 10 {
		id := "x" + strconv.Itoa(i)
		m.create(t, "p1", id, nil)
		m.remove(t, id)
		most = max(most, r.ledger.Stats().Objects)
	}
	if most > limit {
		t.Errorf("the ledger held up to %d objects while %d containers came and went unrelayed; want at most %d", most, limit+10, limit)
	}
}

// A takeover while an operation holds the gate uses the ledger only once
// the runtime relayed a container's life past its creation (a start, a
// stop, a removal): moby relays creation only, so between two
// comparisons its removals never reach the ledger, and a successor told
// from it would learn of containers that are gone (hack/model/ledger.pml,
// BUG_TRUST_ALWAYS). It joins under the gate instead, once the operation
// ends, and is told what SyncFn shows.
func TestLedgerNotTrustedBeforeTheRuntimeRelayedMoreThanCreation(t *testing.T) {
	m := newModelRuntime(likeMoby)
	atGate := make(chan struct{}, 8)
	r, sock := m.start(t, WithScheduleHook(func(point string) {
		if point == pointGate {
			atGate <- struct{}{}
		}
	}))
	defer r.Stop()
	m.runPod(t, "p1")
	m.create(t, "p1", "c1", nil)
	m.create(t, "p1", "c2", nil)

	a := newFakePlugin("10", "p", nil)
	a.regReq = deltaInstance("a", 1)
	a.connect(t, sock)
	defer a.close()
	waitOnlyActive(t, r, "a", "a active")
	drain(atGate)

	m.remove(t, "c1") // moby: not relayed
	op := r.BlockPluginSync()
	b := newFakePlugin("10", "p", nil)
	b.regReq = deltaInstance("b", 2)
	b.connect(t, sock)
	defer b.close()
	receive(t, atGate, "b's join queued for the gate")
	if slices.Contains(dispatchedTo(r, "10-p"), "b") {
		t.Fatal("b took over from the ledger while an operation held the gate, before anything but creation was relayed")
	}
	op.Unblock()
	waitOnlyActive(t, r, "b", "b took over under the gate")
	m.toldWhatSyncFnShows(t, b, "b")
}

func drain[T any](ch <-chan T) {
	for {
		select {
		case <-ch:
		default:
			return
		}
	}
}

// The parts merging sets where the runtime sent none are shared by the
// started containers whose creation copy lacked them (ledger.SharedEmpty): they
// are what merging sets, and an update applied to one container, as a
// plugin's UpdateContainers or the runtime's UpdateContainer, changes that
// container alone.
func TestLedgerSharedEmptyPartsStayEmpty(t *testing.T) {
	filled := collectCreateContainerResult(&api.CreateContainerRequest{}).request.create.Container
	if !proto.Equal(ledger.SharedEmpty(), filled) {
		t.Fatalf("the shared parts are %v, merging sets %v", ledger.SharedEmpty(), filled)
	}
	l := &ledger.Ledger{Kept: true}
	pod := &api.PodSandbox{Id: "p1"}
	l.Seed(l.Version(), []*api.PodSandbox{pod}, nil)
	var started []*api.Container
	for _, id := range []string{"c1", "c2"} {
		req := &api.CreateContainerRequest{Pod: pod, Container: &api.Container{Id: id, PodSandboxId: "p1"}}
		sent := ledger.CloneContainer(req.Container)
		collectCreateContainerResult(req) // merging sets the unset parts, empty
		l.Note(api.Event_CREATE_CONTAINER, &api.CreateContainerRequest{Pod: pod, Container: sent},
			&api.CreateContainerResponse{Adjust: &api.ContainerAdjustment{}}, false)
		req.Container.State = api.ContainerState_CONTAINER_RUNNING
		l.Note(api.Event_START_CONTAINER, &api.StartContainerRequest{Pod: pod, Container: req.Container}, nil, false)
		started = append(started, proto.Clone(req.Container).(*api.Container))
	}
	u := &api.ContainerUpdate{ContainerId: "c1"}
	u.SetLinuxMemoryLimit(1 << 20)
	u.SetLinuxCPUShares(512)
	l.Applied(l.UpdatingBegins([]*api.ContainerUpdate{u}), nil)
	res := &api.LinuxResources{Memory: &api.LinuxMemory{Limit: api.Int64(2 << 20)}, Cpu: &api.LinuxCPU{Cpus: "0"}}
	c2 := proto.Clone(started[1]).(*api.Container)
	l.Note(api.Event_UPDATE_CONTAINER, &api.UpdateContainerRequest{Pod: pod, Container: c2, LinuxResources: res},
		&api.UpdateContainerResponse{}, false)

	if !proto.Equal(ledger.SharedEmpty(), filled) {
		t.Fatalf("an update changed the shared parts: %v", ledger.SharedEmpty())
	}
	_, ctrs, _ := l.State()
	if len(ctrs) != 2 || ctrs[0].GetLinux().GetResources().GetMemory().GetLimit().GetValue() != 1<<20 ||
		ctrs[1].GetLinux().GetResources().GetMemory().GetLimit().GetValue() != 2<<20 ||
		ctrs[1].GetLinux().GetResources().GetCpu().GetCpus() != "0" {
		t.Errorf("the ledger holds %v", ctrs)
	}
}
