package stub

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	stdnet "net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"go.uber.org/goleak"

	"github.com/nri-handover/nri/api"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

var quiet = WithLogger(NewSlogLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))

// newTestStub creates a stub on the plugin end of a socketpair and the fake
// runtime on the other end.
func newTestStub(t *testing.T, p Plugin, opts ...Option) (*stub, *fakeRuntime) {
	t.Helper()
	return newTestStubOn(t, p, nil, opts...)
}

func newTestStubOn(t *testing.T, p Plugin, rtOpts []rtOption, opts ...Option) (*stub, *fakeRuntime) {
	t.Helper()
	rconn, pconn := socketPair(t)
	opts = append([]Option{WithPluginName("test"), WithPluginIdx("10"), WithConnection(pconn), quiet}, opts...)
	s, err := New(p, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return s.(*stub), newFakeRuntime(t, rconn, rtOpts...)
}

func TestEventMaskFollowsImplementedHandlers(t *testing.T) {
	s, err := New(onlyCreate{}, WithPluginName("x"), WithPluginIdx("01"), quiet)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := s.(*stub).events, maskOf(api.Event_CREATE_CONTAINER); got != want {
		t.Fatalf("mask %s, want %s", maskString(got), maskString(want))
	}

	s, err = New(newTestPlugin(), WithPluginName("x"), WithPluginIdx("01"), quiet)
	if err != nil {
		t.Fatal(err)
	}
	for e := api.Event_RUN_POD_SANDBOX; e < api.Event_LAST; e++ {
		if s.(*stub).events&maskOf(e) == 0 {
			t.Errorf("event %s missing from the mask", e)
		}
	}

	if _, err := New(struct{}{}, WithPluginName("x"), WithPluginIdx("01"), quiet); err == nil {
		t.Fatal("a plugin without handlers was accepted")
	}
}

// TestIdentity: a plugin that did not opt in gets upstream's (v0.12.5)
// identity, from New's environment, options in order and the executable's
// name; one that opted in keeps the name it set. A malformed index is refused
// at New rather than by the runtime at registration.
func TestIdentity(t *testing.T) {
	t.Setenv(api.PluginNameEnvVar, "")
	t.Setenv(api.PluginIdxEnvVar, "")
	t.Setenv(InstanceIDEnvVar, "")
	t.Setenv(GenerationEnvVar, "")
	t.Setenv(HandoverEnvVar, "")
	env := func(name, idx string) map[string]string {
		return map[string]string{api.PluginNameEnvVar: name, api.PluginIdxEnvVar: idx}
	}

	cases := []struct {
		name    string
		env     map[string]string
		argv0   string
		opts    []Option
		want    string
		wantErr string // a part of the error
		wantLog string // a part of an info line
	}{
		{name: "options", opts: []Option{WithPluginName("opt"), WithPluginIdx("42")}, argv0: "whatever", want: "42-opt"},
		{name: "environment", env: env("env", "07"), argv0: "whatever", want: "07-env"},
		{name: "name option overrides environment, saying so", env: env("env", "07"), opts: []Option{WithPluginName("opt")}, argv0: "x", want: "07-opt",
			wantLog: `plugin name "opt" overrides "env"`},
		{name: "index option after environment", env: env("env", "07"), opts: []Option{WithPluginIdx("08")}, argv0: "x",
			wantErr: `plugin index already set to "07" (by $NRI_PLUGIN_IDX or an earlier WithPluginIdx)`},
		{name: "empty index option after environment", env: env("env", "07"), opts: []Option{WithPluginIdx("")}, argv0: "x", wantErr: "already set"},
		{name: "index option twice", opts: []Option{WithPluginIdx("01"), WithPluginIdx("02")}, argv0: "x", wantErr: "already set"},
		{name: "executable", argv0: "/opt/nri/plugins/55-from-exe", want: "55-from-exe"},
		{name: "executable wins over name option", argv0: "/x/55-from-exe", opts: []Option{WithPluginName("named")}, want: "55-from-exe"},
		{name: "executable wins over name in environment", env: env("env", ""), argv0: "/x/55-from-exe", want: "55-from-exe"},
		{name: "opted in keeps its name", argv0: "/x/55-from-exe", opts: []Option{WithPluginName("named"), WithHandover()}, want: "55-named"},
		{name: "index only", argv0: "/x/binary", opts: []Option{WithPluginIdx("12")}, want: "12-binary"},
		{name: "empty name means the executable's", argv0: "/x/binary", opts: []Option{WithPluginName(""), WithPluginIdx("12")}, want: "12-binary"},
		{name: "empty name clears environment", env: env("env", "07"), argv0: "/x/binary", opts: []Option{WithPluginName("")}, want: "07-binary"},
		{name: "empty index means the executable's", argv0: "/x/20-exe", opts: []Option{WithPluginIdx("")}, want: "20-exe"},
		{name: "empty index, executable without one", argv0: "/x/binary", opts: []Option{WithPluginName("n"), WithPluginIdx("")}, wantErr: "plugin index unknown"},
		{name: "no index anywhere", argv0: "/x/binary", wantErr: "plugin index unknown"},
		// Upstream's runtime refuses it at registration; New says so first.
		{name: "malformed index", opts: []Option{WithPluginIdx("4x")}, wantErr: `invalid plugin index "4x": want two digits, 00 to 99`},
		{name: "malformed index in environment", env: env("env", "4x"), argv0: "x", wantErr: `invalid plugin index "4x"`},
	}
	argv0 := os.Args[0]
	defer func() { os.Args[0] = argv0 }()

	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			os.Args[0] = tc.argv0
			log := &lineRecorder{}
			s, ok := newOrWantErr(t, tc.wantErr, onlyCreate{}, append([]Option{WithLogger(log)}, tc.opts...)...)
			if !ok {
				return
			}
			if s.Name() != tc.want {
				t.Fatalf("name %q, want %q", s.Name(), tc.want)
			}
			if tc.wantLog != "" && !log.has("info: "+tc.wantLog) {
				t.Errorf("no info line saying %q in %s", tc.wantLog, log)
			}
		})
	}
}

