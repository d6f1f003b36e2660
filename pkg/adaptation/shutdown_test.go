package adaptation

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/nri-handover/nri/api"
)

// Which runtime-initiated disconnects send the Shutdown RPC before closing
// (tellsShutdown): every one for a plugin that opted into handover, with its
// reason; none for any other plugin, because upstream v0.12.5's adaptation
// never calls Shutdown (see tellsShutdown for its disconnects).
//
// Each cause runs once with a plugin written for upstream and, unless the
// cause comes before a plugin could say that it opts in, once with an
// opted-in one. The runtime sends Shutdown, if at all, and waits for its
// answer before closing the connection, and the fake records it before
// answering: once the fake saw the connection close, any Shutdown is in
// f.shutdowns.
func TestShutdownNoticeByCause(t *testing.T) {
	type cause struct {
		name   string
		reason api.ShutdownReason // what an opted-in plugin is told
		// legacyOnly: the disconnect comes before the plugin registered,
		// so it cannot have opted in.
		legacyOnly bool
		// optedInOnly: only an opted-in plugin is disconnected; one that
		// did not opt in stays connected, as upstream leaves it
		// (TestStopLeavesLegacyExternalConnected).
		optedInOnly bool
		// run connects the plugin under test (registering with reg) and
		// makes the runtime disconnect it.
		run func(t *testing.T, reg func(*api.RegisterPluginRequest)) *fakePlugin
	}

	// plugin is the plugin under test, cleaned up with the test.
	plugin := func(t *testing.T, idx, name string, reg func(*api.RegisterPluginRequest)) *fakePlugin {
		f := newFakePlugin(idx, name, nil)
		f.regReq = reg
		t.Cleanup(f.close)
		return f
	}
	runtime := func(t *testing.T, opts ...Option) (*Adaptation, string) {
		r, sock := startRuntime(t, newFakeRuntime(), opts...)
		t.Cleanup(r.Stop)
		return r, sock
	}
	expectRefused := func(t *testing.T, f *fakePlugin) {
		t.Helper()
		if err := f.register(context.Background()); err == nil {
			t.Fatal("registration accepted")
		}
	}

	causes := []cause{
		{
			name: "registration rejected: invalid index", reason: api.ShutdownReason_SHUTDOWN_REASON_REGISTRATION_REJECTED,
			run: func(t *testing.T, reg func(*api.RegisterPluginRequest)) *fakePlugin {
				_, sock := runtime(t)
				f := plugin(t, "1", "p", reg)
				f.dial(t, sock)
				expectRefused(t, f)
				return f
			},
		},
		{
			name: "registration rejected: name held by an opted-in instance", reason: api.ShutdownReason_SHUTDOWN_REASON_REGISTRATION_REJECTED,
			run: func(t *testing.T, reg func(*api.RegisterPluginRequest)) *fakePlugin {
				r, sock := runtime(t)
				holder := plugin(t, "10", "p", func(q *api.RegisterPluginRequest) {
					q.InstanceId, q.Generation, q.Features = "holder", 2, []string{api.FeatureHandover}
				})
				holder.connect(t, sock)
				waitActive(t, r, "10-p")
				f := plugin(t, "10", "p", reg) // opted in: an older generation
				f.dial(t, sock)
				expectRefused(t, f)
				return f
			},
		},
		{
			name: "registration timeout", reason: api.ShutdownReason_SHUTDOWN_REASON_TIMEOUT, legacyOnly: true,
			run: func(t *testing.T, reg func(*api.RegisterPluginRequest)) *fakePlugin {
				withTimeouts(t, 50*time.Millisecond, DefaultPluginRequestTimeout)
				_, sock := runtime(t)
				f := plugin(t, "10", "p", reg)
				f.dial(t, sock)
				return f
			},
		},
		{
			name: "runtime stops during registration", reason: api.ShutdownReason_SHUTDOWN_REASON_RUNTIME_SHUTDOWN, legacyOnly: true,
			run: func(t *testing.T, reg func(*api.RegisterPluginRequest)) *fakePlugin {
				withTimeouts(t, time.Hour, DefaultPluginRequestTimeout)
				r, sock := runtime(t)
				f := plugin(t, "10", "p", reg)
				f.dial(t, sock)
				eventually(t, func() bool { return len(r.reg.tracked()) == 1 }, "the connection accepted")
				r.Stop()
				return f
			},
		},
		{
			name: "configure failed", reason: api.ShutdownReason_SHUTDOWN_REASON_REGISTRATION_REJECTED,
			run: func(t *testing.T, reg func(*api.RegisterPluginRequest)) *fakePlugin {
				_, sock := runtime(t)
				f := plugin(t, "10", "p", reg)
				f.events = 1 << 30 // no such event
				f.connectRefused(t, sock)
				return f
			},
		},
		{
			name: "synchronization failed", reason: api.ShutdownReason_SHUTDOWN_REASON_SYNCHRONIZATION_FAILED,
			run: func(t *testing.T, reg func(*api.RegisterPluginRequest)) *fakePlugin {
				_, sock := runtime(t)
				f := plugin(t, "10", "p", reg)
				f.syncErr = errors.New("cannot sync")
				f.connectRefused(t, sock)
				return f
			},
		},
		{
			name: "runtime stops during synchronization", reason: api.ShutdownReason_SHUTDOWN_REASON_RUNTIME_SHUTDOWN,
			run: func(t *testing.T, reg func(*api.RegisterPluginRequest)) *fakePlugin {
				r, sock := runtime(t)
				f := plugin(t, "10", "p", reg)
				syncing, release := make(chan struct{}), make(chan struct{})
				t.Cleanup(func() { close(release) })
				f.onSync = func(*api.SynchronizeRequest) {
					close(syncing)
					<-release
				}
				f.connect(t, sock)
				receive(t, syncing, "synchronization")
				r.Stop()
				return f
			},
		},
		{
			name: "request timeout", reason: api.ShutdownReason_SHUTDOWN_REASON_TIMEOUT,
			run: func(t *testing.T, reg func(*api.RegisterPluginRequest)) *fakePlugin {
				withTimeouts(t, DefaultPluginRegistrationTimeout, 100*time.Millisecond)
				r, sock := runtime(t)
				f := plugin(t, "10", "p", reg)
				f.handle = hangOn(t, api.Event_RUN_POD_SANDBOX)
				f.connect(t, sock)
				waitActive(t, r, "10-p")
				if err := r.RunPodSandbox(context.Background(), &RunPodSandboxRequest{Pod: &PodSandbox{Id: "pod"}}); err != nil {
					t.Fatalf("RunPodSandbox: %v", err)
				}
				return f
			},
		},
		{
			name: "validation request timeout", reason: api.ShutdownReason_SHUTDOWN_REASON_TIMEOUT,
			run: func(t *testing.T, reg func(*api.RegisterPluginRequest)) *fakePlugin {
				withTimeouts(t, DefaultPluginRegistrationTimeout, 100*time.Millisecond)
				r, sock := runtime(t)
				f := plugin(t, "10", "p", reg)
				f.events = api.MustParseEventMask("ValidateContainerAdjustment")
				f.handle = hangOn(t, api.Event_VALIDATE_CONTAINER_ADJUSTMENT)
				f.connect(t, sock)
				waitActive(t, r, "10-p")
				_, err := r.CreateContainer(context.Background(), &CreateContainerRequest{
					Pod: &PodSandbox{Id: "pod"}, Container: &Container{Id: "ctr", PodSandboxId: "pod"},
				})
				if err == nil {
					t.Fatal("CreateContainer passed a validator that did not answer")
				}
				return f
			},
		},
		{
			name: "runtime stop", reason: api.ShutdownReason_SHUTDOWN_REASON_RUNTIME_SHUTDOWN, optedInOnly: true,
			run: func(t *testing.T, reg func(*api.RegisterPluginRequest)) *fakePlugin {
				r, sock := runtime(t)
				f := plugin(t, "10", "p", reg)
				f.connect(t, sock)
				waitActive(t, r, "10-p")
				r.Stop()
				return f
			},
		},
		{
			name: "superseded by an opted-in instance", reason: api.ShutdownReason_SHUTDOWN_REASON_SUPERSEDED,
			run: func(t *testing.T, reg func(*api.RegisterPluginRequest)) *fakePlugin {
				r, sock := runtime(t)
				f := plugin(t, "10", "p", reg)
				f.connect(t, sock)
				waitActive(t, r, "10-p")
				succ := plugin(t, "10", "p", func(q *api.RegisterPluginRequest) {
					q.InstanceId, q.Generation, q.Features = "successor", 2, []string{api.FeatureHandover}
				})
				succ.connect(t, sock)
				return f
			},
		},
	}

	optIn := func(q *api.RegisterPluginRequest) { q.Features = []string{api.FeatureHandover} }
	for _, c := range causes {
		t.Run(c.name+"/legacy", func(t *testing.T) {
			if c.optedInOnly {
				t.Skip("a plugin that did not opt in is not disconnected")
			}
			f := c.run(t, nil)
			receive(t, f.lost, "the runtime closing the connection")
			select {
			case req := <-f.shutdowns:
				t.Fatalf("a plugin that did not opt in was sent Shutdown(%v, %q); upstream v0.12.5 sends none",
					req.GetReason(), req.GetMessage())
			default:
			}
		})
		if c.legacyOnly {
			continue
		}
		t.Run(c.name+"/opted-in", func(t *testing.T) {
			f := c.run(t, optIn)
			receive(t, f.lost, "the runtime closing the connection")
			select {
			case req := <-f.shutdowns:
				if req.GetReason() != c.reason {
					t.Fatalf("Shutdown reason %v (%q), want %v", req.GetReason(), req.GetMessage(), c.reason)
				}
			default:
				t.Fatalf("an opted-in plugin was disconnected without Shutdown(%v)", c.reason)
			}
		})
	}
}

