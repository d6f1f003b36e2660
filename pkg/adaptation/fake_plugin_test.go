package adaptation

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/containerd/nri/pkg/net/multiplex"
	"github.com/containerd/ttrpc"

	"github.com/nri-handover/nri/api"
)

// recorder collects what plugins saw, across plugins, in arrival order.
type recorder struct {
	mu     sync.Mutex
	events []string
	notify chan string
}

func newRecorder() *recorder { return &recorder{notify: make(chan string, 1024)} }

func (r *recorder) add(s string) {
	r.mu.Lock()
	r.events = append(r.events, s)
	r.mu.Unlock()
	select {
	case r.notify <- s:
	default:
	}
}

func (r *recorder) list() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.events...)
}

// fakePlugin speaks the plugin side of the wire protocol directly, so that
// the adaptation can be tested in-package without pkg/stub.
type fakePlugin struct {
	name, idx string
	events    api.EventMask
	policy    *api.FailurePolicy
	rec       *recorder

	// handle, if set, answers every event; nil means an empty answer.
	handle func(ctx context.Context, e api.Event, req any) (any, error)
	// regReq, if set, changes the RegisterPlugin request before it is sent.
	regReq func(*api.RegisterPluginRequest)
	// roleChange, if set, handles RoleChange.
	roleChange func(context.Context, *api.RoleChangeRequest) error
	// syncErr, if set, fails synchronization.
	syncErr error
	// onSync, if set, sees every Synchronize message before it is answered.
	onSync func(*api.SynchronizeRequest)
	// syncUpdates are asked for in the answer to the last Synchronize message.
	syncUpdates []*api.ContainerUpdate
	// configure, if set, runs when the runtime configures the plugin.
	configure func()
	// onShutdown, if set, runs when the runtime sends Shutdown, before it
	// is recorded and answered.
	onShutdown func(*api.ShutdownRequest)

	mu        sync.Mutex
	syncs     []*api.SynchronizeRequest
	synced    chan struct{} // closed on the last Synchronize message
	syncOnce  sync.Once
	shutdowns chan *api.ShutdownRequest
	regRpl    *api.RegisterPluginResponse
	cfgReq    *api.ConfigureRequest

	mux     multiplex.Mux
	srv     *ttrpc.Server
	cli     *ttrpc.Client
	runtime api.RuntimeService
	served  chan struct{}
	lost    chan struct{} // closed when the runtime side goes away
}

func newFakePlugin(idx, name string, rec *recorder) *fakePlugin {
	return &fakePlugin{
		idx: idx, name: name, rec: rec,
		synced:    make(chan struct{}),
		shutdowns: make(chan *api.ShutdownRequest, 4),
		served:    make(chan struct{}),
		lost:      make(chan struct{}),
	}
}

// dial connects to a socket without registering.
func (f *fakePlugin) dial(t testing.TB, socket string) {
	t.Helper()
	conn, err := net.Dial("unix", socket)
	if err != nil {
		t.Fatalf("dial %s: %v", socket, err)
	}
	f.attach(t, conn)
}

// attach sets up the multiplexed services over conn.
func (f *fakePlugin) attach(t testing.TB, conn net.Conn) {
	t.Helper()
	f.mux = multiplex.Multiplex(conn)
	l, err := f.mux.Listen(multiplex.PluginServiceConn)
	if err != nil {
		t.Fatalf("listen: %v", err)
	}
	f.srv, err = ttrpc.NewServer()
	if err != nil {
		t.Fatalf("server: %v", err)
	}
	api.RegisterPluginService(f.srv, f)
	go func() {
		defer close(f.served)
		_ = f.srv.Serve(context.Background(), l)
	}()
	rc, err := f.mux.Open(multiplex.RuntimeServiceConn)
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	f.cli = ttrpc.NewClient(rc, ttrpc.WithOnClose(func() { close(f.lost) }))
	f.runtime = api.NewRuntimeClient(f.cli)
}

// register sends RegisterPlugin.
func (f *fakePlugin) register(ctx context.Context) error {
	req := &api.RegisterPluginRequest{
		PluginName:    f.name,
		PluginIdx:     f.idx,
		NRIVersion:    "test",
		PluginVersion: "v1",
		InstanceId:    "instance-" + f.idx + "-" + f.name,
		Generation:    1,
	}
	if f.regReq != nil {
		f.regReq(req)
	}
	rpl, err := f.runtime.RegisterPlugin(ctx, req)
	f.mu.Lock()
	f.regRpl = rpl
	f.mu.Unlock()
	return err
}