func TestRegistrationCarriesVersionedIdentity(t *testing.T) {
	t.Setenv(InstanceIDEnvVar, "pod-uid-1")
	t.Setenv(GenerationEnvVar, "12")
	s, rt := newTestStub(t, newTestPlugin(), WithPluginVersion("v2.0.0"), WithHandover())
	runStub(t, s, context.Background())

	req := rt.awaitRegistration()
	if req.GetPluginName() != "test" || req.GetPluginIdx() != "10" {
		t.Errorf("registered as %s-%s", req.GetPluginIdx(), req.GetPluginName())
	}
	if req.GetPluginVersion() != "v2.0.0" || req.GetInstanceId() != "pod-uid-1" || req.GetGeneration() != 12 {
		t.Errorf("identity version %q instance %q generation %d", req.GetPluginVersion(), req.GetInstanceId(), req.GetGeneration())
	}
	if !api.HasFeature(req.GetFeatures(), api.FeatureHandover) {
		t.Errorf("features %v lack %s", req.GetFeatures(), api.FeatureHandover)
	}
	if req.GetNRIVersion() == "" {
		t.Error("no NRI library version")
	}

	s2, err := NewHandoverStub(onlyCreate{}, WithPluginName("x"), WithPluginIdx("01"), WithInstanceID("opt"), WithGeneration(3), WithHandover(), quiet)
	if err != nil {
		t.Fatal(err)
	}
	if s2.InstanceID() != "opt" || s2.Generation() != 3 || s2.PluginVersion() == "" {
		t.Errorf("options: instance %q generation %d version %q", s2.InstanceID(), s2.Generation(), s2.PluginVersion())
	}
}

// Against a runtime that knows nothing of handover (upstream's Empty reply),
// the stub is a plain plugin, ready once synchronized.
func TestLegacyRuntime(t *testing.T) {
	p := newTestPlugin()
	s, rt := newTestStubOn(t, p, []rtOption{legacyRegistration})
	errC := runStub(t, s, context.Background())
	rt.awaitRegistration()
	cfg := rt.configure(false)
	if got := EventMask(cfg.GetEvents()); got != s.events {
		t.Errorf("subscribed %s, want %s", maskString(got), maskString(s.events))
	}
	if s.Ready() {
		t.Fatal("ready before synchronization")
	}
	rpl := rt.synchronize(&api.SynchronizeRequest{Pods: []*api.PodSandbox{{Id: "pod"}}})
	if len(rpl.GetUpdate()) != 1 || rpl.GetMore() {
		t.Errorf("sync reply %v", rpl)
	}
	call := recv(t, p.syncC, "synchronize")
	if !call.hasInfo || call.info.Takeover != nil || call.info.Delta {
		t.Errorf("sync info %+v", call.info)
	}
	if err := s.WaitReady(rt.ctx()); err != nil {
		t.Fatal(err)
	}
	if s.HandoverAvailable() {
		t.Error("handover reported available with a legacy runtime")
	}
	if s.RequestTimeout().Milliseconds() != 3000 || s.RegistrationTimeout().Milliseconds() != 7000 {
		t.Errorf("timeouts %v %v", s.RequestTimeout(), s.RegistrationTimeout())
	}

	rt.Close()
	err := recv(t, errC, "Run")
	if !errors.Is(err, ErrDisconnected) {
		t.Fatalf("Run: %v, want ErrDisconnected", err)
	}
	if s.Ready() {
		t.Fatal("ready after disconnect")
	}
}

