package adaptation

import (
	"context"
	"sync"
	"testing"

	"github.com/nri-handover/nri/api"
)

// lockingRuntime has containerd's locking shape: one mutex that the runtime
// holds around Stop and takes in its SyncFn (if lockSync) and its UpdateFn.
type lockingRuntime struct {
	*fakeRuntime
	mu       sync.Mutex
	lockSync bool
	entered  chan string // "sync" or "update", when a callback is called
}

func newLockingRuntime(lockSync bool) *lockingRuntime {
	return &lockingRuntime{fakeRuntime: newFakeRuntime(), lockSync: lockSync, entered: make(chan string, 16)}
}

func (rt *lockingRuntime) sync(ctx context.Context, cb SyncCB) error {
	rt.entered <- "sync"
	if rt.lockSync {
		rt.mu.Lock()
		defer rt.mu.Unlock()
	}
	return rt.fakeRuntime.sync(ctx, cb)
}

func (rt *lockingRuntime) update(ctx context.Context, u []*api.ContainerUpdate) ([]*api.ContainerUpdate, error) {
	rt.entered <- "update"
	rt.mu.Lock()
	defer rt.mu.Unlock()
	return rt.fakeRuntime.update(ctx, u)
}

// stopLocked stops r holding the runtime's mutex, as containerd does, and
// reports when Stop returned.
func (rt *lockingRuntime) stopLocked(r *Adaptation) <-chan struct{} {
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		defer rt.mu.Unlock()
		r.Stop()
	}()
	return stopped
}

func startLockingRuntime(t *testing.T, rt *lockingRuntime) (*Adaptation, string) {
	t.Helper()
	sock := shortSocket(t)
	r, err := New("test-runtime", "v0.0.1", rt.sync, rt.update,
		WithLogger(testLogger()), WithSocketPath(sock), WithPluginPath(t.TempDir()), WithPluginConfigPath(t.TempDir()))
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Start(); err != nil {
		t.Fatal(err)
	}
	return r, sock
}

// A plugin joins while the runtime stops holding its lock: the join's SyncFn
// waits for that lock, and Stop must not wait for the join.
func TestStopDoesNotWaitForSyncFnBlockedOnRuntimeLock(t *testing.T) {
	rt := newLockingRuntime(true)
	r, sock := startLockingRuntime(t, rt)
	rt.mu.Lock()

	f := newFakePlugin("10", "joining", nil)
	f.connect(t, sock)
	defer f.close()
	if got := receive(t, rt.entered, "SyncFn called"); got != "sync" {
		t.Fatalf("runtime called %s first", got)
	}
	receive(t, rt.stopLocked(r), "Stop to return")

	receive(t, f.lost, "the plugin disconnected")
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.syncs) != 0 {
		t.Fatalf("plugin synchronized after Stop: %v", f.syncs)
	}
}

// The updates a plugin asks for in its synchronization reach the runtime's
// UpdateFn after the commit; Stop must not wait for them either.
func TestStopDoesNotWaitForUpdateFnBlockedOnRuntimeLock(t *testing.T) {
	rt := newLockingRuntime(false)
	r, sock := startLockingRuntime(t, rt)
	rt.mu.Lock()

	f := newFakePlugin("10", "updater", nil)
	f.syncUpdates = []*api.ContainerUpdate{{ContainerId: "c1"}}
	f.connect(t, sock)
	defer f.close()
	for got := ""; got != "update"; {
		got = receive(t, rt.entered, "UpdateFn called")
	}
	receive(t, rt.stopLocked(r), "Stop to return")
	// The plugin was committed before Stop and did not opt into handover:
	// Stop leaves it connected, as upstream does (keptOnStop).
	if _, err := f.runtime.UpdateContainers(context.Background(), &api.UpdateContainersRequest{}); err != nil {
		t.Fatalf("plugin's connection after Stop: %v", err)
	}
}
