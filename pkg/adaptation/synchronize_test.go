package adaptation

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/containerd/ttrpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/nri-handover/nri/api"
	"github.com/nri-handover/nri/pkg/adaptation/internal/ledger"
)

func testRound(nPods, nCtrs, nameLen int) *syncRound {
	s := &syncRound{}
	for i := range nPods {
		s.pods = append(s.pods, &api.PodSandbox{Id: "pod-" + strconv.Itoa(i), Name: strings.Repeat("p", nameLen)})
	}
	for i := range nCtrs {
		s.ctrs = append(s.ctrs, &api.Container{Id: "ctr-" + strconv.Itoa(i), Name: strings.Repeat("c", nameLen)})
	}
	return s
}

// messages plans s with budget and builds its messages.
func messages(t *testing.T, s *syncRound, budget int) []*api.SynchronizeRequest {
	t.Helper()
	ends, err := s.plan(s.sizes(), 0, budget)
	if err != nil {
		t.Fatal(err)
	}
	var out []*api.SynchronizeRequest
	from := 0
	for _, end := range ends {
		out = append(out, s.request(from, end))
		from = end
	}
	return out
}

// ids lists the entries of messages in order, as "pod/ID", "ctr/ID",
// "-pod/ID" and "-ctr/ID".
func ids(reqs ...*api.SynchronizeRequest) []string {
	var out []string
	for _, r := range reqs {
		for _, p := range r.GetPods() {
			out = append(out, "pod/"+p.GetId())
		}
		for _, c := range r.GetContainers() {
			out = append(out, "ctr/"+c.GetId())
		}
		for _, id := range r.GetRemovedPods() {
			out = append(out, "-pod/"+id)
		}
		for _, id := range r.GetRemovedContainers() {
			out = append(out, "-ctr/"+id)
		}
	}
	return out
}

func TestPlanSyncKeepsOrderAndBudget(t *testing.T) {
	s := testRound(10, 100, 300)
	for i := range 50 {
		s.removedPods = append(s.removedPods, "gone-pod-"+strconv.Itoa(i))
		s.removedCtrs = append(s.removedCtrs, "gone-ctr-"+strconv.Itoa(i))
	}
	s.delta = true
	const budget = 4096
	reqs := messages(t, s, budget)
	if len(reqs) < 2 {
		t.Fatalf("expected several messages, got %d", len(reqs))
	}
	all := &api.SynchronizeRequest{Pods: s.pods, Containers: s.ctrs, RemovedPods: s.removedPods, RemovedContainers: s.removedCtrs}
	if got, want := ids(reqs...), ids(all); !slices.Equal(got, want) {
		t.Fatalf("entries out of order or lost:\n got %v\nwant %v", got, want)
	}
	for i, r := range reqs {
		entries := proto.Size(&api.SynchronizeRequest{Pods: r.Pods, Containers: r.Containers,
			RemovedPods: r.RemovedPods, RemovedContainers: r.RemovedContainers})
		if entries > budget {
			t.Errorf("message %d carries %d bytes of entries, budget %d", i, entries, budget)
		}
		if len(ids(r)) == 0 {
			t.Errorf("message %d is empty", i)
		}
		if r.More != (i < len(reqs)-1) || !r.Delta {
			t.Errorf("message %d: more %v delta %v", i, r.More, r.Delta)
		}
	}
}

func TestPlanSyncEmptySnapshotIsOneMessage(t *testing.T) {
	reqs := messages(t, &syncRound{}, syncMessageBudget)
	if len(reqs) != 1 || reqs[0].More {
		t.Fatalf("got %v", reqs)
	}
}

func TestPlanSyncRejectsOversizedEntry(t *testing.T) {
	s := &syncRound{ctrs: []*api.Container{{Id: "huge", Name: strings.Repeat("x", 10000)}}}
	_, err := s.plan(s.sizes(), 0, 4096)
	if err == nil || !strings.Contains(err.Error(), "container huge") {
		t.Fatalf("error %v, want one naming the container", err)
	}
}