func TestEventsReachHandlers(t *testing.T) {
	p := newTestPlugin()
	s, rt := newTestStub(t, p)
	runStub(t, s, context.Background())
	rt.connect(true)

	ctx := rt.ctx()
	pod := &api.PodSandbox{Id: "p"}
	ctr := &api.Container{Id: "c"}
	create, err := rt.plugin.CreateContainer(ctx, &api.CreateContainerRequest{Pod: pod, Container: ctr})
	if err != nil {
		t.Fatal(err)
	}
	if create.GetAdjust().GetAnnotations()["adjusted-by"] != "test" || len(create.GetUpdate()) != 1 {
		t.Errorf("create reply %v", create)
	}
	if _, err := rt.plugin.CreateContainer(ctx, &api.CreateContainerRequest{Pod: pod, Container: &api.Container{Id: "fail"}}); err == nil {
		t.Error("plugin error not returned")
	}
	upd, err := rt.plugin.UpdateContainer(ctx, &api.UpdateContainerRequest{Pod: pod, Container: ctr})
	if err != nil || len(upd.GetUpdate()) != 1 {
		t.Errorf("update: %v %v", upd, err)
	}
	stop, err := rt.plugin.StopContainer(ctx, &api.StopContainerRequest{Pod: pod, Container: ctr})
	if err != nil || stop.GetUpdate()[0].GetContainerId() != "stopped-c" {
		t.Errorf("stop: %v %v", stop, err)
	}
	if _, err := rt.plugin.UpdatePodSandbox(ctx, &api.UpdatePodSandboxRequest{Pod: pod}); err != nil {
		t.Error(err)
	}
	for _, e := range []api.Event{api.Event_RUN_POD_SANDBOX, api.Event_POST_UPDATE_POD_SANDBOX, api.Event_STOP_POD_SANDBOX, api.Event_REMOVE_POD_SANDBOX} {
		if _, err := rt.plugin.StateChange(ctx, &api.StateChangeEvent{Event: e, Pod: pod}); err != nil {
			t.Error(err)
		}
	}
	for _, e := range []api.Event{api.Event_POST_CREATE_CONTAINER, api.Event_START_CONTAINER, api.Event_POST_START_CONTAINER, api.Event_POST_UPDATE_CONTAINER, api.Event_REMOVE_CONTAINER} {
		if _, err := rt.plugin.StateChange(ctx, &api.StateChangeEvent{Event: e, Pod: pod, Container: ctr}); err != nil {
			t.Error(err)
		}
	}
	val, err := rt.plugin.ValidateContainerAdjustment(ctx, &api.ValidateContainerAdjustmentRequest{Container: &api.Container{Id: "reject"}})
	if err != nil || !val.GetReject() || val.GetReason() == "" {
		t.Errorf("validate: %v %v", val, err)
	}

	want := []string{
		"CreateContainer:c", "CreateContainer:fail", "UpdateContainer:c", "StopContainer:c", "UpdatePodSandbox:p",
		"RunPodSandbox:p", "PostUpdatePodSandbox:p", "StopPodSandbox:p", "RemovePodSandbox:p",
		"PostCreateContainer:c", "StartContainer:c", "PostStartContainer:c", "PostUpdateContainer:c", "RemoveContainer:c",
		"Validate:reject",
	}
	if got := p.seen(); !slices.Equal(got, want) {
		t.Fatalf("events\n got %v\nwant %v", got, want)
	}
}

func TestConfigureSubscription(t *testing.T) {
	p := newTestPlugin()
	p.mask = maskOf(api.Event_CREATE_CONTAINER, api.Event_REMOVE_CONTAINER)
	s, rt := newTestStub(t, p)
	runStub(t, s, context.Background())
	rt.awaitRegistration()
	if got := EventMask(rt.configure(true).GetEvents()); got != p.mask {
		t.Fatalf("subscribed %s, want %s", maskString(got), maskString(p.mask))
	}

	// A subscription beyond the plugin's handlers fails Configure and Start.
	s2, rt2 := newTestStub(t, onlyCreateConfigurable{mask: maskOf(api.Event_START_CONTAINER)})
	errC := make(chan error, 1)
	go func() { errC <- s2.Start(context.Background()) }()
	rt2.awaitRegistration()
	if _, err := rt2.plugin.Configure(rt2.ctx(), &api.ConfigureRequest{}); err == nil {
		t.Fatal("configure accepted an unhandled subscription")
	}
	rt2.Close()
	if err := recv(t, errC, "Start"); err == nil {
		t.Fatal("Start succeeded after a failed Configure")
	}
}

