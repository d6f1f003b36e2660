package stub

import (
	"context"
	"errors"
	stdnet "net"
	"slices"
	"testing"

	"github.com/nri-handover/nri/api"
)

// An onClose callback that stops the stub (a common upstream idiom) must
// not deadlock the teardown that called it.
func TestOnCloseMayCallStop(t *testing.T) {
	var s *stub
	closed := make(chan struct{}, 1)
	s, rt := newTestStub(t, newTestPlugin(), WithOnClose(func() {
		s.Stop()
		closed <- struct{}{}
	}))
	errC := runStub(t, s, context.Background())
	rt.connect(true)
	rt.Close()
	recv(t, closed, "onClose")
	recv(t, errC, "Run")
}

// Stop releases a Start that hangs in registration.
func TestStopDuringRegistration(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	s, rt := newTestStubOn(t, newTestPlugin(), []rtOption{func(rt *fakeRuntime) {
		rt.register = func(context.Context, *api.RegisterPluginRequest) (*api.RegisterPluginResponse, error) {
			<-release
			return handoverReply(), nil
		}
	}})
	errC := make(chan error, 1)
	go func() { errC <- s.Start(context.Background()) }()
	rt.awaitRegistration()
	s.Stop()
	if err := recv(t, errC, "Start"); err == nil {
		t.Fatal("Start succeeded after Stop")
	}
}

// A cancelled Start context ends a Start waiting for Configure.
func TestStartContextCancelled(t *testing.T) {
	s, rt := newTestStub(t, newTestPlugin())
	ctx, cancel := context.WithCancel(context.Background())
	errC := make(chan error, 1)
	go func() { errC <- s.Start(ctx) }()
	rt.awaitRegistration()
	cancel()
	if err := recv(t, errC, "Start"); !errors.Is(err, context.Canceled) {
		t.Fatalf("Start: %v", err)
	}
	if s.Ready() {
		t.Fatal("ready after a failed Start")
	}
}

func TestRuntimeNRIVersion(t *testing.T) {
	cases := []struct {
		req  *api.ConfigureRequest
		want string
	}{
		{&api.ConfigureRequest{NRIVersion: "v0.12.5"}, "v0.12.5"},
		{&api.ConfigureRequest{}, api.UnknownVersion},
		{&api.ConfigureRequest{RuntimeName: "containerd", RuntimeVersion: "v2.0.0"}, "v0.8.0"},
	}
	for _, tc := range cases {
		if got := runtimeNRIVersion(tc.req); got != tc.want {
			t.Errorf("%v: got %q, want %q", tc.req, got, tc.want)
		}
	}
}

func TestShutdownErrorText(t *testing.T) {
	err := newShutdownError("10-p", &api.ShutdownRequest{
		Reason: api.ShutdownReason_SHUTDOWN_REASON_SUPERSEDED, Message: "rollout",
		SuccessorVersion: "v2", SuccessorInstance: "uid-b", SuccessorGeneration: 3,
	})
	want := `plugin 10-p: superseded by another instance of the plugin (successor version "v2", instance "uid-b", generation 3): rollout`
	if err.Error() != want {
		t.Fatalf("got  %s\nwant %s", err.Error(), want)
	}
	if !err.Superseded() || errors.Is(err, ErrRuntimeShutdown) {
		t.Fatal("wrong reason matching")
	}
}

// A runtime's timeout message that names the limit is the reason said once:
// not "timed out in the runtime's eyes: its Synchronize took longer than the
// request timeout".
func TestShutdownErrorSaysATimeoutOnce(t *testing.T) {
	err := newShutdownError("10-p", &api.ShutdownRequest{
		Reason: api.ShutdownReason_SHUTDOWN_REASON_TIMEOUT, Message: "its Synchronize took longer than the request timeout (2s)",
	})
	want := "plugin 10-p: its Synchronize took longer than the request timeout (2s)"
	if err.Error() != want {
		t.Fatalf("got  %s\nwant %s", err.Error(), want)
	}
	if !errors.Is(err, ErrTimeout) {
		t.Fatal("not ErrTimeout")
	}
}