// connect dials and registers, failing the test on error.
func (f *fakePlugin) connect(t testing.TB, socket string) {
	t.Helper()
	f.dial(t, socket)
	if err := f.register(context.Background()); err != nil {
		t.Fatalf("register %s-%s: %v", f.idx, f.name, err)
	}
}

// connectRefused dials and registers a plugin the runtime drops right after
// its registration. ttrpc's client picks at random between a reply and a
// connection closed meanwhile, so RegisterPlugin may then fail with
// ErrClosed although the runtime answered it; any other error fails the test.
func (f *fakePlugin) connectRefused(t testing.TB, socket string) {
	t.Helper()
	f.dial(t, socket)
	if err := f.register(context.Background()); err != nil && !errors.Is(err, ttrpc.ErrClosed) {
		t.Fatalf("register %s-%s: %v", f.idx, f.name, err)
	}
}

func (f *fakePlugin) close() {
	if f.cli != nil {
		f.cli.Close()
	}
	if f.srv != nil {
		f.srv.Close()
	}
	if f.mux != nil {
		f.mux.Close()
		<-f.served
	}
}

func (f *fakePlugin) id() string { return f.idx + "-" + f.name }

func (f *fakePlugin) event(ctx context.Context, e api.Event, req any) (any, error) {
	if f.rec != nil {
		f.rec.add(f.id() + ":" + e.PrettyName())
	}
	if f.handle != nil {
		return f.handle(ctx, e, req)
	}
	return nil, nil
}

func answer[T any](f *fakePlugin, ctx context.Context, e api.Event, req any) (*T, error) {
	rpl, err := f.event(ctx, e, req)
	if err != nil {
		return nil, err
	}
	if rpl == nil {
		return new(T), nil
	}
	return rpl.(*T), nil
}

func (f *fakePlugin) Configure(_ context.Context, req *api.ConfigureRequest) (*api.ConfigureResponse, error) {
	if f.configure != nil {
		f.configure()
	}
	f.mu.Lock()
	f.cfgReq = req
	f.mu.Unlock()
	return &api.ConfigureResponse{Events: int32(f.events), FailurePolicy: f.policy}, nil
}

func (f *fakePlugin) Synchronize(_ context.Context, req *api.SynchronizeRequest) (*api.SynchronizeResponse, error) {
	if f.syncErr != nil {
		return nil, f.syncErr
	}
	f.mu.Lock()
	f.syncs = append(f.syncs, req)
	f.mu.Unlock()
	if f.onSync != nil {
		f.onSync(req)
	}
	if req.More {
		return &api.SynchronizeResponse{More: true}, nil
	}
	f.syncOnce.Do(func() { close(f.synced) })
	return &api.SynchronizeResponse{Update: f.syncUpdates}, nil
}

func (f *fakePlugin) Shutdown(_ context.Context, req *api.ShutdownRequest) (*api.Empty, error) {
	if f.onShutdown != nil {
		f.onShutdown(req)
	}
	select {
	case f.shutdowns <- req:
	default:
	}
	return &api.Empty{}, nil
}