type onlyCreateConfigurable struct {
	onlyCreate
	mask EventMask
}

func (o onlyCreateConfigurable) Configure(context.Context, string, string, string) (EventMask, error) {
	return o.mask, nil
}

// With a handover runtime, synchronization is not enough: readiness waits
// for the runtime to make this instance active, and leaves with STANDBY.
func TestReadinessFollowsRole(t *testing.T) {
	p := newTestPlugin()
	file := filepath.Join(t.TempDir(), "sub", "ready")
	s, rt := newTestStub(t, p, WithReadyFile(file), WithHandover())
	runStub(t, s, context.Background())
	readyz := httptest.NewServer(s.ReadyzHandler())
	defer readyz.Close()

	rt.connect(true)
	recv(t, p.syncC, "synchronize")
	if !s.HandoverAvailable() {
		t.Fatal("handover not detected")
	}
	assertReady(t, s, readyz.URL, file, false)

	if err := rt.role(api.PluginRole_PLUGIN_ROLE_ACTIVE); err != nil {
		t.Fatal(err)
	}
	if req := recv(t, p.roleC, "role change"); req.GetRole() != api.PluginRole_PLUGIN_ROLE_ACTIVE || req.GetPeerVersion() != "v9" {
		t.Errorf("role change %v", req)
	}
	if err := s.WaitReady(rt.ctx()); err != nil {
		t.Fatal(err)
	}
	assertReady(t, s, readyz.URL, file, true)
	if s.Role() != api.PluginRole_PLUGIN_ROLE_ACTIVE {
		t.Errorf("role %s", s.Role())
	}

	if err := rt.role(api.PluginRole_PLUGIN_ROLE_STANDBY); err != nil {
		t.Fatal(err)
	}
	recv(t, p.roleC, "role change")
	assertHandedOver(t, s, readyz.URL, file, "standby")

	// A plugin refusing activation stays a standby and the runtime hears why.
	p.roleErr = errTest
	if err := rt.role(api.PluginRole_PLUGIN_ROLE_ACTIVE); err == nil {
		t.Fatal("refused activation reported as success")
	}
	recv(t, p.roleC, "role change")
	assertHandedOver(t, s, readyz.URL, file, "standby")
}

// assertHandedOver: the instance is not the active one (Ready, the ready
// file), but its readinessProbe answers 200 and says it handed over.
func assertHandedOver(t *testing.T, s HandoverStub, url, file, why string) {
	t.Helper()
	if s.Ready() {
		t.Error("Ready() = true for an instance that handed over")
	}
	if _, err := os.Stat(file); file != "" && err == nil {
		t.Error("the ready file, which marks the active instance, exists after the handover")
	}
	rsp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(rsp.Body)
	rsp.Body.Close()
	if rsp.StatusCode != http.StatusOK || !strings.Contains(string(body), "handed over") || !strings.Contains(string(body), why) {
		t.Errorf("readyz after the handover: %d %q, want 200 saying it handed over (%s)", rsp.StatusCode, body, why)
	}
}

// TestReadyzAfterHandover: a superseded instance held by Run keeps its
// readinessProbe at 200 (the DaemonSet counts the node available by its
// oldest pod), saying it serves no events, until it is stopped; one that
// exits on supersession does not.
func TestReadyzAfterHandover(t *testing.T) {
	for _, stop := range []string{"Stop", "context"} {
		t.Run(stop, func(t *testing.T) {
			p := newTestPlugin()
			s, rt := newTestStub(t, p, WithHandover())
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			errC := runStub(t, s, ctx)
			readyz := httptest.NewServer(s.ReadyzHandler())
			defer readyz.Close()
			rt.connect(true)
			if err := rt.role(api.PluginRole_PLUGIN_ROLE_ACTIVE); err != nil {
				t.Fatal(err)
			}
			recv(t, p.roleC, "role change")
			assertReady(t, s, readyz.URL, "", true)

			supersede(t, rt)
			eventually(t, func() bool { s.mu.Lock(); defer s.mu.Unlock(); return s.cur.closed }, "connection closed")
			assertHandedOver(t, s, readyz.URL, "", "successor")

			if stop == "Stop" {
				s.Stop()
			} else {
				cancel()
			}
			if err := recv(t, errC, "Run"); !errors.Is(err, ErrSuperseded) {
				t.Fatalf("Run: %v", err)
			}
			assertReady(t, s, readyz.URL, "", false)
		})
	}
	t.Run("WithExitOnSuperseded", func(t *testing.T) {
		s, rt := newTestStub(t, newTestPlugin(), WithHandover(), WithExitOnSuperseded())
		errC := runStub(t, s, context.Background())
		readyz := httptest.NewServer(s.ReadyzHandler())
		defer readyz.Close()
		rt.connect(true)
		supersede(t, rt)
		if err := recv(t, errC, "Run"); !errors.Is(err, ErrSuperseded) {
			t.Fatalf("Run: %v", err)
		}
		assertReady(t, s, readyz.URL, "", false)
	})
}

