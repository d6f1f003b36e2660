package adaptation

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nri-handover/nri/api"
	"github.com/nri-handover/nri/pkg/adaptation/builtin"
	"go.uber.org/goleak"
)

func TestNewRequiresCallbacks(t *testing.T) {
	rt := newFakeRuntime()
	if _, err := New("rt", "v1", nil, rt.update); err == nil {
		t.Fatal("expected error for nil SyncFn")
	}
	if _, err := New("rt", "v1", rt.sync, nil); err == nil {
		t.Fatal("expected error for nil UpdateFn")
	}
}

func TestRegistrationConfigureAndEventOrder(t *testing.T) {
	rt := newFakeRuntime()
	r, sock := startRuntime(t, rt)
	defer r.Stop()

	rec := newRecorder()
	var plugins []*fakePlugin
	for _, id := range [][2]string{{"10", "b"}, {"05", "z"}, {"10", "a"}} {
		f := newFakePlugin(id[0], id[1], rec)
		f.connect(t, sock)
		defer f.close()
		receive(t, f.synced, "synchronize of "+f.id())
		plugins = append(plugins, f)
	}
	waitActive(t, r, "10-b", "05-z", "10-a")

	f := plugins[0]
	f.mu.Lock()
	cfg, reg := f.cfgReq, f.regRpl
	f.mu.Unlock()
	if cfg.GetRuntimeName() != "test-runtime" || cfg.GetRuntimeVersion() != "v0.0.1" {
		t.Errorf("configure carried runtime %q %q", cfg.GetRuntimeName(), cfg.GetRuntimeVersion())
	}
	if cfg.GetRequestTimeout() != DefaultPluginRequestTimeout.Milliseconds() ||
		cfg.GetRegistrationTimeout() != DefaultPluginRegistrationTimeout.Milliseconds() {
		t.Errorf("configure carried timeouts %d/%d", cfg.GetRegistrationTimeout(), cfg.GetRequestTimeout())
	}
	if reg.GetNRIVersion() == "" || cfg.GetNRIVersion() == "" {
		t.Errorf("NRI version not set in RegisterPluginResponse/ConfigureRequest")
	}

	for _, p := range r.reg.active() {
		if p.name() == "10-b" && (p.version != "v1" || p.instance != "instance-10-b" || p.generation != 1) {
			t.Errorf("registration identity not recorded: %q %q %d", p.version, p.instance, p.generation)
		}
	}

	if err := r.RunPodSandbox(context.Background(), &RunPodSandboxRequest{Pod: &PodSandbox{Id: "pod"}}); err != nil {
		t.Fatalf("RunPodSandbox: %v", err)
	}
	want := []string{"05-z:RunPodSandbox", "10-a:RunPodSandbox", "10-b:RunPodSandbox"}
	if got := rec.list(); !slices.Equal(got, want) {
		t.Fatalf("event order %v, want %v", got, want)
	}
}

func TestHungRegistrationDoesNotDelayOthers(t *testing.T) {
	withTimeouts(t, time.Hour, DefaultPluginRequestTimeout)
	rt := newFakeRuntime()
	r, sock := startRuntime(t, rt)
	defer r.Stop()

	// Connects and never registers.
	hung, err := net.Dial("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer hung.Close()

	f := newFakePlugin("01", "quick", nil)
	f.connect(t, sock)
	defer f.close()
	receive(t, f.synced, "synchronize of the plugin registering after the hung one")
	waitActive(t, r, "01-quick")
}

func TestInvalidRegistrationIsRejected(t *testing.T) {
	rt := newFakeRuntime()
	r, sock := startRuntime(t, rt)
	defer r.Stop()

	for _, c := range []struct{ idx, name, want string }{
		{"1", "bad-index", `"1"`},
		{"01", "bad/name", `"bad/name"`},
	} {
		f := newFakePlugin(c.idx, c.name, nil)
		// Opted in, to be told why (a plugin that did not opt in is only
		// refused, see TestShutdownNoticeByCause).
		f.regReq = func(q *api.RegisterPluginRequest) { q.Features = []string{api.FeatureHandover} }
		f.dial(t, sock)
		err := f.register(context.Background())
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("registration of %s-%s: error %v, want one naming %s", c.idx, c.name, err, c.want)
		}
		req := receive(t, f.shutdowns, "shutdown after rejected registration")
		if req.GetReason() != api.ShutdownReason_SHUTDOWN_REASON_REGISTRATION_REJECTED {
			t.Errorf("shutdown reason %v, want REGISTRATION_REJECTED", req.GetReason())
		}
		f.close() // as a plugin whose registration failed does
	}
}