// syncService is a plugin's Synchronize as the runtime sees it, in process:
// it records what it was sent and answers as told.
type syncService struct {
	api.PluginService // only Synchronize is called

	mu        sync.Mutex
	reqs      []*api.SynchronizeRequest
	deadlines []time.Time
	answer    func(n int, req *api.SynchronizeRequest) error // n counts calls from 0; nil: accept
	// legacy answers as a plugin written before split synchronization: it
	// never sets More, so the runtime gives up on it after a split message.
	legacy bool
}

func (s *syncService) Synchronize(ctx context.Context, req *api.SynchronizeRequest) (*api.SynchronizeResponse, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := len(s.deadlines) // calls so far
	dl, _ := ctx.Deadline()
	s.deadlines = append(s.deadlines, dl)
	if s.answer != nil {
		if err := s.answer(n, req); err != nil {
			return nil, err
		}
	}
	s.reqs = append(s.reqs, req)
	return &api.SynchronizeResponse{More: req.More && !s.legacy}, nil
}

// testEnvelope is more than ttrpc's request envelope adds to a message here
// (service and method names, timeout, no metadata).
const testEnvelope = 1 << 10

// asTTRPC refuses a message as ttrpc does one too large with its envelope.
func asTTRPC(_ int, req *api.SynchronizeRequest) error {
	return ttrpc.OversizedMessageError(proto.Size(req) + testEnvelope)
}

func (s *syncService) received() []*api.SynchronizeRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.reqs)
}

