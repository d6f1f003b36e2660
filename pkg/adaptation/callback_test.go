package adaptation

import (
	"context"
	"sync"
	"sync/atomic"
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

// The comparison taken when the gate is free is not made while a hold is
// queued (an event waiting for the hold may hold the runtime's lock, which
// SyncFn takes), and its caller does not wait for a SyncFn that blocks: the
// gate stays held until SyncFn returns.
func TestLedgerCheckNeverStallsItsCaller(t *testing.T) {
	release := make(chan struct{})
	var calls atomic.Int32
	var block atomic.Bool
	r, err := New("test-runtime", "v0", func(ctx context.Context, cb SyncCB) error {
		calls.Add(1)
		if block.Load() {
			<-release
		}
		_, err := cb(ctx, nil, nil)
		return err
	}, func(context.Context, []*ContainerUpdate) ([]*ContainerUpdate, error) { return nil, nil }, WithLogger(testLogger()))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Stop()
	r.ledger.Seed(0, nil, nil)

	held := r.hold.enqueue()
	r.checkLedger(context.Background())
	if n := calls.Load(); n != 0 {
		t.Errorf("SyncFn called %d times while a hold was queued", n)
	}
	r.release(held)

	block.Store(true)
	r.checkLedger(context.Background()) // returns while SyncFn blocks
	if n := calls.Load(); n != 1 {
		t.Fatalf("SyncFn called %d times; want 1", n)
	}
	if r.syncGate.TryLock() {
		r.syncGate.Unlock()
		t.Error("the gate was free while SyncFn ran")
	}
	close(release)
	eventually(t, func() bool {
		if r.syncGate.TryLock() {
			r.syncGate.Unlock()
			return true
		}
		return false
	}, "the gate released once SyncFn returned")
}
