package testruntime

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/nri-handover/nri/api"
	"github.com/nri-handover/nri/pkg/adaptation"
	"github.com/nri-handover/nri/pkg/stub"
)

// nextPod is a WorkloadResolver for stubs in this process, which share one
// cgroup: it places the next registering peer in the pod the test named
// last, as the runtime places a DaemonSet's pod.
type nextPod struct {
	mu  sync.Mutex
	pod *adaptation.PeerPod
}

func (n *nextPod) set(name string, tg int64) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.pod = &adaptation.PeerPod{Namespace: "kube-system", Name: name, UID: "uid-" + name, ContainerID: "c-" + name,
		TemplateGeneration: tg, HasTemplateGeneration: true,
		Labels: map[string]string{"app": "p", "pod-template-generation": strconv.FormatInt(tg, 10)}}
}

func (n *nextPod) Place(string, []*api.PodSandbox, []*api.Container) (adaptation.PeerPlace, *adaptation.PeerPod) {
	n.mu.Lock()
	defer n.mu.Unlock()
	pod := *n.pod
	return adaptation.PeerInPod, &pod
}

func (n *nextPod) Workload(pod *adaptation.PeerPod) string {
	return adaptation.KubernetesResolver{}.Workload(pod)
}

// rounds is a plugin that records its synchronization rounds and the
// containers it is asked to create.
type rounds struct {
	mu      sync.Mutex
	rounds  []stub.SyncInfo
	ctrs    [][]string
	created []string
}