func assertReady(t *testing.T, s HandoverStub, url, file string, want bool) {
	t.Helper()
	if s.Ready() != want {
		t.Errorf("Ready() = %v, want %v", s.Ready(), want)
	}
	if file != "" {
		_, err := os.Stat(file)
		if exists := err == nil; exists != want {
			t.Errorf("ready file exists = %v, want %v (%v)", exists, want, err)
		}
	}
	rsp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	rsp.Body.Close()
	if ok := rsp.StatusCode == http.StatusOK; ok != want {
		t.Errorf("readyz status %d, want ready=%v", rsp.StatusCode, want)
	}
}

func TestStaleReadyFileRemoved(t *testing.T) {
	file := filepath.Join(t.TempDir(), "ready")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := New(onlyCreate{}, WithPluginName("x"), WithPluginIdx("01"), WithReadyFile(file), quiet); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(file); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("stale ready file survived New: %v", err)
	}
}

// Chunks are reassembled into one call; delta rounds and a second full
// round (reactivation) reach the handler with their details.
func TestSynchronizeRounds(t *testing.T) {
	p := newTestPlugin()
	s, rt := newTestStub(t, p)
	runStub(t, s, context.Background())
	rt.awaitRegistration()
	rt.configure(true)

	takeover := &api.Takeover{PredecessorVersion: "v1", PredecessorInstance: "a", PredecessorGeneration: 4}
	chunks := []*api.SynchronizeRequest{
		{Pods: []*api.PodSandbox{{Id: "p1"}}, Containers: []*api.Container{{Id: "c1"}}, More: true, Takeover: takeover},
		{Containers: []*api.Container{{Id: "c2"}}, More: true},
		{Pods: []*api.PodSandbox{{Id: "p2"}}, Containers: []*api.Container{{Id: "c3"}}},
	}
	for i, c := range chunks {
		rpl := rt.synchronize(c)
		if rpl.GetMore() != c.GetMore() {
			t.Errorf("chunk %d: more %v", i, rpl.GetMore())
		}
	}
	call := recv(t, p.syncC, "synchronize")
	if len(call.pods) != 2 || len(call.containers) != 3 {
		t.Fatalf("got %d pods, %d containers", len(call.pods), len(call.containers))
	}
	if call.info.Takeover.GetPredecessorVersion() != "v1" || call.info.Takeover.GetPredecessorGeneration() != 4 || call.info.Delta {
		t.Errorf("sync info %+v", call.info)
	}

	rt.synchronize(&api.SynchronizeRequest{Delta: true, Containers: []*api.Container{{Id: "c4"}}, RemovedContainers: []string{"c1"}, RemovedPods: []string{"p1"}})
	call = recv(t, p.syncC, "delta round")
	if !call.info.Delta || len(call.containers) != 1 || !slices.Equal(call.info.RemovedContainers, []string{"c1"}) || !slices.Equal(call.info.RemovedPods, []string{"p1"}) {
		t.Errorf("delta round %+v, %d containers", call.info, len(call.containers))
	}

	rt.synchronize(&api.SynchronizeRequest{Containers: []*api.Container{{Id: "c2"}}, Takeover: &api.Takeover{Reactivation: true}})
	call = recv(t, p.syncC, "reactivation")
	if call.info.Delta || !call.info.Takeover.GetReactivation() || len(call.containers) != 1 {
		t.Errorf("reactivation round %+v", call.info)
	}
}

