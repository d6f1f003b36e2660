package adaptation

import (
	"context"
	"errors"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func (g *syncGate) queued() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.queue)
}

func TestSyncGateWriterWaitsForReadersAndBlocksNewOnes(t *testing.T) {
	g := newSyncGate()
	var (
		mu    sync.Mutex
		order []string
	)
	note := func(s string) { mu.Lock(); order = append(order, s); mu.Unlock() }

	g.RLock()
	wrote := make(chan struct{})
	go func() {
		if err := g.Lock(context.Background()); err != nil {
			t.Error(err)
		}
		note("writer")
		g.Unlock()
		close(wrote)
	}()
	eventually(t, func() bool { return g.queued() == 1 }, "writer queued")

	read := make(chan struct{})
	go func() {
		g.RLock()
		note("reader")
		g.RUnlock()
		close(read)
	}()

	g.RUnlock()
	receive(t, wrote, "writer")
	receive(t, read, "second reader")
	if want := []string{"writer", "reader"}; !slices.Equal(order, want) {
		t.Fatalf("order %v, want %v", order, want)
	}
}

func TestSyncGateWritersAreFIFO(t *testing.T) {
	g := newSyncGate()
	g.RLock()

	var (
		mu    sync.Mutex
		order []int
		wg    sync.WaitGroup
	)
	for i := range 5 {
		spawn(&wg, func() {
			if err := g.Lock(context.Background()); err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			order = append(order, i)
			mu.Unlock()
			g.Unlock()
		})
		eventually(t, func() bool { return g.queued() == i+1 }, "writer queued")
	}
	g.RUnlock()
	wg.Wait()
	if want := []int{0, 1, 2, 3, 4}; !slices.Equal(order, want) {
		t.Fatalf("writers got in as %v, want %v", order, want)
	}
}

func TestSyncGateLockAbandonedByContext(t *testing.T) {
	g := newSyncGate()
	g.RLock()

	ctx, cancel := context.WithCancel(context.Background())
	errC := make(chan error)
	go func() { errC <- g.Lock(ctx) }()
	eventually(t, func() bool { return g.queued() == 1 }, "writer queued")
	cancel()
	if err := receive(t, errC, "abandoned Lock"); !errors.Is(err, context.Canceled) {
		t.Fatalf("Lock returned %v", err)
	}

	// The abandoned writer must not keep readers out.
	g.RLock()
	g.RUnlock()
	g.RUnlock()
	if err := g.Lock(context.Background()); err != nil {
		t.Fatal(err)
	}
	g.Unlock()
}

func TestPluginSyncBlockUnblockIsIdempotent(t *testing.T) {
	r := &Adaptation{syncGate: newSyncGate()}
	b := r.BlockPluginSync()
	b.Unblock()
	b.Unblock()
	var nilBlock *PluginSyncBlock
	nilBlock.Unblock()
	if err := r.syncGate.Lock(context.Background()); err != nil {
		t.Fatal(err)
	}
	r.syncGate.Unlock()
}

// A runtime operation's hold costs what upstream's does: the block itself,
// no channel and no wake-up when nobody waits.
func TestBlockPluginSyncAllocatesOnlyTheBlock(t *testing.T) {
	r := &Adaptation{syncGate: newSyncGate()}
	if n := testing.AllocsPerRun(100, func() { r.BlockPluginSync().Unblock() }); n > 1 {
		t.Fatalf("BlockPluginSync+Unblock allocates %v times, want at most 1", n)
	}
}

func BenchmarkBlockPluginSync(b *testing.B) {
	r := &Adaptation{syncGate: newSyncGate()}
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		r.BlockPluginSync().Unblock()
	}
}

// Issue 30 finding 5: SyncFn is called only while no runtime operation holds
// BlockPluginSync (under the gate), on every path: Start, a fresh join, a
// takeover with and without delta rounds, identity placement, a standby's
// reactivation. Takeovers call it not at all.
func TestSyncFnOnlyUnderTheGate(t *testing.T) {
	rt := newFakeRuntime()
	var r *Adaptation
	var calls, outside atomic.Int32
	sync := func(ctx context.Context, cb SyncCB) error {
		calls.Add(1)
		if r.syncGate.inFlight() != 0 || !r.syncGate.exclusive() {
			outside.Add(1)
		}
		return rt.sync(ctx, cb)
	}
	sock := shortSocket(t)
	var err error
	r, err = New("test-runtime", "v0", sync, rt.update, WithLogger(testLogger()), WithSocketPath(sock),
		WithPluginPath(t.TempDir()), WithPluginConfigPath(t.TempDir()), WithStandbyGrace(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Start(); err != nil {
		t.Fatal(err)
	}
	defer r.Stop()
	if calls.Load() != 1 {
		t.Fatalf("Start called SyncFn %d times, want once (as upstream)", calls.Load())
	}
	relayedRemoval(t, r)
	a := handoverPlugin("10", "p", "a", 1, nil)
	a.connect(t, sock)
	defer a.close()
	waitOnlyActive(t, r, "a", "a active")

	op := r.BlockPluginSync() // an operation in flight during every takeover
	b := handoverPlugin("10", "p", "b", 2, nil)
	b.connect(t, sock)
	defer b.close()
	waitOnlyActive(t, r, "b", "b active")
	b.close() // a, the standby, is reactivated
	waitOnlyActive(t, r, "a", "a reactivated")
	c := optedInWithout("10", "p", "c", 3, nil)
	c.connect(t, sock)
	defer c.close()
	waitOnlyActive(t, r, "c", "c active")
	op.Unblock()

	if n := outside.Load(); n != 0 {
		t.Fatalf("SyncFn called %d times while an operation held BlockPluginSync", n)
	}
	if n := calls.Load(); n != 2 {
		t.Fatalf("SyncFn called %d times, want 2 (Start, a's fresh join): takeovers and reactivations use the ledger", n)
	}
}
