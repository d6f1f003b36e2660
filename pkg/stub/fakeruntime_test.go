package stub

import (
	"context"
	"errors"
	stdnet "net"
	"sync"
	"testing"
	"time"

	nrinet "github.com/containerd/nri/pkg/net"
	"github.com/containerd/nri/pkg/net/multiplex"
	"github.com/containerd/ttrpc"

	"github.com/nri-handover/nri/api"
)

// testTimeout bounds every wait in the tests so that a bug fails the test
// instead of hanging it; nothing is timed.
const testTimeout = 20 * time.Second

// fakeRuntime is the runtime end of one plugin connection: it serves the
// Runtime service and calls the plugin, as a real adaptation would, and
// lets the test script each step.
type fakeRuntime struct {
	t       *testing.T
	mux     multiplex.Mux
	srv     *ttrpc.Server
	cli     *ttrpc.Client
	plugin  api.PluginService
	regC    chan *api.RegisterPluginRequest
	updateC chan *api.UpdateContainersRequest
	served  chan struct{}

	mu       sync.Mutex
	register func(context.Context, *api.RegisterPluginRequest) (*api.RegisterPluginResponse, error)
	closed   sync.Once
}

// rtOption adjusts a fake runtime before it starts serving.
type rtOption func(*fakeRuntime)

// legacyRegistration answers registrations as an upstream runtime does.
func legacyRegistration(rt *fakeRuntime) {
	rt.register = func(context.Context, *api.RegisterPluginRequest) (*api.RegisterPluginResponse, error) {
		return legacyReply(), nil
	}
}

// newFakeRuntime takes over the runtime end of conn.
func newFakeRuntime(t *testing.T, conn stdnet.Conn, opts ...rtOption) *fakeRuntime {
	t.Helper()
	rt := &fakeRuntime{
		t:       t,
		mux:     multiplex.Multiplex(conn, multiplex.WithBlockedRead()),
		regC:    make(chan *api.RegisterPluginRequest, 4),
		updateC: make(chan *api.UpdateContainersRequest, 4),
		served:  make(chan struct{}),
		register: func(context.Context, *api.RegisterPluginRequest) (*api.RegisterPluginResponse, error) {
			return handoverReply(), nil
		},
	}
	for _, o := range opts {
		o(rt)
	}
	lis, err := rt.mux.Listen(multiplex.RuntimeServiceConn)
	if err != nil {
		t.Fatal(err)
	}
	rt.srv, err = ttrpc.NewServer()
	if err != nil {
		t.Fatal(err)
	}
	api.RegisterRuntimeService(rt.srv, rt)
	pconn, err := rt.mux.Open(multiplex.PluginServiceConn)
	if err != nil {
		t.Fatal(err)
	}
	rt.cli = ttrpc.NewClient(pconn)
	rt.plugin = api.NewPluginClient(rt.cli)
	// Frames for a connection ID nobody listens on yet are dropped, so the
	// mux reads only once both services are in place.
	rt.mux.Unblock()
	go func() {
		defer close(rt.served)
		_ = rt.srv.Serve(context.Background(), lis)
	}()
	t.Cleanup(rt.Close)
	return rt
}

func handoverReply() *api.RegisterPluginResponse {
	return &api.RegisterPluginResponse{NRIVersion: "v0.0.0-test", Features: []string{api.FeatureHandover}}
}

// legacyReply is what an upstream runtime's Empty decodes to.
func legacyReply() *api.RegisterPluginResponse { return &api.RegisterPluginResponse{} }

func (rt *fakeRuntime) onRegister(f func(context.Context, *api.RegisterPluginRequest) (*api.RegisterPluginResponse, error)) {
	rt.mu.Lock()
	rt.register = f
	rt.mu.Unlock()
}

func (rt *fakeRuntime) RegisterPlugin(ctx context.Context, req *api.RegisterPluginRequest) (*api.RegisterPluginResponse, error) {
	rt.regC <- req
	rt.mu.Lock()
	f := rt.register
	rt.mu.Unlock()
	return f(ctx, req)
}

func (rt *fakeRuntime) UpdateContainers(_ context.Context, req *api.UpdateContainersRequest) (*api.UpdateContainersResponse, error) {
	rt.updateC <- req
	return &api.UpdateContainersResponse{Failed: req.GetUpdate()[:1]}, nil
}

