package annotator

import (
	"context"
	"errors"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/nri-handover/nri/api"
	"github.com/nri-handover/nri/pkg/adaptation"
	"github.com/nri-handover/nri/pkg/stub"
	testruntime "github.com/nri-handover/nri/test/runtime"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// instance is one annotator pod, run in-process with the real stub.
type instance struct {
	p     *Plugin
	s     stub.HandoverStub
	term  context.CancelFunc // SIGTERM
	errC  chan error
	ready string
}

func startInstance(t *testing.T, rt *testruntime.Runtime, version, id string, generation uint64, statePath string) *instance {
	t.Helper()
	p := newPlugin(discard(), &stateFile{path: statePath})
	s, err := stub.NewHandoverStub(p, stub.WithPluginName("annotator"), stub.WithPluginIdx("50"), stub.WithSocketPath(rt.SocketPath()),
		stub.WithLogger(stub.NewSlogLogger(discard())), stub.WithHandover(),
		stub.WithPluginVersion(version), stub.WithInstanceID(id), stub.WithGeneration(generation))
	if err != nil {
		t.Fatal(err)
	}
	p.identify(s)
	stop, term := context.WithCancel(context.Background())
	in := &instance{p: p, s: s, term: term, errC: make(chan error, 1)}
	go func() { in.errC <- runUntil(stop, s, p) }()
	t.Cleanup(func() {
		term()
		<-in.errC
	})

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := s.WaitReady(ctx); err != nil {
		t.Fatalf("instance %s: %v", id, err)
	}
	return in
}

// snapshot returns the instance's inventory and how it last took the state
// file over.
func (in *instance) snapshot() (inventory, handoff) {
	in.p.mu.Lock()
	defer in.p.mu.Unlock()
	return maps.Clone(in.p.inv), in.p.taken
}

// stop sends SIGTERM and returns what Run returned.
func (in *instance) stop(t *testing.T) error {
	t.Helper()
	in.term()
	select {
	case err := <-in.errC:
		in.errC <- err // for the cleanup
		return err
	case <-time.After(10 * time.Second):
		t.Fatal("instance did not stop")
		return nil
	}
}

func createContainer(t *testing.T, rt *testruntime.Runtime, id string) string {
	t.Helper()
	ctx := context.Background()
	pod := "pod-" + id
	if err := rt.RunPod(ctx, testruntime.NewPod(pod)); err != nil {
		t.Fatal(err)
	}
	adj, err := rt.CreateContainer(ctx, testruntime.NewContainer(pod, id))
	if err != nil {
		t.Fatal(err)
	}
	return adj.GetAnnotations()[HandledBy]
}

// A rollout with surge, then a SIGTERM to the active instance and a fresh
// start, against the test runtime over real sockets: the successor skips what
// its predecessor stamped, the state file changes hands only in the
// runtime's order, and the exit codes are those documented in exit.go.
func TestRolloutWithTheRealStub(t *testing.T) {
	rt := startRuntime(t)
	statePath := filepath.Join(rt.Dir(), "state", "annotator.json")

	a := startInstance(t, rt, "v1", "pod-a", 1, statePath)
	readyzA := a.serveReadyz(t)
	if code := readyz(t, readyzA); code != http.StatusOK {
		t.Errorf("A's /readyz answers %d while A is active", code)
	}
	for _, id := range []string{"c1", "c2"} {
		if got := createContainer(t, rt, id); got != "v1/pod-a" {
			t.Fatalf("%s stamped %q, want v1/pod-a", id, got)
		}
	}

	// Surge: B starts next to A, synchronizes and is made active.
	b := startInstance(t, rt, "v2", "pod-b", 2, statePath)
	inv, taken := b.snapshot()
	if inv["c1"] != "v1/pod-a" || inv["c2"] != "v1/pod-a" {
		t.Errorf("B's inventory %v: A's containers should be known as A's", inv)
	}
	if taken.kind != handoffClean || taken.previous != "v1/pod-a" || taken.epoch != 2 {
		t.Errorf("B took the state file over %+v, want clean from v1/pod-a at epoch 2", taken)
	}
	// A is no longer the active instance, but its pod stays Ready (the
	// stub's /readyz) until it is stopped: the DaemonSet counts the node
	// available by its oldest pod.
	if code := readyz(t, readyzA); a.s.Ready() || code != http.StatusOK {
		t.Errorf("after B took over: A.Ready() %v, A's /readyz %d; want false, 200", a.s.Ready(), code)
	}
	if got := createContainer(t, rt, "c3"); got != "v2/pod-b" {
		t.Errorf("c3 stamped %q, want v2/pod-b", got)
	}
	st := readState(t, statePath)
	if st.Owner != "v2/pod-b" || st.Released || len(st.Containers) != 3 || st.Containers["c3"] != "v2/pod-b" {
		t.Errorf("state while B is active: %+v", st)
	}

	// The DaemonSet controller deletes A, which stood down: exit 0.
	if err := a.stop(t); !errors.Is(err, stub.ErrSuperseded) || exitCode(err) != exitOK {
		t.Errorf("superseded A: Run returned %v, exit %d, want ErrSuperseded, exit %d", err, exitCode(err), exitOK)
	}

	// SIGTERM to the active B (say, the DaemonSet is deleted): B releases the
	// file before its connection closes, and exits 0.
	if err := b.stop(t); exitCode(err) != exitOK {
		t.Errorf("terminated B: Run returned %v, exit %d, want %d", err, exitCode(err), exitOK)
	}
	if st := readState(t, statePath); st.Owner != "v2/pod-b" || !st.Released {
		t.Errorf("after B's SIGTERM: %+v, want released by v2/pod-b", st)
	}

	c := startInstance(t, rt, "v3", "pod-c", 3, statePath)
	_, taken = c.snapshot()
	if taken.kind != handoffClean || taken.previous != "v2/pod-b" || taken.epoch != 3 {
		t.Errorf("C took the state file over %+v, want clean from v2/pod-b at epoch 3", taken)
	}

	// An event handled by C means the runtime finished making it active
	// (C turns ready while the runtime still waits for its answer).
	if got := createContainer(t, rt, "c4"); got != "v3/pod-c" {
		t.Errorf("c4 stamped %q, want v3/pod-c", got)
	}
	// The runtime goes away under the active C: exit 2, restart expected.
	rt.Stop()
	select {
	case err := <-c.errC:
		c.errC <- err
		if code := exitCode(err); code != exitRuntimeGone {
			t.Errorf("C exited %d (%v) when the runtime stopped, want %d", code, err, exitRuntimeGone)
		}
		if !errors.Is(err, stub.ErrRuntimeShutdown) && !errors.Is(err, stub.ErrDisconnected) {
			t.Errorf("C's Run returned %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("C did not notice the runtime stop")
	}
}

// A standby (the runtime's standby grace) releases the state file, and is
// reactivated when its successor is lost: a full re-synchronization that
// finds the successor's stamps, then ACTIVE, which finds the file never
// released (the successor was killed).
func TestStandbyReactivatedAfterSuccessorLost(t *testing.T) {
	rt := startRuntime(t, adaptation.WithStandbyGrace(time.Minute))
	statePath := filepath.Join(rt.Dir(), "state.json")

	a := startInstance(t, rt, "v1", "pod-a", 1, statePath)
	createContainer(t, rt, "c1")
	b := startInstance(t, rt, "v2", "pod-b", 2, statePath)
	if a.s.Role() != api.PluginRole_PLUGIN_ROLE_STANDBY || a.s.Ready() {
		t.Fatalf("A: role %v, ready %v; want a standby, not ready", a.s.Role(), a.s.Ready())
	}
	if st := readState(t, statePath); st.Owner != "v2/pod-b" || st.Epoch != 2 {
		t.Fatalf("after B took over: %+v", st)
	}
	_, taken := b.snapshot()
	if taken.kind != handoffClean {
		t.Errorf("B's hand-off %v: A stood by and should have released", taken)
	}
	if got := createContainer(t, rt, "c2"); got != "v2/pod-b" {
		t.Fatalf("c2 stamped %q", got)
	}

	// kill -9 of B: its connection closes without a release.
	b.s.Stop()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := a.s.WaitReady(ctx); err != nil {
		t.Fatalf("A not reactivated: %v", err)
	}
	inv, taken := a.snapshot()
	if inv["c1"] != "v1/pod-a" || inv["c2"] != "v2/pod-b" {
		t.Errorf("A's inventory after its re-synchronization: %v", inv)
	}
	if taken.kind != handoffUnclean || taken.previous != "v2/pod-b" || taken.epoch != 3 {
		t.Errorf("A's hand-off %+v, want unclean from v2/pod-b at epoch 3", taken)
	}
	if got := createContainer(t, rt, "c3"); got != "v1/pod-a" {
		t.Errorf("c3 stamped %q after A's reactivation", got)
	}
}

func startRuntime(t *testing.T, opts ...adaptation.Option) *testruntime.Runtime {
	t.Helper()
	dir, err := os.MkdirTemp("", "annotator") // short: a socket path has a length limit
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	rt, err := testruntime.New(testruntime.WithDir(dir), testruntime.WithName("test-runtime", "v1"),
		testruntime.WithAdaptationOptions(append([]adaptation.Option{adaptation.WithLogger(quietLogger{})}, opts...)...))
	if err != nil {
		t.Fatal(err)
	}
	if err := rt.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(rt.Stop)
	return rt
}

// serveReadyz serves the instance's /readyz as -readyz-addr does.
func (in *instance) serveReadyz(t *testing.T) string {
	t.Helper()
	addr, stop, err := serveReadyz(discard(), "127.0.0.1:0", in.s.ReadyzHandler())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	return addr
}

// readyz probes like the kubelet: one GET, no kept connection.
func readyz(t *testing.T, addr string) int {
	t.Helper()
	client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	resp, err := client.Get("http://" + addr + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

type quietLogger struct{}

func (quietLogger) Debugf(context.Context, string, ...any) {}
func (quietLogger) Infof(context.Context, string, ...any)  {}
func (quietLogger) Warnf(context.Context, string, ...any)  {}
func (quietLogger) Errorf(context.Context, string, ...any) {}
