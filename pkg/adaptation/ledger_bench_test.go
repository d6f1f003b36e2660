package adaptation

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/nri-handover/nri/api"
	"github.com/nri-handover/nri/internal/adjust"
	"github.com/nri-handover/nri/pkg/adaptation/internal/ledger"
)

// gateWaits records how long runtime operations waited for each handover.
type gateWaits struct {
	noopMetrics
	mu    sync.Mutex
	waits []time.Duration
}

func (m *gateWaits) RecordHandover(_, outcome string, _, wait time.Duration) {
	if outcome == "completed" {
		m.mu.Lock()
		m.waits = append(m.waits, wait)
		m.mu.Unlock()
	}
}

// nodeOf is a fake runtime holding n running containers in pods of ten.
func nodeOf(n int) *fakeRuntime {
	rt := newFakeRuntime()
	for i := range n / 10 {
		rt.pods = append(rt.pods, &api.PodSandbox{Id: "p" + strconv.Itoa(i), Name: "pod", Namespace: "default"})
	}
	for i := range n {
		rt.containers = append(rt.containers, &api.Container{Id: "c" + strconv.Itoa(i),
			PodSandboxId: "p" + strconv.Itoa(i%(n/10)), Name: "ctr", State: api.ContainerState_CONTAINER_RUNNING,
			Annotations: map[string]string{"io.kubernetes.pod.name": "pod"}, Env: []string{"A=1", "B=2"}})
	}
	return rt
}

// BenchmarkTakeoverCommit measures how long runtime operations wait while a
// takeover commits (the sync gate held), on nodes of 1 000 to 50 000
// containers, with a few containers created while the successor synchronizes
// (issue 7, target 1: the wait must not grow with the node). One iteration
// is one takeover by a new instance over real sockets; the figures are the
// median and the maximum of the gate's hold per takeover.
func BenchmarkTakeoverCommit(b *testing.B) {
	for _, n := range []int{1000, 10000, 50000} {
		b.Run(fmt.Sprintf("ctrs=%d", n), func(b *testing.B) {
			rt := nodeOf(n)
			m := &gateWaits{}
			r, sock := startRuntime(b, rt, WithMetrics(m))
			defer r.Stop()

			newInstance := func(gen int) *fakePlugin {
				f := newFakePlugin("10", "p", nil)
				f.regReq = func(q *api.RegisterPluginRequest) {
					q.InstanceId, q.Generation = "i"+strconv.Itoa(gen), uint64(gen)
					q.Features = []string{api.FeatureHandover, api.FeatureDeltaSync}
				}
				return f
			}
			prev := newInstance(0)
			prev.connect(b, sock)
			waitActive(b, r, "10-p")
			m.mu.Lock()
			m.waits = nil // the first instance joined fresh: synchronized under the gate
			m.mu.Unlock()
			pod := rt.pods[0]
			created := 0
			b.ResetTimer()
			for i := range b.N {
				f := newInstance(i + 1)
				f.onSync = func(req *api.SynchronizeRequest) {
					if req.GetDelta() || req.GetMore() {
						return
					}
					for range 3 { // a few containers created during phase 1
						created++
						c := &api.Container{Id: "new" + strconv.Itoa(created), PodSandboxId: pod.Id}
						rsp, err := r.CreateContainer(context.Background(), &CreateContainerRequest{Pod: pod, Container: proto.Clone(c).(*api.Container)})
						if err != nil {
							b.Error(err)
						}
						// The runtime lists it as created, so that the
						// ledger compares equal with SyncFn and the
						// takeovers stay from the ledger.
						_ = adjust.Apply(c, rsp.GetAdjust())
						c.State = api.ContainerState_CONTAINER_CREATED
						rt.mu.Lock()
						rt.containers = append(rt.containers, c)
						rt.mu.Unlock()
					}
				}
				f.connect(b, sock)
				want := "i" + strconv.Itoa(i+1)
				eventually(b, func() bool {
					active := r.reg.active()
					return len(active) == 1 && active[0].instance == want
				}, "successor active")
				prev.close()
				prev = f
			}
			b.StopTimer()
			prev.close()
			m.mu.Lock()
			waits := slices.Clone(m.waits)
			m.mu.Unlock()
			if len(waits) == 0 {
				return
			}
			slices.Sort(waits)
			b.ReportMetric(float64(waits[len(waits)/2].Microseconds()), "gate-p50-µs")
			b.ReportMetric(float64(waits[len(waits)-1].Microseconds()), "gate-max-µs")
		})
	}
}

// BenchmarkLedgerCheck measures a comparison of the ledger with SyncFn taken
// when the sync gate is free (checkLedger, before a takeover from the
// ledger): one iteration is how long runtime operations that arrive meanwhile
// wait for the gate, on nodes of 1 000 to 50 000 containers.
func BenchmarkLedgerCheck(b *testing.B) {
	for _, n := range []int{1000, 10000, 50000} {
		b.Run(fmt.Sprintf("ctrs=%d", n), func(b *testing.B) {
			rt := nodeOf(n)
			m := &ledgerComparisons{}
			r, _ := startRuntime(b, rt, WithMetrics(m))
			defer r.Stop()
			b.ResetTimer()
			for range b.N {
				r.checkLedger(context.Background())
			}
			b.StopTimer()
			if counts := m.all(); len(counts) != b.N || slices.ContainsFunc(counts, func(n int) bool { return n != 0 }) {
				b.Fatalf("comparisons %v", counts)
			}
		})
	}
}