// Close hangs up on the plugin, as a runtime does after Shutdown.
func (rt *fakeRuntime) Close() {
	rt.closed.Do(func() {
		rt.cli.Close()
		rt.srv.Close()
		rt.mux.Close()
		<-rt.served
	})
}

func (rt *fakeRuntime) ctx() context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	rt.t.Cleanup(cancel)
	return ctx
}

// awaitRegistration returns the plugin's registration request.
func (rt *fakeRuntime) awaitRegistration() *api.RegisterPluginRequest {
	rt.t.Helper()
	select {
	case req := <-rt.regC:
		return req
	case <-time.After(testTimeout):
		rt.t.Fatal("plugin did not register")
		return nil
	}
}

// configure sends Configure, offering handover if asked to.
func (rt *fakeRuntime) configure(handover bool) *api.ConfigureResponse {
	rt.t.Helper()
	req := &api.ConfigureRequest{
		Config: "cfg", RuntimeName: "fake", RuntimeVersion: "v1", NRIVersion: "v0.0.0-test",
		RegistrationTimeout: 7000, RequestTimeout: 3000,
	}
	if handover {
		req.Features = []string{api.FeatureHandover}
	}
	rpl, err := rt.plugin.Configure(rt.ctx(), req)
	if err != nil {
		rt.t.Fatalf("configure: %v", err)
	}
	return rpl
}

func (rt *fakeRuntime) synchronize(req *api.SynchronizeRequest) *api.SynchronizeResponse {
	rt.t.Helper()
	rpl, err := rt.plugin.Synchronize(rt.ctx(), req)
	if err != nil {
		rt.t.Fatalf("synchronize: %v", err)
	}
	return rpl
}

func (rt *fakeRuntime) role(role api.PluginRole) error {
	_, err := rt.plugin.RoleChange(rt.ctx(), &api.RoleChangeRequest{Role: role, PeerVersion: "v9", PeerInstance: "peer"})
	return err
}

func (rt *fakeRuntime) shutdown(req *api.ShutdownRequest) {
	rt.t.Helper()
	if _, err := rt.plugin.Shutdown(rt.ctx(), req); err != nil {
		rt.t.Fatalf("shutdown: %v", err)
	}
}

// connect brings a stub up to "configured and synchronized" on rt; handover
// decides whether Configure offers it (registration is up to rtOptions).
func (rt *fakeRuntime) connect(handover bool) {
	rt.t.Helper()
	rt.awaitRegistration()
	rt.configure(handover)
	rt.synchronize(&api.SynchronizeRequest{})
}

// socketPair returns the runtime and plugin ends of a fresh socketpair.
func socketPair(t *testing.T) (runtimeEnd, pluginEnd stdnet.Conn) {
	t.Helper()
	sp, err := nrinet.NewSocketPair()
	if err != nil {
		t.Fatal(err)
	}
	r, err := sp.LocalConn()
	if err != nil {
		t.Fatal(err)
	}
	p, err := sp.PeerConn()
	if err != nil {
		t.Fatal(err)
	}
	return r, p
}

// runStub runs s in the background and returns Run's result channel.
func runStub(t *testing.T, s Stub, ctx context.Context) <-chan error {
	t.Helper()
	errC := make(chan error, 1)
	done := make(chan struct{})
	go func() {
		defer close(done)
		errC <- s.Run(ctx)
	}()
	t.Cleanup(func() {
		s.Stop()
		select {
		case <-done:
		case <-time.After(testTimeout):
			t.Error("Run did not return after Stop")
		}
	})
	return errC
}

// recv waits for a value or fails the test.
func recv[T any](t *testing.T, c <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-c:
		return v
	case <-time.After(testTimeout):
		t.Fatalf("timed out waiting for %s", what)
		var zero T
		return zero
	}
}

// eventually polls cond on a ticker; it never sleeps the test blindly.
func eventually(t *testing.T, cond func() bool, what string) {
	t.Helper()
	tick := time.NewTicker(2 * time.Millisecond)
	defer tick.Stop()
	deadline := time.After(testTimeout)
	for !cond() {
		select {
		case <-tick.C:
		case <-deadline:
			t.Fatalf("timed out waiting until %s", what)
		}
	}
}

var errTest = errors.New("test error")