// A plugin dropped on the event path is told why in the background: the
// request that dropped it, and the requests after it, do not wait for the
// plugin to answer its Shutdown (failure.go sends it outside the
// adaptation's lock, with no wait). Here the notice is never answered until
// the end of the test, and its bound is an hour.
func TestNoticeDoesNotDelayTheEventPath(t *testing.T) {
	saved := shutdownTimeout
	t.Cleanup(func() { shutdownTimeout = saved })
	shutdownTimeout = time.Hour
	withTimeouts(t, DefaultPluginRegistrationTimeout, 100*time.Millisecond)

	r, sock := startRuntime(t, newFakeRuntime())
	t.Cleanup(r.Stop)

	rec := newRecorder()
	other := newFakePlugin("20", "other", rec)
	t.Cleanup(other.close)
	other.connect(t, sock)

	f := newFakePlugin("10", "p", nil)
	f.regReq = func(q *api.RegisterPluginRequest) { q.Features = []string{api.FeatureHandover} }
	f.handle = hangOn(t, api.Event_RUN_POD_SANDBOX)
	noticed, release := make(chan *api.ShutdownRequest, 1), make(chan struct{})
	f.onShutdown = func(req *api.ShutdownRequest) {
		noticed <- req
		<-release
	}
	t.Cleanup(f.close)
	t.Cleanup(func() { close(release) }) // before f.close and r.Stop
	f.connect(t, sock)
	waitActive(t, r, "10-p", "20-other")

	run := func(pod string) <-chan error {
		done := make(chan error, 1)
		go func() {
			done <- r.RunPodSandbox(context.Background(), &RunPodSandboxRequest{Pod: &PodSandbox{Id: pod}})
		}()
		return done
	}
	// pod-1 times out at p, which is dropped: the request returns while p
	// still holds its Shutdown notice.
	if err := receive(t, run("pod-1"), "RunPodSandbox(pod-1) to return while the notice is unanswered"); err != nil {
		t.Fatalf("RunPodSandbox(pod-1): %v", err)
	}
	if req := receive(t, noticed, "the notice"); req.GetReason() != api.ShutdownReason_SHUTDOWN_REASON_TIMEOUT {
		t.Fatalf("notice %v (%q), want TIMEOUT", req.GetReason(), req.GetMessage())
	}
	// The next request does not wait for it either, and reaches the others.
	if err := receive(t, run("pod-2"), "RunPodSandbox(pod-2) to return while the notice is unanswered"); err != nil {
		t.Fatalf("RunPodSandbox(pod-2): %v", err)
	}
	select {
	case <-f.shutdowns:
		t.Fatal("the notice was answered before the test released it")
	default:
	}
	if got := rec.count("20-other:" + api.Event_RUN_POD_SANDBOX.PrettyName()); got != 2 {
		t.Fatalf("the other plugin saw %d RunPodSandbox events, want 2", got)
	}
}