func syncPlugin(t *testing.T, svc api.PluginService) *plugin {
	t.Helper()
	r, err := New("test-runtime", "v0.0.1",
		func(context.Context, SyncCB) error { return nil },
		func(context.Context, []*ContainerUpdate) ([]*ContainerUpdate, error) { return nil, nil },
		WithLogger(testLogger()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.cancel)
	p := r.newPlugin(kindBuiltin)
	p.setName("10", "sync")
	p.svc = svc
	return p
}

// bigRound is a snapshot that needs several messages: each pod takes a
// quarter of the budget.
func bigRound(pods int) *syncRound {
	return testRound(pods, 0, syncMessageBudget/4)
}

// A round is bounded by one deadline (the request timeout, as upstream), not
// one per message: the runtime may hold its operations for the whole round.
func TestSyncRoundHasOneDeadline(t *testing.T) {
	svc := &syncService{}
	p := syncPlugin(t, svc)
	round := bigRound(10)
	if _, err := p.synchronize(context.Background(), round.pods, nil, nil); err != nil {
		t.Fatal(err)
	}
	if len(svc.deadlines) < 3 {
		t.Fatalf("sent %d messages, want several", len(svc.deadlines))
	}
	for i, dl := range svc.deadlines {
		if dl.IsZero() || !dl.Equal(svc.deadlines[0]) {
			t.Errorf("message %d has deadline %v, message 0 %v: want one deadline for the round", i, dl, svc.deadlines[0])
		}
	}
}

// When ttrpc refuses a message as too large, the round goes on from that
// message: a round sent whole (its estimate said it fits) is split by its
// entries' exact sizes; a message so planned, if refused, in ever smaller
// messages. What the plugin already has is not sent again.
func TestSyncRoundResumesFromOversizedMessage(t *testing.T) {
	round := shapedRound("large-last", 1000, ttrpcMessageLimit*3/2)
	if est := sum(round.estimatedSizes()); est > syncMessageBudget {
		t.Fatalf("test round is estimated at %d bytes: want it sent whole first", est)
	}
	var refused []int // entries in each refused message
	svc := &syncService{answer: func(n int, req *api.SynchronizeRequest) error {
		err := asTTRPC(n, req)
		if n == 2 { // the second message planned: refused though within the budget
			err = ttrpc.OversizedMessageError(ttrpcMessageLimit + 1)
		}
		if err != nil {
			refused = append(refused, len(ids(req)))
		}
		return err
	}}
	p := syncPlugin(t, svc)
	if _, err := p.synchronize(context.Background(), nil, round.ctrs, nil); err != nil {
		t.Fatal(err)
	}
	got := svc.received()
	want := ids(&api.SynchronizeRequest{Containers: round.ctrs})
	if !slices.Equal(ids(got...), want) {
		t.Fatalf("plugin received %d entries, want every container once, in order (%d)", len(ids(got...)), len(want))
	}
	if len(refused) != 2 || refused[0] != len(want) {
		t.Fatalf("refused messages of %v entries, want the whole round, then one planned message", refused)
	}
	if len(got) < 3 || len(ids(got[1])) >= refused[1] {
		t.Errorf("the refused planned message was not split: %d messages, the second has %d entries, refused with %d",
			len(got), len(ids(got[1])), refused[1])
	}
}

// shapedRound is a round of n containers whose names add up to total bytes: spread evenly ("uniform"), or half of them in the first 16
// ("large-first": what the estimate samples) or the last 16 ("large-last").
func shapedRound(shape string, n, total int) *syncRound {
	names := make([]int, n)
	for i := range names {
		names[i] = total / n
	}
	if shape != "uniform" {
		large, small := total/2/16, total/2/(n-16)
		for i := range names {
			names[i] = small
		}
		for i := range 16 {
			if shape == "large-first" {
				names[i] = large
			} else {
				names[n-1-i] = large
			}
		}
	}
	names[n/2] += total - sum(names) // what division left over
	s := &syncRound{}
	for i, l := range names {
		s.ctrs = append(s.ctrs, &api.Container{Id: "ctr-" + strconv.Itoa(i), Name: strings.Repeat("c", l)})
	}
	return s
}

// sizedRound is shapedRound sized so that its one message is about size
// bytes, and no more.
func sizedRound(t *testing.T, shape string, size int) *syncRound {
	t.Helper()
	const n = 1000
	over := proto.Size(&api.SynchronizeRequest{Containers: shapedRound(shape, n, size).ctrs}) - size
	s := shapedRound(shape, n, size-over)
	if got := proto.Size(&api.SynchronizeRequest{Containers: s.ctrs}); got > size || got < size-64 {
		t.Fatalf("test round of %d bytes, want about %d", got, size)
	}
	return s
}

var roundShapes = []string{"large-first", "large-last", "uniform"}

// A round that ttrpc takes in one message is sent in one, as upstream sends
// it, whatever its entries' sizes: a plugin written before split
// synchronization works wherever it works with upstream. Such a plugin is
// what answers here.
func TestSyncRoundThatFitsIsOneMessageWhateverItsShape(t *testing.T) {
	for _, size := range []struct {
		name  string
		bytes int
	}{
		{"3.3 MB", ttrpcMessageLimit * 8 / 10},
		{"over the budget, within ttrpc's limit", ttrpcMessageLimit - 2*testEnvelope},
	} {
		for _, shape := range roundShapes {
			t.Run(size.name+"/"+shape, func(t *testing.T) {
				round := sizedRound(t, shape, size.bytes)
				svc := &syncService{answer: asTTRPC, legacy: true}
				p := syncPlugin(t, svc)
				if _, err := p.synchronize(context.Background(), nil, round.ctrs, nil); err != nil {
					t.Fatal(err)
				}
				if got := svc.received(); len(got) != 1 || got[0].More || len(svc.deadlines) != 1 {
					t.Fatalf("round sent in %d messages (%d tried), want one", len(got), len(svc.deadlines))
				}
			})
		}
	}
}

// A round that does not fit in one message is split by its entries' exact
// sizes, whatever they are: every message within the budget, and full, but
// the last (the next entry would not have fit); every entry once, in order.
func TestSyncRoundThatDoesNotFitIsSplitInFullMessages(t *testing.T) {
	for _, size := range []struct {
		name  string
		bytes int
	}{
		{"1.5 limits", ttrpcMessageLimit * 3 / 2},
		{"2.5 limits", ttrpcMessageLimit * 5 / 2},
		{"within ttrpc's limit, not with its envelope", ttrpcMessageLimit - testEnvelope/2},
	} {
		for _, shape := range roundShapes {
			t.Run(size.name+"/"+shape, func(t *testing.T) {
				round := sizedRound(t, shape, size.bytes)
				svc := &syncService{answer: asTTRPC}
				p := syncPlugin(t, svc)
				if _, err := p.synchronize(context.Background(), nil, round.ctrs, nil); err != nil {
					t.Fatal(err)
				}
				got := svc.received()
				if len(got) < 2 {
					t.Fatalf("round sent in %d messages, want it split", len(got))
				}
				want := ids(&api.SynchronizeRequest{Containers: round.ctrs})
				if !slices.Equal(ids(got...), want) {
					t.Fatalf("plugin received %d entries, want every container once, in order (%d)", len(ids(got...)), len(want))
				}
				for i, req := range got {
					size := proto.Size(req)
					if size > syncMessageBudget {
						t.Errorf("message %d of %d bytes, budget %d", i, size, syncMessageBudget)
					}
					if req.More != (i < len(got)-1) {
						t.Errorf("message %d: more %v", i, req.More)
					}
					if i < len(got)-1 {
						next := proto.Size(&api.SynchronizeRequest{Containers: got[i+1].Containers[:1]})
						if size+next <= syncMessageBudget {
							t.Errorf("message %d of %d bytes (%d entries) would have taken the next entry (%d bytes)",
								i, size, len(ids(req)), next)
						}
					}
				}
			})
		}
	}
}

// A round that fits in one message goes in one, as upstream sends it, so
// that a plugin written before split synchronization works wherever it
// works with upstream: also when the round is close to the limit, and when
// its first entries make it look larger than it is.
func TestSyncRoundThatFitsIsOneMessage(t *testing.T) {
	for _, c := range []struct {
		name  string
		round *syncRound
	}{
		{"close to the limit", testRound(0, 1000, syncMessageBudget*9/10/1000)},
		{"looks larger than it is", func() *syncRound {
			s := testRound(0, 1000, syncMessageBudget*93/100/1000)
			for _, ctr := range s.ctrs[:16] { // the sample: a fifth larger than the rest
				ctr.Name += strings.Repeat("c", len(ctr.Name)/5)
			}
			return s
		}()},
	} {
		t.Run(c.name, func(t *testing.T) {
			if n := proto.Size(&api.SynchronizeRequest{Containers: c.round.ctrs}); n > syncMessageBudget {
				t.Fatalf("test round of %d bytes does not fit", n)
			}
			svc := &syncService{legacy: true}
			p := syncPlugin(t, svc)
			if _, err := p.synchronize(context.Background(), nil, c.round.ctrs, nil); err != nil {
				t.Fatal(err)
			}
			if got := svc.received(); len(got) != 1 || got[0].More {
				t.Fatalf("round sent in %d messages, want one", len(got))
			}
		})
	}
}

// Only ttrpc's own oversized-message error is retried: a plugin that answers
// RESOURCE_EXHAUSTED has answered.
func TestSyncRoundDoesNotRetryPluginErrors(t *testing.T) {
	svc := &syncService{answer: func(int, *api.SynchronizeRequest) error {
		return status.Error(codes.ResourceExhausted, "plugin is out of something")
	}}
	p := syncPlugin(t, svc)
	round := testRound(1, 1, 10)
	if _, err := p.synchronize(context.Background(), round.pods, round.ctrs, nil); err == nil {
		t.Fatal("synchronization succeeded")
	}
	if n := len(svc.deadlines); n != 1 {
		t.Fatalf("plugin asked %d times, want once", n)
	}
}

// Removal lists of a delta round count in the message budget: a round that
// removes a lot is split like one that adds a lot.
func TestSyncRoundSplitsRemovals(t *testing.T) {
	svc := &syncService{answer: func(_ int, req *api.SynchronizeRequest) error {
		return ttrpc.OversizedMessageError(proto.Size(req) + (ttrpcMessageLimit - syncMessageBudget))
	}}
	p := syncPlugin(t, svc)
	d := &ledger.Delta{}
	for i := range 150000 { // about 6 MiB of IDs
		d.RemovedCtrs = append(d.RemovedCtrs, fmt.Sprintf("%036d", i))
	}
	if _, err := p.synchronizeDelta(context.Background(), d, nil); err != nil {
		t.Fatal(err)
	}
	got := svc.received()
	if len(got) < 2 {
		t.Fatalf("sent %d messages, want the removals split", len(got))
	}
	var removed []string
	for _, req := range got {
		if size := proto.Size(req); size > syncMessageBudget {
			t.Errorf("message of %d bytes, budget %d", size, syncMessageBudget)
		}
		removed = append(removed, req.GetRemovedContainers()...)
	}
	if !slices.Equal(removed, d.RemovedCtrs) {
		t.Errorf("plugin got %d removals, want %d in order", len(removed), len(d.RemovedCtrs))
	}
}

func TestSplitSynchronization(t *testing.T) {
	// One deadline covers the whole ~10 MiB round: generous, so that a
	// loaded machine running the race detector never trips it.
	withTimeouts(t, DefaultPluginRegistrationTimeout, time.Minute)
	rt := newFakeRuntime()
	big := strings.Repeat("x", 2048)
	rt.pods = []*api.PodSandbox{{Id: "pod-0"}}
	for i := range 5000 {
		rt.containers = append(rt.containers, &api.Container{
			Id:           "ctr-" + strings.Repeat("0", 4) + string(rune('a'+i%26)),
			PodSandboxId: "pod-0",
			Annotations:  map[string]string{"big": big},
		})
	}
	if n, pods, ctrs := syncSplit(t, rt); n < 2 || pods != 1 || ctrs != 5000 {
		t.Fatalf("~10 MiB round sent in %d message(s) carrying %d pods, %d containers", n, pods, ctrs)
	}
}

// syncSplit connects a plugin to a runtime with rt's state and returns how
// many messages its synchronization took and what they carried; every
// message but the last must say more.
func syncSplit(t *testing.T, rt *fakeRuntime) (n, pods, ctrs int) {
	t.Helper()
	r, sock := startRuntime(t, rt)
	defer r.Stop()
	f := newFakePlugin("01", "sync", nil)
	f.connect(t, sock)
	defer f.close()
	receive(t, f.synced, "split synchronization")

	f.mu.Lock()
	defer f.mu.Unlock()
	for i, req := range f.syncs {
		pods += len(req.Pods)
		ctrs += len(req.Containers)
		if req.More != (i < len(f.syncs)-1) {
			t.Errorf("message %d has more=%v", i, req.More)
		}
	}
	return len(f.syncs), pods, ctrs
}

// A round whose first entries are small is sent in one message without
// sizing every entry; if it turns out too large after all (its later
// entries are big), ttrpc refuses it before anything is sent and the round is
// split by its entries' sizes.
func TestSyncRoundThatLooksSmallButIsNotIsSplit(t *testing.T) {
	withTimeouts(t, DefaultPluginRegistrationTimeout, time.Minute)
	rt := newFakeRuntime()
	big := strings.Repeat("x", 4096)
	rt.pods = []*api.PodSandbox{{Id: "pod-0"}}
	for i := range 2000 {
		c := &api.Container{Id: "ctr-" + strconv.Itoa(i), PodSandboxId: "pod-0"}
		if i >= 16 {
			c.Annotations = map[string]string{"big": big}
		}
		rt.containers = append(rt.containers, c)
	}
	if n, _, ctrs := syncSplit(t, rt); n < 2 || ctrs != 2000 {
		t.Fatalf("~8 MiB round sent in %d message(s) carrying %d containers", n, ctrs)
	}
}

// Over ttrpc, with its real envelope: a round that fits is one message,
// also when its first entries (what the estimate samples) are large, and
// when it is over the message budget but within ttrpc's limit.
func TestSyncRoundThatFitsIsOneMessageOverTTRPC(t *testing.T) {
	withTimeouts(t, DefaultPluginRegistrationTimeout, time.Minute)
	for _, c := range []struct {
		name  string
		shape string
		bytes int
	}{
		{"3.3 MB, large first", "large-first", ttrpcMessageLimit * 8 / 10},
		{"over the budget, within ttrpc's limit", "uniform", ttrpcMessageLimit - 2*testEnvelope},
	} {
		t.Run(c.name, func(t *testing.T) {
			rt := newFakeRuntime()
			rt.containers = sizedRound(t, c.shape, c.bytes).ctrs
			if n, _, ctrs := syncSplit(t, rt); n != 1 || ctrs != len(rt.containers) {
				t.Fatalf("round sent in %d messages carrying %d containers, want one with %d", n, ctrs, len(rt.containers))
			}
		})
	}
}