func TestShutdownReasons(t *testing.T) {
	cases := []struct {
		reason api.ShutdownReason
		want   error
	}{
		{api.ShutdownReason_SHUTDOWN_REASON_UNSPECIFIED, ErrShutdownUnspecified},
		{api.ShutdownReason_SHUTDOWN_REASON_RUNTIME_SHUTDOWN, ErrRuntimeShutdown},
		{api.ShutdownReason_SHUTDOWN_REASON_TIMEOUT, ErrTimeout},
		{api.ShutdownReason_SHUTDOWN_REASON_SYNCHRONIZATION_FAILED, ErrSynchronizationFailed},
		{api.ShutdownReason_SHUTDOWN_REASON_PROTOCOL_ERROR, ErrProtocolError},
		{api.ShutdownReason_SHUTDOWN_REASON_REMOVED, ErrRemoved},
		{api.ShutdownReason(99), ErrShutdownUnspecified},
	}
	for _, tc := range cases {
		t.Run(tc.reason.String(), func(t *testing.T) {
			p := newTestPlugin()
			s, rt := newTestStub(t, p)
			errC := runStub(t, s, context.Background())
			rt.connect(true)

			rt.shutdown(&api.ShutdownRequest{Reason: tc.reason, Message: "bye"})
			if got := recv(t, p.shutdownC, "ShutdownWithReason"); got.GetReason() != tc.reason {
				t.Errorf("handler got reason %s", got.GetReason())
			}
			recv(t, p.legacyC, "Shutdown")
			if s.Ready() {
				t.Error("ready after Shutdown")
			}
			rt.Close()

			err := recv(t, errC, "Run")
			if !errors.Is(err, tc.want) {
				t.Fatalf("Run: %v, want %v", err, tc.want)
			}
			var sd *ShutdownError
			if !errors.As(err, &sd) || sd.Reason != tc.reason || sd.Message != "bye" || sd.Plugin != "10-test" {
				t.Fatalf("Run: %#v", err)
			}
		})
	}
}

func supersede(t *testing.T, rt *fakeRuntime) {
	t.Helper()
	rt.shutdown(&api.ShutdownRequest{
		Reason:              api.ShutdownReason_SHUTDOWN_REASON_SUPERSEDED,
		SuccessorVersion:    "v2",
		SuccessorInstance:   "b",
		SuccessorGeneration: 9,
	})
	rt.Close()
}

// A superseded plugin neither exits nor reconnects: Run holds until Stop.
func TestSupersededHoldsUntilStopped(t *testing.T) {
	p := newTestPlugin()
	closed := make(chan struct{}, 1)
	s, rt := newTestStub(t, p, WithOnClose(func() { closed <- struct{}{} }))
	errC := runStub(t, s, context.Background())
	rt.connect(true)
	if err := rt.role(api.PluginRole_PLUGIN_ROLE_ACTIVE); err != nil {
		t.Fatal(err)
	}
	recv(t, p.roleC, "role change")

	supersede(t, rt)
	recv(t, closed, "connection closed")
	if s.Ready() {
		t.Fatal("superseded plugin still ready")
	}
	select {
	case err := <-errC:
		t.Fatalf("Run returned for a superseded plugin: %v", err)
	default:
	}
	if !s.holdSuperseded(s.cur) {
		t.Fatal("superseded session not held")
	}

	s.Stop()
	err := recv(t, errC, "Run")
	var sd *ShutdownError
	if !errors.Is(err, ErrSuperseded) || !errors.As(err, &sd) ||
		sd.SuccessorVersion != "v2" || sd.SuccessorInstance != "b" || sd.SuccessorGeneration != 9 {
		t.Fatalf("Run: %v", err)
	}
}

func TestSupersededContextCancel(t *testing.T) {
	s, rt := newTestStub(t, newTestPlugin())
	ctx, cancel := context.WithCancel(context.Background())
	errC := runStub(t, s, ctx)
	rt.connect(true)
	supersede(t, rt)
	eventually(t, func() bool { s.mu.Lock(); defer s.mu.Unlock(); return s.cur.closed }, "connection closed")
	cancel()
	if err := recv(t, errC, "Run"); !errors.Is(err, ErrSuperseded) {
		t.Fatalf("Run: %v", err)
	}
}

func TestExitOnSuperseded(t *testing.T) {
	s, rt := newTestStub(t, newTestPlugin(), WithHandover(), WithExitOnSuperseded())
	errC := runStub(t, s, context.Background())
	rt.connect(true)
	supersede(t, rt)
	if err := recv(t, errC, "Run"); !errors.Is(err, ErrSuperseded) {
		t.Fatalf("Run: %v", err)
	}
	s.Wait() // must not block either
}

// A runtime may refuse the registration and say why before or after it
// fails the call; Start reports the reason either way.
func TestRegistrationRejected(t *testing.T) {
	for _, before := range []bool{true, false} {
		name := map[bool]string{true: "shutdown before reply", false: "shutdown after reply"}[before]
		t.Run(name, func(t *testing.T) {
			s, rt := newTestStub(t, newTestPlugin())
			reject := &api.ShutdownRequest{Reason: api.ShutdownReason_SHUTDOWN_REASON_REGISTRATION_REJECTED, Message: "instance a was superseded"}
			rt.onRegister(func(ctx context.Context, _ *api.RegisterPluginRequest) (*api.RegisterPluginResponse, error) {
				if before {
					if _, err := rt.plugin.Shutdown(ctx, reject); err != nil {
						return nil, err
					}
				} else {
					go func() {
						_, _ = rt.plugin.Shutdown(context.Background(), reject)
						rt.Close()
					}()
				}
				return nil, errors.New("rejected")
			})
			err := s.Start(context.Background())
			if !errors.Is(err, ErrRegistrationRejected) {
				t.Fatalf("Start: %v", err)
			}
			rt.Close()
		})
	}
}