// A connection that does not register in time is closed. It never said it
// opts into handover, so it is not told why (TestShutdownNoticeByCause).
func TestRegistrationTimeoutDisconnects(t *testing.T) {
	withTimeouts(t, 50*time.Millisecond, DefaultPluginRequestTimeout)
	rt := newFakeRuntime()
	r, sock := startRuntime(t, rt)
	defer r.Stop()

	f := newFakePlugin("01", "slow", nil)
	f.dial(t, sock)
	defer f.close()
	receive(t, f.lost, "connection closed after registration timeout")
}

func TestFailurePolicy(t *testing.T) {
	for _, c := range []struct {
		name       string
		policy     *api.FailurePolicy
		wantErr    bool
		wantActive bool
	}{
		{"default: drop plugin, request proceeds", nil, false, false},
		{"fail_request", &api.FailurePolicy{FailRequest: true}, true, false},
		{"keep_connected", &api.FailurePolicy{KeepConnected: true}, false, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			withTimeouts(t, DefaultPluginRegistrationTimeout, 100*time.Millisecond)
			rt := newFakeRuntime()
			r, sock := startRuntime(t, rt)
			defer r.Stop()

			f := newFakePlugin("01", "slow", nil)
			f.policy = c.policy
			f.handle = hangOn(t, api.Event_RUN_POD_SANDBOX)
			f.connect(t, sock)
			defer f.close()
			waitActive(t, r, "01-slow")

			err := r.RunPodSandbox(context.Background(), &RunPodSandboxRequest{Pod: &PodSandbox{Id: "p"}})
			if (err != nil) != c.wantErr {
				t.Fatalf("RunPodSandbox error %v, want error: %v", err, c.wantErr)
			}
			if err != nil && !strings.Contains(err.Error(), "01-slow") {
				t.Errorf("error %q does not name the plugin", err)
			}
			if c.wantActive {
				if len(r.reg.active()) != 1 {
					t.Fatal("plugin with keep_connected was dropped after a timeout")
				}
				return
			}
			receive(t, f.lost, "disconnect of the timed-out plugin")
			eventually(t, func() bool { return len(r.reg.active()) == 0 }, "plugin removed")
		})
	}
}

func TestCreateContainerMergesAndConflicts(t *testing.T) {
	rt := newFakeRuntime()
	r, sock := startRuntime(t, rt)
	defer r.Stop()

	adjust := func(key string) func(context.Context, api.Event, any) (any, error) {
		return func(_ context.Context, e api.Event, _ any) (any, error) {
			if e != api.Event_CREATE_CONTAINER {
				return nil, nil
			}
			return &api.CreateContainerResponse{
				Adjust: &api.ContainerAdjustment{Annotations: map[string]string{key: "set"}},
			}, nil
		}
	}
	a := newFakePlugin("01", "a", nil)
	a.handle = adjust("a-key")
	b := newFakePlugin("02", "b", nil)
	b.handle = adjust("b-key")
	a.connect(t, sock)
	defer a.close()
	b.connect(t, sock)
	defer b.close()
	waitActive(t, r, "01-a", "02-b")

	req := func() *CreateContainerRequest {
		return &CreateContainerRequest{Pod: &PodSandbox{Id: "p"}, Container: &Container{Id: "c", PodSandboxId: "p"}}
	}
	rpl, err := r.CreateContainer(context.Background(), req())
	if err != nil {
		t.Fatalf("CreateContainer: %v", err)
	}
	ann := rpl.GetAdjust().GetAnnotations()
	if ann["a-key"] != "set" || ann["b-key"] != "set" {
		t.Fatalf("merged annotations %v", ann)
	}

	b.handle = adjust("a-key")
	_, err = r.CreateContainer(context.Background(), req())
	if err == nil || !strings.Contains(err.Error(), "01-a") || !strings.Contains(err.Error(), "02-b") {
		t.Fatalf("conflict error %v does not name both plugins", err)
	}
}

func TestUnsolicitedUpdatesReachRuntime(t *testing.T) {
	rt := newFakeRuntime()
	r, sock := startRuntime(t, rt)
	defer r.Stop()

	f := newFakePlugin("01", "updater", nil)
	f.connect(t, sock)
	defer f.close()
	waitActive(t, r, "01-updater")

	_, err := f.runtime.UpdateContainers(context.Background(), &api.UpdateContainersRequest{
		Update: []*api.ContainerUpdate{{ContainerId: "c1"}},
	})
	if err != nil {
		t.Fatalf("UpdateContainers: %v", err)
	}
	u := receive(t, rt.updates, "updates at the runtime")
	if len(u) != 1 || u[0].GetContainerId() != "c1" {
		t.Fatalf("runtime got updates %v", u)
	}
}