func (p *rounds) record(ctx context.Context, ctrs []*api.Container) {
	info, _ := stub.SyncInfoFrom(ctx)
	var ids []string
	for _, c := range ctrs {
		ids = append(ids, c.GetId())
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.rounds = append(p.rounds, *info)
	p.ctrs = append(p.ctrs, ids)
}

func (p *rounds) CreateContainer(_ context.Context, _ *api.PodSandbox, c *api.Container) (*api.ContainerAdjustment, []*api.ContainerUpdate, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.created = append(p.created, c.GetId())
	return nil, nil, nil
}

func (p *rounds) last() (stub.SyncInfo, []string, int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := len(p.rounds)
	if n == 0 {
		return stub.SyncInfo{}, nil, 0
	}
	return p.rounds[n-1], p.ctrs[n-1], n
}

func (p *rounds) createdHere(id string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.created {
		if c == id {
			return true
		}
	}
	return false
}

// fullRounds takes one full Synchronize per connection (no delta rounds).
type fullRounds struct{ *rounds }

func (p fullRounds) Synchronize(ctx context.Context, _ []*api.PodSandbox, ctrs []*api.Container) ([]*api.ContainerUpdate, error) {
	p.record(ctx, ctrs)
	return nil, nil
}

// deltaRounds takes delta rounds (stub.SynchronizeRoundInterface).
type deltaRounds struct{ *rounds }

func (p deltaRounds) SynchronizeRound(ctx context.Context, _ *stub.SyncInfo, _ []*api.PodSandbox, ctrs []*api.Container) ([]*api.ContainerUpdate, error) {
	p.record(ctx, ctrs)
	return nil, nil
}

// Issue 39 finding 8 with the stub: a plugin in a pod superseded by a
// newer pod's instance hears STANDBY, stays connected and ready (Run keeps
// running), and when the newer pod's instance exits (its pod deleted
// mid-rollout) is synchronized again, hears ACTIVE and handles the next
// container, with delta rounds or without. It used to be told SUPERSEDED
// and disconnected: its Run held on, serving nothing.
func TestStubInPodServesAgainWhenSuccessorExits(t *testing.T) {
	for _, delta := range []bool{true, false} {
		name := "one full round per connection"
		if delta {
			name = "delta rounds"
		}
		t.Run(name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			where := &nextPod{}
			rt := started(t, WithAdaptationOptions(adaptation.WithWorkloadResolver(where)))
			// A removal relayed, as on any node by the time a plugin rolls
			// out: the ledger may be used.
			if err := rt.RunPod(ctx, NewPod("pod0")); err != nil {
				t.Fatal(err)
			}
			for _, id := range []string{"c0", "gone"} {
				if _, err := rt.CreateContainer(ctx, NewContainer("pod0", id)); err != nil {
					t.Fatal(err)
				}
			}
			if err := rt.RemoveContainer(ctx, "gone"); err != nil {
				t.Fatal(err)
			}

			run := func(pod string, gen int64) (stub.HandoverStub, *rounds, <-chan error) {
				rec := &rounds{}
				var p stub.Plugin = fullRounds{rec}
				if delta {
					p = deltaRounds{rec}
				}
				where.set(pod, gen)
				s, err := stub.NewHandoverStub(p, stub.WithPluginName("p"), stub.WithPluginIdx("50"),
					stub.WithSocketPath(rt.SocketPath()), stub.WithLogger(quietLogger{}), stub.WithHandover(),
					stub.WithInstanceID("uid-"+pod), stub.WithGeneration(uint64(gen)))
				if err != nil {
					t.Fatal(err)
				}
				done := make(chan error, 1)
				go func() { done <- s.Run(ctx) }()
				if err := rt.WaitSynchronized(ctx, s); err != nil {
					t.Fatal(err)
				}
				return s, rec, done
			}
			waitRole := func(s stub.HandoverStub, want api.PluginRole, what string) {
				t.Helper()
				for s.Role() != want {
					select {
					case <-ctx.Done():
						t.Fatalf("%s: role %v, want %v", what, s.Role(), want)
					case <-time.After(5 * time.Millisecond):
					}
				}
			}

			a, aRec, aDone := run("p-aaaaa", 1)
			b, _, bDone := run("p-bbbbb", 2)
			waitRole(b, api.PluginRole_PLUGIN_ROLE_ACTIVE, "the newer pod's instance")
			waitRole(a, api.PluginRole_PLUGIN_ROLE_STANDBY, "the older pod's instance, superseded")
			probe := httptest.NewRecorder()
			a.ReadyzHandler().ServeHTTP(probe, httptest.NewRequest(http.MethodGet, "/readyz", nil))
			if probe.Code != http.StatusOK {
				t.Errorf("the standby's /readyz answers %d %q: its pod would make the node unavailable", probe.Code, probe.Body)
			}
			_, _, before := aRec.last()

			if _, err := rt.CreateContainer(ctx, NewContainer("pod0", "c1")); err != nil {
				t.Fatal(err)
			}
			b.Stop() // its pod deleted: SIGTERM
			if err := <-bDone; err != nil {
				t.Fatalf("the newer instance's Run: %v", err)
			}
			waitRole(a, api.PluginRole_PLUGIN_ROLE_ACTIVE, "the older pod's instance, its successor gone")
			info, ctrs, n := aRec.last()
			if n != before+1 || info.Takeover == nil || !info.Takeover.GetReactivation() || info.Delta != delta {
				t.Fatalf("rounds %d -> %d, the last one's delta %v takeover %v: want one more, a reactivation, delta %v",
					before, n, info.Delta, info.Takeover, delta)
			}
			if !contains(ctrs, "c1") || !delta && !contains(ctrs, "c0") {
				t.Errorf("the reactivation round lists %q: want c1 (and c0 in a full round)", ctrs)
			}
			if _, err := rt.CreateContainer(ctx, NewContainer("pod0", "c2")); err != nil {
				t.Fatal(err)
			}
			if !aRec.createdHere("c2") {
				t.Error("the next container did not reach the instance serving again")
			}
			select {
			case err := <-aDone:
				t.Fatalf("the older instance's Run returned: %v", err)
			default:
			}
			a.Stop()
			if err := <-aDone; err != nil && !errors.Is(err, stub.ErrSuperseded) {
				t.Errorf("Run: %v", err)
			}
		})
	}
}

func contains(ids []string, id string) bool {
	for _, x := range ids {
		if x == id {
			return true
		}
	}
	return false
}