func TestWaitReadyHonoursContext(t *testing.T) {
	s, err := NewHandoverStub(onlyCreate{}, WithPluginName("x"), WithPluginIdx("01"), quiet)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := s.WaitReady(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("WaitReady: %v", err)
	}
}

// The per-event RPCs (older than StateChange) reach the same handlers.
func TestDirectEventRPCs(t *testing.T) {
	p := newTestPlugin()
	s, rt := newTestStub(t, p)
	runStub(t, s, context.Background())
	rt.connect(true)

	ctx, pod, ctr := rt.ctx(), &api.PodSandbox{Id: "p"}, &api.Container{Id: "c"}
	calls := []func() error{
		func() error { _, err := rt.plugin.RunPodSandbox(ctx, &api.RunPodSandboxRequest{Pod: pod}); return err },
		func() error {
			_, err := rt.plugin.PostUpdatePodSandbox(ctx, &api.PostUpdatePodSandboxRequest{Pod: pod})
			return err
		},
		func() error {
			_, err := rt.plugin.StopPodSandbox(ctx, &api.StopPodSandboxRequest{Pod: pod})
			return err
		},
		func() error {
			_, err := rt.plugin.RemovePodSandbox(ctx, &api.RemovePodSandboxRequest{Pod: pod})
			return err
		},
		func() error {
			_, err := rt.plugin.PostCreateContainer(ctx, &api.PostCreateContainerRequest{Pod: pod, Container: ctr})
			return err
		},
		func() error {
			_, err := rt.plugin.StartContainer(ctx, &api.StartContainerRequest{Pod: pod, Container: ctr})
			return err
		},
		func() error {
			_, err := rt.plugin.PostStartContainer(ctx, &api.PostStartContainerRequest{Pod: pod, Container: ctr})
			return err
		},
		func() error {
			_, err := rt.plugin.PostUpdateContainer(ctx, &api.PostUpdateContainerRequest{Pod: pod, Container: ctr})
			return err
		},
		func() error {
			_, err := rt.plugin.RemoveContainer(ctx, &api.RemoveContainerRequest{Pod: pod, Container: ctr})
			return err
		},
	}
	for i, call := range calls {
		if err := call(); err != nil {
			t.Errorf("call %d: %v", i, err)
		}
	}
	want := []string{"RunPodSandbox:p", "PostUpdatePodSandbox:p", "StopPodSandbox:p", "RemovePodSandbox:p",
		"PostCreateContainer:c", "StartContainer:c", "PostStartContainer:c", "PostUpdateContainer:c", "RemoveContainer:c"}
	if got := p.seen(); !slices.Equal(got, want) {
		t.Fatalf("events\n got %v\nwant %v", got, want)
	}
}

// WithDialer is used instead of dialing the socket path, and the failure
// policy travels in the Configure reply.
func TestDialerAndFailurePolicy(t *testing.T) {
	rconn, pconn := socketPair(t)
	dialed := make(chan string, 1)
	policy := &api.FailurePolicy{FailRequest: true}
	s, err := New(newTestPlugin(), WithPluginName("test"), WithPluginIdx("10"), quiet,
		WithSocketPath("/nowhere/nri.sock"), WithFailurePolicy(policy),
		WithDialer(func(path string) (stdnet.Conn, error) {
			dialed <- path
			return pconn, nil
		}),
		WithTTRPCOptions(nil, nil))
	if err != nil {
		t.Fatal(err)
	}
	rt := newFakeRuntime(t, rconn)
	runStub(t, s, context.Background())
	if got := recv(t, dialed, "dial"); got != "/nowhere/nri.sock" {
		t.Errorf("dialed %q", got)
	}
	rt.awaitRegistration()
	if rpl := rt.configure(true); !rpl.GetFailurePolicy().GetFailRequest() {
		t.Errorf("failure policy %v", rpl.GetFailurePolicy())
	}
	if s.RuntimeNRIVersion() != "v0.0.0-test" {
		t.Errorf("runtime NRI version %q", s.RuntimeNRIVersion())
	}
}