func TestStopSendsRuntimeShutdown(t *testing.T) {
	rt := newFakeRuntime()
	r, sock := startRuntime(t, rt)

	f := newFakePlugin("01", "p", nil)
	f.regReq = func(q *api.RegisterPluginRequest) { q.Features = []string{api.FeatureHandover} } // to be told
	f.connect(t, sock)
	defer f.close()
	waitActive(t, r, "01-p")

	r.Stop()
	req := receive(t, f.shutdowns, "shutdown at runtime stop")
	if req.GetReason() != api.ShutdownReason_SHUTDOWN_REASON_RUNTIME_SHUTDOWN {
		t.Fatalf("shutdown reason %v", req.GetReason())
	}
	receive(t, f.lost, "connection closed by the runtime")
}

func TestBuiltinValidatorRejects(t *testing.T) {
	rt := newFakeRuntime()
	var seen *api.ValidateContainerAdjustmentRequest
	validator := &builtin.BuiltinPlugin{
		Index: "99", Base: "validator",
		Handlers: builtin.BuiltinHandlers{
			ValidateContainerAdjustment: func(_ context.Context, req *api.ValidateContainerAdjustmentRequest) error {
				seen = req
				if req.GetAdjust().GetAnnotations()["forbidden"] != "" {
					return errors.New("forbidden annotation")
				}
				return nil
			},
		},
	}
	mutator := &builtin.BuiltinPlugin{
		Index: "10", Base: "mutator",
		Handlers: builtin.BuiltinHandlers{
			CreateContainer: func(_ context.Context, req *api.CreateContainerRequest) (*api.CreateContainerResponse, error) {
				return &api.CreateContainerResponse{
					Adjust: &api.ContainerAdjustment{Annotations: map[string]string{req.Container.Name: "x"}},
				}, nil
			},
		},
	}
	r, _ := startRuntime(t, rt, WithBuiltinPlugins(validator, mutator), WithDisabledExternalConnections())
	defer r.Stop()

	create := func(name string) error {
		_, err := r.CreateContainer(context.Background(), &CreateContainerRequest{
			Pod:       &PodSandbox{Id: "p"},
			Container: &Container{Id: name, Name: name, PodSandboxId: "p"},
		})
		return err
	}
	if err := create("allowed"); err != nil {
		t.Fatalf("CreateContainer: %v", err)
	}
	if len(seen.GetPlugins()) != 2 {
		t.Errorf("validator saw plugins %v", seen.GetPlugins())
	}
	err := create("forbidden")
	if err == nil || !strings.Contains(err.Error(), "forbidden annotation") || !strings.Contains(err.Error(), "99-validator") {
		t.Fatalf("rejection error %v", err)
	}
}

