package testruntime

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/nri-handover/nri/api"
	"github.com/nri-handover/nri/pkg/adaptation"
	"github.com/nri-handover/nri/pkg/stub"
)

// reconciler sets every container's CPU shares in its synchronization, as
// a plugin that reconciles what it finds does.
type reconciler struct{ shares uint64 }

func (p reconciler) Synchronize(_ context.Context, _ []*api.PodSandbox, ctrs []*api.Container) ([]*api.ContainerUpdate, error) {
	var updates []*api.ContainerUpdate
	for _, c := range ctrs {
		updates = append(updates, &api.ContainerUpdate{ContainerId: c.GetId(), Linux: &api.LinuxContainerUpdate{
			Resources: &api.LinuxResources{Cpu: &api.LinuxCPU{Shares: &api.OptionalUInt64{Value: p.shares}}}}})
	}
	return updates, nil
}

func (reconciler) CreateContainer(context.Context, *api.PodSandbox, *api.Container) (*api.ContainerAdjustment, []*api.ContainerUpdate, error) {
	return nil, nil, nil
}

func (r *Runtime) cpuShares(id string) uint64 {
	return r.Container(id).GetLinux().GetResources().GetCpu().GetShares().GetValue()
}

// WaitSynchronized returns only once the updates a plugin's synchronization
// asked for are applied, for a plugin that joins and for one that takes
// over (both with handover, whose readiness comes before the updates), and
// for one without handover. Run it with -count: a wait that is only mostly
// right fails some runs.
func TestWaitSynchronized(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	rt := started(t)
	if err := rt.RunPod(ctx, NewPod("pod0")); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"c0", "c1"} {
		if _, err := rt.CreateContainer(ctx, NewContainer("pod0", id)); err != nil {
			t.Fatal(err)
		}
	}

	run := func(name string, shares uint64, opts ...stub.Option) (stub.HandoverStub, <-chan error) {
		s, err := stub.NewHandoverStub(reconciler{shares}, append([]stub.Option{stub.WithPluginName(name), stub.WithPluginIdx("50"),
			stub.WithSocketPath(rt.SocketPath()), stub.WithLogger(quietLogger{})}, opts...)...)
		if err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- s.Run(ctx) }()
		if err := rt.WaitSynchronized(ctx, s); err != nil {
			t.Fatal(err)
		}
		return s, done
	}
	check := func(who string, want uint64) {
		t.Helper()
		for _, id := range []string{"c0", "c1"} {
			if got := rt.cpuShares(id); got != want {
				t.Errorf("after %s synchronized: %s has %d CPU shares, want %d", who, id, got, want)
			}
		}
	}

	v1, v1Done := run("reconciler", 512, stub.WithHandover(), stub.WithInstanceID("pod-a"), stub.WithGeneration(1))
	check("v1", 512)
	v2, v2Done := run("reconciler", 1024, stub.WithHandover(), stub.WithInstanceID("pod-b"), stub.WithGeneration(2))
	check("v2, taking over", 1024)
	up, upDone := run("upstream", 256)
	check("a plugin without handover", 256)

	for _, p := range []struct {
		s    stub.Stub
		done <-chan error
	}{{v1, v1Done}, {v2, v2Done}, {up, upDone}} {
		p.s.Stop()
		if err := <-p.done; err != nil && !errors.Is(err, stub.ErrSuperseded) {
			t.Errorf("Run: %v", err)
		}
	}
}

// quietLogger keeps the stubs' logs out of the test's output.
type quietLogger struct{}

func (quietLogger) Debugf(context.Context, string, ...any) {}
func (quietLogger) Infof(context.Context, string, ...any)  {}
func (quietLogger) Warnf(context.Context, string, ...any)  {}
func (quietLogger) Errorf(context.Context, string, ...any) {}

// started is a runtime started for a test, stopped when it ends.
func started(t *testing.T, opts ...Option) *Runtime {
	t.Helper()
	rt, err := New(opts...)
	if err != nil {
		t.Fatal(err)
	}
	if err := rt.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(rt.Stop)
	return rt
}

// handovers is a test's own Metrics, which also wants handover outcomes.
type handovers struct {
	mu       sync.Mutex
	outcomes []string
	joined   int
}

func (h *handovers) RecordPluginInvocation(string, string, error)      {}
func (h *handovers) RecordPluginLatency(string, string, time.Duration) {}
func (h *handovers) RecordPluginAdjustments(string, string, *adaptation.ContainerAdjustment, int, int) {
}
func (h *handovers) UpdatePluginCount(int) {}
func (h *handovers) RecordHandover(_, outcome string, _, _ time.Duration) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.outcomes = append(h.outcomes, outcome)
}
func (h *handovers) RecordSynchronized(string, string, int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.joined++
}

// A test's own Metrics given with WithMetrics gets every measurement, the
// optional interfaces' too, and WaitSynchronized still works.
func TestWithMetricsKeepsWaitSynchronized(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	m := &handovers{}
	rt := started(t, WithMetrics(m))
	s, err := stub.NewHandoverStub(reconciler{512}, stub.WithPluginName("reconciler"), stub.WithPluginIdx("50"),
		stub.WithSocketPath(rt.SocketPath()), stub.WithLogger(quietLogger{}), stub.WithHandover(), stub.WithInstanceID("pod-a"))
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx) }()
	if err := rt.WaitSynchronized(ctx, s); err != nil {
		t.Fatal(err)
	}
	s.Stop()
	<-done
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.joined != 1 || len(m.outcomes) != 1 || m.outcomes[0] != "completed" {
		t.Errorf("the test's Metrics saw %d joins and handovers %q, want 1 and [completed]", m.joined, m.outcomes)
	}
}