// After the runtime hangs up, the same stub can connect again.
func TestRestartOverUnixSocket(t *testing.T) {
	path := filepath.Join(t.TempDir(), "nri.sock")
	lis, err := stdnet.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	defer lis.Close()
	conns := make(chan stdnet.Conn, 2)
	go func() {
		for {
			c, err := lis.Accept()
			if err != nil {
				return
			}
			conns <- c
		}
	}()

	p := newTestPlugin()
	s, err := NewHandoverStub(p, WithPluginName("test"), WithPluginIdx("10"), WithSocketPath(path), quiet)
	if err != nil {
		t.Fatal(err)
	}
	for round := range 2 {
		errC := runStub(t, s, context.Background())
		rt := newFakeRuntime(t, recv(t, conns, "connection"), legacyRegistration)
		rt.connect(false)
		recv(t, p.syncC, "synchronize")
		if err := s.WaitReady(rt.ctx()); err != nil {
			t.Fatal(err)
		}
		if err := s.Start(context.Background()); err == nil {
			t.Fatal("second Start on a live connection succeeded")
		}
		rt.Close()
		if err := recv(t, errC, "Run"); !errors.Is(err, ErrDisconnected) {
			t.Fatalf("round %d: Run: %v", round, err)
		}
	}
}

func TestUpdateContainers(t *testing.T) {
	s, rt := newTestStub(t, newTestPlugin())
	if _, err := s.UpdateContainers(nil); !errors.Is(err, ErrNoService) {
		t.Fatalf("before start: %v", err)
	}
	runStub(t, s, context.Background())
	rt.connect(true)

	failed, err := s.UpdateContainers([]*api.ContainerUpdate{{ContainerId: "a"}, {ContainerId: "b"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(failed) != 1 || failed[0].GetContainerId() != "a" {
		t.Errorf("failed %v", failed)
	}
	if req := recv(t, rt.updateC, "update"); len(req.GetUpdate()) != 2 {
		t.Errorf("runtime got %v", req)
	}
}

// Pre-installed plugins get their end of a socketpair as a file descriptor.
func TestInheritedSocket(t *testing.T) {
	rconn, pconn := socketPair(t)
	f, err := pconn.(*stdnet.UnixConn).File()
	if err != nil {
		t.Fatal(err)
	}
	// The stub takes ownership of the descriptor in the environment, so it
	// gets its own: f's finalizer would otherwise close it behind its back.
	fd, err := syscall.Dup(int(f.Fd()))
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	pconn.Close()
	t.Setenv(api.PluginSocketEnvVar, itoa(fd))
	t.Setenv(api.PluginNameEnvVar, "inherited")
	t.Setenv(api.PluginIdxEnvVar, "33")

	p := newTestPlugin()
	s, err := New(p, quiet)
	if err != nil {
		t.Fatal(err)
	}
	rt := newFakeRuntime(t, rconn)
	runStub(t, s, context.Background())
	req := rt.awaitRegistration()
	if req.GetPluginName() != "inherited" || req.GetPluginIdx() != "33" {
		t.Errorf("registered as %s-%s", req.GetPluginIdx(), req.GetPluginName())
	}
	rt.configure(true)
	rt.synchronize(&api.SynchronizeRequest{})
	recv(t, p.syncC, "synchronize")
}

func TestStopBeforeStart(t *testing.T) {
	s, err := New(onlyCreate{}, WithPluginName("x"), WithPluginIdx("01"), quiet)
	if err != nil {
		t.Fatal(err)
	}
	s.Stop()
	s.Wait()
}

// A plugin that did not opt in registers without features and, even when
// the runtime offers handover, is a plain upstream plugin: ready once
// synchronized, no handover.
func TestWithoutHandoverBehavesAsUpstream(t *testing.T) {
	p := newTestPlugin()
	file := filepath.Join(t.TempDir(), "ready")
	s, rt := newTestStub(t, p, WithReadyFile(file))
	runStub(t, s, context.Background())
	readyz := httptest.NewServer(s.ReadyzHandler())
	defer readyz.Close()

	if req := rt.awaitRegistration(); len(req.GetFeatures()) != 0 {
		t.Fatalf("registered with features %v without opting in", req.GetFeatures())
	}
	rt.configure(true)
	rt.synchronize(&api.SynchronizeRequest{})
	recv(t, p.syncC, "synchronize")
	if s.HandoverAvailable() {
		t.Fatal("handover reported available without opting in")
	}
	assertReady(t, s, readyz.URL, file, true)
}

type roundPlugin struct{ onlyCreate }

func (roundPlugin) SynchronizeRound(context.Context, *SyncInfo, []*api.PodSandbox, []*api.Container) ([]*api.ContainerUpdate, error) {
	return nil, nil
}

// Delta rounds are asked for only by an opted-in plugin that implements
// SynchronizeRoundInterface.
// TestHandoverEnvSpellings: $NRI_PLUGIN_HANDOVER takes the usual boolean
// spellings in any case, empty means unset (on), and anything else is an
// error from New naming the variable and the accepted values.
func TestHandoverEnvSpellings(t *testing.T) {
	const on, off, bad = "on", "off", "error"
	for _, tc := range []struct {
		value string
		unset bool
		want  string
	}{
		{unset: true, want: on},
		{value: "", want: on},
		{value: "on", want: on},
		{value: "ON", want: on},
		{value: "true", want: on},
		{value: "True", want: on},
		{value: "1", want: on},
		{value: "yes", want: on},
		{value: "YES", want: on},
		{value: " on ", want: on},
		{value: "off", want: off},
		{value: "OFF", want: off},
		{value: "false", want: off},
		{value: "FALSE", want: off},
		{value: "0", want: off},
		{value: "no", want: off},
		{value: "No", want: off},
		{value: "disabled", want: bad},
		{value: "2", want: bad},
		{value: "of", want: bad},
	} {
		name := fmt.Sprintf("%q", tc.value)
		if tc.unset {
			name = "unset"
		}
		t.Run(name, func(t *testing.T) {
			if tc.unset {
				t.Setenv(HandoverEnvVar, "") // restored after the test
				os.Unsetenv(HandoverEnvVar)
			} else {
				t.Setenv(HandoverEnvVar, tc.value)
			}
			s, err := newStub(newTestPlugin(), WithPluginName("p"), WithPluginIdx("10"), WithHandover())
			switch tc.want {
			case bad:
				if err == nil {
					t.Fatalf("New with $%s=%q succeeded, want an error", HandoverEnvVar, tc.value)
				}
				for _, want := range []string{HandoverEnvVar, fmt.Sprintf("%q", tc.value), "on/off", "true/false", "1/0", "yes/no"} {
					if !strings.Contains(err.Error(), want) {
						t.Errorf("error %q does not say %q", err, want)
					}
				}
			case on, off:
				if err != nil {
					t.Fatalf("New with $%s=%q: %v", HandoverEnvVar, tc.value, err)
				}
				if got := s.handover; got != (tc.want == on) {
					t.Errorf("handover %v, want %s", got, tc.want)
				}
				if got := s.handoverOff; got != (tc.want == off) {
					t.Errorf("turned off %v, want %s", got, tc.want)
				}
			}
		})
	}
}

func TestFeaturesFollowOptIn(t *testing.T) {
	for _, tc := range []struct {
		name string
		p    Plugin
		opts []Option
		want []string
	}{
		{"upstream plugin", newTestPlugin(), nil, nil},
		{"round handler without opt-in", roundPlugin{}, nil, nil},
		{"opted in, Synchronize only", newTestPlugin(), []Option{WithHandover()}, []string{api.FeatureHandover}},
		{"opted in with rounds", roundPlugin{}, []Option{WithHandover()}, []string{api.FeatureHandover, api.FeatureDeltaSync}},
		{"opted in, turned off by the operator", roundPlugin{}, []Option{WithHandover()}, nil},
		{"opted in, explicitly on", roundPlugin{}, []Option{WithHandover()}, []string{api.FeatureHandover, api.FeatureDeltaSync}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			switch tc.name {
			case "opted in, turned off by the operator":
				t.Setenv(HandoverEnvVar, "off")
			case "opted in, explicitly on":
				t.Setenv(HandoverEnvVar, "on")
			}
			s, rt := newTestStub(t, tc.p, tc.opts...)
			runStub(t, s, context.Background())
			if got := rt.awaitRegistration().GetFeatures(); !slices.Equal(got, tc.want) {
				t.Fatalf("features %v, want %v", got, tc.want)
			}
		})
	}
}

// newOrWantErr creates a stub of p; with wantErr set it expects New to fail
// saying it instead, and ok tells whether the case goes on with the stub.
func newOrWantErr(t *testing.T, wantErr string, p Plugin, opts ...Option) (s HandoverStub, ok bool) {
	t.Helper()
	s, err := NewHandoverStub(p, opts...)
	if wantErr != "" {
		if err == nil || !strings.Contains(err.Error(), wantErr) {
			t.Fatalf("New: %v, want an error saying %q", err, wantErr)
		}
		return nil, false
	}
	if err != nil {
		t.Fatal(err)
	}
	return s, true
}