// BenchmarkLedgerSeed measures a comparison of the ledger with SyncFn (a
// join under the gate seeds it again) on nodes of 1 000 to 50 000
// containers in pods of ten, shaped like the benchmark runtime's: once with
// the same objects as the ledger's seed, once with fresh equal copies (a
// runtime such as containerd builds its NRI objects on every call), and
// once where every container changed state. One iteration is one seed.
func BenchmarkLedgerSeed(b *testing.B) {
	node := func(n int, state api.ContainerState) ([]*api.PodSandbox, []*api.Container) {
		var pods []*api.PodSandbox
		var ctrs []*api.Container
		for i := range n {
			pod := "pod-" + strconv.Itoa(i/10)
			if i%10 == 0 {
				pods = append(pods, &api.PodSandbox{Id: pod, Name: pod, Uid: "uid-" + pod, Namespace: "bench",
					Labels:      map[string]string{"app": "bench", "pod": pod},
					Annotations: map[string]string{"kubernetes.io/config.source": "api"}})
			}
			id := "ctr-" + strconv.Itoa(i)
			ctrs = append(ctrs, &api.Container{Id: id, PodSandboxId: pod, Name: id, State: state,
				Labels:      map[string]string{"io.kubernetes.container.name": id, "app": "bench"},
				Annotations: map[string]string{"io.kubernetes.container.hash": "0123abcd", "bench": "yes"},
				Args:        []string{"/bin/app", "--serve", "--port=8080"},
				Env:         []string{"PATH=/usr/bin:/bin", "HOME=/root", "POD=" + pod},
				Mounts: []*api.Mount{{Destination: "/etc/hosts", Type: "bind", Source: "/var/lib/pods/" + pod + "/hosts",
					Options: []string{"rbind", "ro"}}}})
		}
		return pods, ctrs
	}
	for _, n := range []int{1000, 10000, 50000} {
		pods, ctrs := node(n, api.ContainerState_CONTAINER_RUNNING)
		freshPods, freshCtrs := node(n, api.ContainerState_CONTAINER_RUNNING)
		stoppedPods, stoppedCtrs := node(n, api.ContainerState_CONTAINER_STOPPED)
		for _, c := range []struct {
			name string
			pods []*api.PodSandbox
			ctrs []*api.Container
		}{
			{"same", pods, ctrs},
			{"fresh-copies", freshPods, freshCtrs},
			{"all-changed", stoppedPods, stoppedCtrs},
		} {
			b.Run(fmt.Sprintf("ctrs=%d/%s", n, c.name), func(b *testing.B) {
				l := &ledger.Ledger{Kept: true}
				l.Seed(l.Version(), pods, ctrs)
				b.ReportAllocs()
				for b.Loop() {
					b.StopTimer()
					if c.name == "all-changed" { // every object differs from the ledger again
						l.Seed(l.Version(), pods, ctrs)
					}
					b.StartTimer()
					l.Seed(l.Version(), c.pods, c.ctrs)
				}
			})
		}
	}
}

// BenchmarkLedgerEvents is what the ledger adds to the event path of the
// benchmark runtime's operation (test/bench): the container as sent kept
// before merging edits it, the created container noted with one plugin's
// merged adjustment, then its start noted with the container the runtime
// passes (the one merging edited); its removal is noted outside the timer.
// One iteration is one operation; "off" merges the same reply without a
// ledger.
func BenchmarkLedgerEvents(b *testing.B) {
	pod := microPod("pod")
	rpl := microResponse(0, false)
	for _, kept := range []bool{false, true} {
		name := "off"
		if kept {
			name = "kept"
		}
		b.Run(name, func(b *testing.B) {
			l := &ledger.Ledger{Kept: kept}
			l.Seed(l.Version(), []*api.PodSandbox{pod}, nil)
			i := 0
			b.ReportAllocs()
			for b.Loop() {
				b.StopTimer()
				i++
				req := &api.CreateContainerRequest{Pod: pod, Container: microContainer(pod.Id, "ctr-"+strconv.Itoa(i))}
				b.StartTimer()
				var sent *api.Container
				if l.Recording() {
					sent = ledger.CloneContainer(req.GetContainer())
				}
				res := collectCreateContainerResult(req)
				if err := res.apply(rpl, "00-plugin0"); err != nil {
					b.Fatal(err)
				}
				rsp := res.createContainerResponse()
				l.Note(api.Event_CREATE_CONTAINER, &api.CreateContainerRequest{Pod: pod, Container: sent}, rsp, sent == nil)
				l.Note(api.Event_START_CONTAINER, &api.StartContainerRequest{Pod: pod, Container: req.Container}, nil, false)
				b.StopTimer() // the ledger stays within its bound
				l.Note(api.Event_REMOVE_CONTAINER, &api.RemoveContainerRequest{Pod: pod, Container: req.Container}, nil, false)
				b.StartTimer()
			}
		})
	}
}