func TestPreinstalledPluginLifecycle(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	plugins := filepath.Join(dir, "plugins")
	if err := os.Mkdir(plugins, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(exe, filepath.Join(plugins, "20-launched")); err != nil {
		t.Fatal(err)
	}

	rt := newFakeRuntime()
	r, err := New("test-runtime", "v0.0.1", rt.sync, rt.update,
		WithPluginPath(plugins), WithPluginConfigPath(dir), WithDisabledExternalConnections())
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Start(); err != nil {
		t.Fatalf("Start: %v", err)
	}
	active := r.reg.active()
	if len(active) != 1 || active[0].name() != "20-launched" || active[0].kind != kindLaunched {
		r.Stop()
		t.Fatalf("pre-installed plugin not active after Start: %v", active)
	}
	if err := r.RunPodSandbox(context.Background(), &RunPodSandboxRequest{Pod: &PodSandbox{Id: "p"}}); err != nil {
		t.Errorf("RunPodSandbox: %v", err)
	}
	p := active[0]
	r.Stop()
	select {
	case <-p.exited:
	default:
		t.Fatal("plugin process still running after Stop")
	}
}

func TestStaleSocketReplaced(t *testing.T) {
	sock := shortSocket(t)
	if err := os.MkdirAll(filepath.Dir(sock), 0o700); err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	l.(*net.UnixListener).SetUnlinkOnClose(false)
	l.Close()

	rt := newFakeRuntime()
	r, err := New("rt", "v1", rt.sync, rt.update, WithSocketPath(sock), WithPluginPath(t.TempDir()))
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Start(); err != nil {
		t.Fatalf("Start with a stale socket: %v", err)
	}
	r.Stop()
}

func TestFailedSynchronizationDisconnects(t *testing.T) {
	rt := newFakeRuntime()
	r, sock := startRuntime(t, rt)
	defer r.Stop()

	f := newFakePlugin("01", "unsyncable", nil)
	f.regReq = func(q *api.RegisterPluginRequest) { q.Features = []string{api.FeatureHandover} } // to be told
	f.syncErr = errors.New("cannot sync")
	f.connectRefused(t, sock)
	defer f.close()

	req := receive(t, f.shutdowns, "shutdown after failed synchronization")
	if req.GetReason() != api.ShutdownReason_SHUTDOWN_REASON_SYNCHRONIZATION_FAILED ||
		!strings.Contains(req.GetMessage(), "cannot sync") {
		t.Fatalf("shutdown %v", req)
	}
	receive(t, f.lost, "connection closed by the runtime")
	if len(r.reg.active()) != 0 {
		t.Fatal("plugin active after failed synchronization")
	}
}

// TestStopLeavesLegacyExternalConnected: Stop leaves an external plugin that
// did not opt into handover in the state upstream v0.12.5's Stop leaves it
// (stopPlugins returns early for external plugins): its connection open and
// served, no Shutdown, and no more events. An opted-in plugin beside it is
// told RUNTIME_SHUTDOWN and closed. Once the legacy plugin hangs up, nothing
// of its connection is left running.
func TestStopLeavesLegacyExternalConnected(t *testing.T) {
	before := goleak.IgnoreCurrent()
	rt := newFakeRuntime()
	r, sock := startRuntime(t, rt)
	stopped := false
	t.Cleanup(func() {
		if !stopped {
			r.Stop()
		}
	})

	rec := newRecorder()
	legacy := newFakePlugin("10", "legacy", rec)
	legacy.connect(t, sock)
	t.Cleanup(legacy.close)
	opted := newFakePlugin("20", "opted", nil)
	opted.regReq = func(q *api.RegisterPluginRequest) { q.Features = []string{api.FeatureHandover} }
	opted.connect(t, sock)
	t.Cleanup(opted.close)
	waitActive(t, r, "10-legacy", "20-opted")

	r.Stop()
	stopped = true

	receive(t, opted.lost, "the runtime closing the opted-in plugin's connection")
	select {
	case req := <-opted.shutdowns:
		if req.GetReason() != api.ShutdownReason_SHUTDOWN_REASON_RUNTIME_SHUTDOWN {
			t.Fatalf("opted-in plugin told %v (%q), want RUNTIME_SHUTDOWN", req.GetReason(), req.GetMessage())
		}
	default:
		t.Fatal("opted-in plugin closed without Shutdown(RUNTIME_SHUTDOWN)")
	}

	// The legacy plugin's connection is open and its runtime service
	// answers: a round trip on it after Stop returned.
	if _, err := legacy.runtime.UpdateContainers(context.Background(), &api.UpdateContainersRequest{}); err != nil {
		t.Fatalf("legacy plugin's connection after Stop: %v", err)
	}
	select {
	case <-legacy.lost:
		t.Fatal("Stop closed the connection of an external plugin that did not opt in; upstream leaves it open")
	default:
	}
	select {
	case req := <-legacy.shutdowns:
		t.Fatalf("legacy plugin sent Shutdown(%v, %q); upstream sends none", req.GetReason(), req.GetMessage())
	default:
	}
	// No more events reach it, as upstream forgets every plugin on Stop.
	_ = r.RunPodSandbox(context.Background(), &RunPodSandboxRequest{Pod: &PodSandbox{Id: "pod"}})
	if got := rec.list(); len(got) != 0 {
		t.Fatalf("legacy plugin received %v after Stop", got)
	}
	// Deviation (keptOnStop): its updates no longer reach the runtime.
	if _, err := legacy.runtime.UpdateContainers(context.Background(), &api.UpdateContainersRequest{
		Update: []*api.ContainerUpdate{{ContainerId: "ctr"}},
	}); err == nil {
		t.Fatal("container updates accepted after Stop")
	}
	select {
	case u := <-rt.updates:
		t.Fatalf("UpdateFn called after Stop with %v", u)
	default:
	}

	// The plugin hangs up: the runtime side of its connection goes too.
	legacy.close()
	eventually(t, func() bool { return len(r.reg.tracked()) == 0 }, "the legacy plugin torn down")
	opted.close()
	goleak.VerifyNone(t, before)
}

func TestStopDoesNotWaitForAHeldSyncBlock(t *testing.T) {
	rt := newFakeRuntime()
	r, sock := startRuntime(t, rt)

	block := r.BlockPluginSync()
	defer block.Unblock()

	f := newFakePlugin("01", "waiting", nil)
	f.connect(t, sock) // registers; synchronization waits for the block
	defer f.close()
	eventually(t, func() bool { return r.syncGate.queued() == 1 }, "plugin waiting to synchronize")

	stopped := make(chan struct{})
	go func() { r.Stop(); close(stopped) }()
	receive(t, stopped, "Stop with a sync block held")
	if len(r.reg.active()) != 0 {
		t.Fatal("plugin became active although its synchronization was blocked")
	}
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