func (f *fakePlugin) RunPodSandbox(ctx context.Context, req *api.RunPodSandboxRequest) (*api.RunPodSandboxResponse, error) {
	return answer[api.RunPodSandboxResponse](f, ctx, api.Event_RUN_POD_SANDBOX, req)
}
func (f *fakePlugin) UpdatePodSandbox(ctx context.Context, req *api.UpdatePodSandboxRequest) (*api.UpdatePodSandboxResponse, error) {
	return answer[api.UpdatePodSandboxResponse](f, ctx, api.Event_UPDATE_POD_SANDBOX, req)
}
func (f *fakePlugin) PostUpdatePodSandbox(ctx context.Context, req *api.PostUpdatePodSandboxRequest) (*api.PostUpdatePodSandboxResponse, error) {
	return answer[api.PostUpdatePodSandboxResponse](f, ctx, api.Event_POST_UPDATE_POD_SANDBOX, req)
}
func (f *fakePlugin) StopPodSandbox(ctx context.Context, req *api.StopPodSandboxRequest) (*api.StopPodSandboxResponse, error) {
	return answer[api.StopPodSandboxResponse](f, ctx, api.Event_STOP_POD_SANDBOX, req)
}
func (f *fakePlugin) RemovePodSandbox(ctx context.Context, req *api.RemovePodSandboxRequest) (*api.RemovePodSandboxResponse, error) {
	return answer[api.RemovePodSandboxResponse](f, ctx, api.Event_REMOVE_POD_SANDBOX, req)
}
func (f *fakePlugin) CreateContainer(ctx context.Context, req *api.CreateContainerRequest) (*api.CreateContainerResponse, error) {
	return answer[api.CreateContainerResponse](f, ctx, api.Event_CREATE_CONTAINER, req)
}
func (f *fakePlugin) PostCreateContainer(ctx context.Context, req *api.PostCreateContainerRequest) (*api.PostCreateContainerResponse, error) {
	return answer[api.PostCreateContainerResponse](f, ctx, api.Event_POST_CREATE_CONTAINER, req)
}
func (f *fakePlugin) StartContainer(ctx context.Context, req *api.StartContainerRequest) (*api.StartContainerResponse, error) {
	return answer[api.StartContainerResponse](f, ctx, api.Event_START_CONTAINER, req)
}
func (f *fakePlugin) PostStartContainer(ctx context.Context, req *api.PostStartContainerRequest) (*api.PostStartContainerResponse, error) {
	return answer[api.PostStartContainerResponse](f, ctx, api.Event_POST_START_CONTAINER, req)
}
func (f *fakePlugin) UpdateContainer(ctx context.Context, req *api.UpdateContainerRequest) (*api.UpdateContainerResponse, error) {
	return answer[api.UpdateContainerResponse](f, ctx, api.Event_UPDATE_CONTAINER, req)
}
func (f *fakePlugin) PostUpdateContainer(ctx context.Context, req *api.PostUpdateContainerRequest) (*api.PostUpdateContainerResponse, error) {
	return answer[api.PostUpdateContainerResponse](f, ctx, api.Event_POST_UPDATE_CONTAINER, req)
}
func (f *fakePlugin) StopContainer(ctx context.Context, req *api.StopContainerRequest) (*api.StopContainerResponse, error) {
	return answer[api.StopContainerResponse](f, ctx, api.Event_STOP_CONTAINER, req)
}
func (f *fakePlugin) RemoveContainer(ctx context.Context, req *api.RemoveContainerRequest) (*api.RemoveContainerResponse, error) {
	return answer[api.RemoveContainerResponse](f, ctx, api.Event_REMOVE_CONTAINER, req)
}
func (f *fakePlugin) StateChange(ctx context.Context, req *api.StateChangeEvent) (*api.Empty, error) {
	_, err := f.event(ctx, req.Event, req)
	return &api.Empty{}, err
}
func (f *fakePlugin) ValidateContainerAdjustment(ctx context.Context, req *api.ValidateContainerAdjustmentRequest) (*api.ValidateContainerAdjustmentResponse, error) {
	return answer[api.ValidateContainerAdjustmentResponse](f, ctx, api.Event_VALIDATE_CONTAINER_ADJUSTMENT, req)
}
func (f *fakePlugin) RoleChange(ctx context.Context, req *api.RoleChangeRequest) (*api.Empty, error) {
	if f.roleChange != nil {
		return &api.Empty{}, f.roleChange(ctx, req)
	}
	return &api.Empty{}, nil
}

// fakeRuntime is the smallest runtime: a fixed snapshot and a record of the
// updates it was asked to apply.
type fakeRuntime struct {
	mu         sync.Mutex
	pods       []*api.PodSandbox
	containers []*api.Container
	updates    chan []*api.ContainerUpdate
	// afterSync, if set, runs after each SyncFn call handed its state over.
	afterSync func()
	// relaysNoRemoval: startRuntime relays no removal before the test (as
	// moby, which relays none).
	relaysNoRemoval bool
	// nriMu, if set, is taken inside SyncFn and UpdateFn, as containerd
	// takes its NRI mutex there; a test holds it around an event as
	// containerd does.
	nriMu *sync.Mutex
	// fail, if set, picks the updates UpdateFn reports failed.
	fail func([]*api.ContainerUpdate) []*api.ContainerUpdate
}

func newFakeRuntime() *fakeRuntime {
	return &fakeRuntime{updates: make(chan []*api.ContainerUpdate, 16)}
}

func (rt *fakeRuntime) sync(ctx context.Context, cb SyncCB) error {
	if rt.nriMu != nil {
		rt.nriMu.Lock()
		defer rt.nriMu.Unlock()
	}
	rt.mu.Lock()
	pods, ctrs := rt.pods, rt.containers
	rt.mu.Unlock()
	_, err := cb(ctx, pods, ctrs)
	if rt.afterSync != nil {
		rt.afterSync()
	}
	return err
}

func (rt *fakeRuntime) update(_ context.Context, u []*api.ContainerUpdate) ([]*api.ContainerUpdate, error) {
	if rt.nriMu != nil {
		rt.nriMu.Lock()
		defer rt.nriMu.Unlock()
	}
	rt.updates <- u
	if rt.fail != nil {
		return rt.fail(u), nil
	}
	return nil, nil
}

// shortSocket returns a socket path short enough for sun_path.
func shortSocket(t testing.TB) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "nri")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return filepath.Join(dir, "sub", "nri.sock")
}

// testOptions are a test runtime's options: the test logger, a fresh
// socket, and no pre-installed plugins; opts come after them.
func testOptions(t testing.TB, opts ...Option) (string, []Option) {
	t.Helper()
	sock := shortSocket(t)
	return sock, append([]Option{
		WithLogger(testLogger()),
		WithSocketPath(sock),
		WithPluginPath(filepath.Join(filepath.Dir(sock), "no-plugins")),
		WithPluginConfigPath(filepath.Join(filepath.Dir(sock), "no-conf")),
	}, opts...)
}

// startRuntime creates and starts an adaptation listening on a fresh socket.
func startRuntime(t testing.TB, rt *fakeRuntime, opts ...Option) (*Adaptation, string) {
	t.Helper()
	sock, opts := testOptions(t, opts...)
	r, err := New("test-runtime", "v0.0.1", rt.sync, rt.update, opts...)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	if err := r.Start(); err != nil {
		t.Fatalf("Start: %v", err)
	}
	if !rt.relaysNoRemoval {
		relayedRemoval(t, r)
	}
	return r, sock
}

// relayedRemoval relays the removal of a container nobody knows, before any
// plugin connects, as a runtime that relays removals (containerd, CRI-O)
// has by the time a plugin is updated: the ledger is used for takeovers only
// once it saw one (ledger.usable).
func relayedRemoval(t testing.TB, r *Adaptation) {
	t.Helper()
	err := r.RemoveContainer(context.Background(), &api.RemoveContainerRequest{
		Pod:       &api.PodSandbox{Id: "removed-before-the-test"},
		Container: &api.Container{Id: "removed-before-the-test", PodSandboxId: "removed-before-the-test"},
	})
	if err != nil {
		t.Fatalf("RemoveContainer: %v", err)
	}
}

// waitActive waits until the named plugins are active, in any order.
func waitActive(t testing.TB, r *Adaptation, names ...string) {
	t.Helper()
	eventually(t, func() bool {
		active := map[string]bool{}
		for _, p := range r.reg.active() {
			active[p.name()] = true
		}
		for _, n := range names {
			if !active[n] {
				return false
			}
		}
		return true
	}, fmt.Sprintf("plugins %v active", names))
}

// waitOnlyActive waits until the instance with id is the one active plugin.
func waitOnlyActive(t testing.TB, r *Adaptation, id, what string) *plugin {
	t.Helper()
	var p *plugin
	eventually(t, func() bool {
		active := r.reg.active()
		if len(active) != 1 || active[0].instance != id {
			return false
		}
		p = active[0]
		return true
	}, what)
	return p
}

// testLogger keeps test output to warnings and errors; NRI_TEST_VERBOSE=1
// shows everything.
func testLogger() Logger {
	level := slog.LevelWarn
	if os.Getenv("NRI_TEST_VERBOSE") != "" {
		level = slog.LevelDebug
	}
	return NewSlogLogger(slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level})))
}

// optedInWithout is a fake plugin that opted into handover without delta rounds.
func optedInWithout(idx, name, id string, gen uint64, rec *recorder) *fakePlugin {
	f := newFakePlugin(idx, name, rec)
	f.regReq = func(q *api.RegisterPluginRequest) {
		q.InstanceId, q.Generation = id, gen
		q.Features = []string{api.FeatureHandover}
	}
	return f
}

// holdFullRound makes f's full Synchronize wait: inSync is closed once it
// is in it, and closing release lets it answer.
func holdFullRound(f *fakePlugin) (inSync, release chan struct{}) {
	inSync, release = make(chan struct{}), make(chan struct{})
	f.onSync = func(req *api.SynchronizeRequest) {
		if !req.GetDelta() {
			close(inSync)
			<-release
		}
	}
	return inSync, release
}

// hangOn makes a plugin hang on event e, ignoring its copy of the deadline,
// until the test ends: the runtime's side of the request runs out of time
// before any answer comes. (A plugin that answers with its context's error
// when its deadline passes races with the runtime's own deadline, as with
// upstream NRI.)
func hangOn(t *testing.T, e api.Event) func(context.Context, api.Event, any) (any, error) {
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	return func(_ context.Context, got api.Event, _ any) (any, error) {
		if got == e {
			<-release
			return nil, errors.New("released at the end of the test")
		}
		return nil, nil
	}
}
