package adaptation

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
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

	held := g.RLock()
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
		b := g.RLock()
		note("reader")
		g.RUnlock(b)
		close(read)
	}()

	g.RUnlock(held)
	receive(t, wrote, "writer")
	receive(t, read, "second reader")
	if want := []string{"writer", "reader"}; !slices.Equal(order, want) {
		t.Fatalf("order %v, want %v", order, want)
	}
}

func TestSyncGateWritersAreFIFO(t *testing.T) {
	g := newSyncGate()
	held := g.RLock()

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
	g.RUnlock(held)
	wg.Wait()
	if want := []int{0, 1, 2, 3, 4}; !slices.Equal(order, want) {
		t.Fatalf("writers got in as %v, want %v", order, want)
	}
}

func TestSyncGateLockAbandonedByContext(t *testing.T) {
	g := newSyncGate()
	held := g.RLock()

	ctx, cancel := context.WithCancel(context.Background())
	errC := make(chan error)
	go func() { errC <- g.Lock(ctx) }()
	eventually(t, func() bool { return g.queued() == 1 }, "writer queued")
	cancel()
	if err := receive(t, errC, "abandoned Lock"); !errors.Is(err, context.Canceled) {
		t.Fatalf("Lock returned %v", err)
	}

	// The abandoned writer must not keep readers out.
	g.RUnlock(g.RLock())
	g.RUnlock(held)
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

// drain waits for the holds taken before it, not for those taken after, and
// keeps nobody out meanwhile (journal.go relies on both).
func TestSyncGateDrainWaitsOnlyForEarlierHolds(t *testing.T) {
	g := newSyncGate()
	early := g.RLock()
	drained := make(chan error, 1)
	go func() { drained <- g.drain(context.Background()) }()
	eventually(t, func() bool { g.mu.Lock(); defer g.mu.Unlock(); return g.cur == 1 }, "drain started")

	late := g.RLock() // not kept out, and not waited for
	select {
	case err := <-drained:
		t.Fatalf("drain returned (%v) while an earlier hold was held", err)
	default:
	}
	g.RUnlock(early)
	if err := receive(t, drained, "drain"); err != nil {
		t.Fatal(err)
	}

	// A second drain waits for the hold taken during the first.
	ctx, cancel := context.WithCancel(context.Background())
	go func() { drained <- g.drain(ctx) }()
	cancel()
	if err := receive(t, drained, "abandoned drain"); !errors.Is(err, context.Canceled) {
		t.Fatalf("drain with a hold of its own epoch returned %v", err)
	}
	g.RUnlock(late)
	if err := g.drain(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// lockIdle waits for the holds in flight without keeping new ones out, and
// takes the gate once nobody holds it; once taken, it is exclusive as Lock's.
func TestSyncGateLockIdleKeepsNobodyOut(t *testing.T) {
	g := newSyncGate()
	long := g.RLock() // a graceful stop
	locked := make(chan error, 1)
	go func() { locked <- g.lockIdle(context.Background()) }()
	eventually(t, func() bool { return g.writersWaiting() == 1 }, "lockIdle waiting")

	g.RUnlock(g.RLock()) // not kept out
	short := g.RLock()   // nor is one that outlives the long one
	g.RUnlock(long)
	select {
	case err := <-locked:
		t.Fatalf("lockIdle returned (%v) while a hold was held", err)
	default:
	}
	g.RUnlock(short)
	if err := receive(t, locked, "lockIdle"); err != nil {
		t.Fatal(err)
	}

	read := make(chan struct{})
	go func() { g.RUnlock(g.RLock()); close(read) }()
	select {
	case <-read:
		t.Fatal("a reader got in while lockIdle held the gate")
	default:
	}
	g.Unlock()
	receive(t, read, "reader after Unlock")

	// It gives way to a queued writer, and gives up with its context.
	held := g.RLock()
	queued := make(chan error, 1)
	go func() {
		err := g.Lock(context.Background())
		if err == nil {
			g.Unlock()
		}
		queued <- err
	}()
	eventually(t, func() bool { return g.queued() == 1 }, "writer queued")
	ctx, cancel := context.WithCancel(context.Background())
	go func() { locked <- g.lockIdle(ctx) }()
	eventually(t, func() bool { return g.writersWaiting() == 2 }, "lockIdle waiting behind the queued writer")
	g.RUnlock(held)
	if err := receive(t, queued, "queued writer"); err != nil {
		t.Fatal(err)
	}
	if err := receive(t, locked, "lockIdle after the queued writer"); err != nil {
		t.Fatal(err)
	}
	g.Unlock()
	held = g.RLock()
	go func() { locked <- g.lockIdle(ctx) }()
	eventually(t, func() bool { return g.writersWaiting() == 1 }, "lockIdle waiting")
	cancel()
	if err := receive(t, locked, "abandoned lockIdle"); !errors.Is(err, context.Canceled) {
		t.Fatalf("abandoned lockIdle returned %v", err)
	}
	g.RUnlock(held)
	if g.writersWaiting() != 0 {
		t.Fatal("an abandoned lockIdle still counts as waiting")
	}
}

// lockIdleUntil keeps nobody out until urgent closes, then queues as Lock
// does: it gets the gate before a reader that came after; with urgent
// already closed it queues at once.
func TestSyncGateLockIdleUntilQueuesOnceUrgent(t *testing.T) {
	g := newSyncGate()
	long := g.RLock()
	urgent := make(chan struct{})
	var (
		mu    sync.Mutex
		order []string
	)
	note := func(s string) { mu.Lock(); order = append(order, s); mu.Unlock() }
	locked := make(chan error, 1)
	go func() {
		err := g.lockIdleUntil(context.Background(), urgent)
		if err == nil {
			note("writer")
			g.Unlock()
		}
		locked <- err
	}()
	eventually(t, func() bool { return g.writersWaiting() == 1 }, "waiting idle")
	g.RUnlock(g.RLock()) // not kept out

	close(urgent)
	eventually(t, func() bool { return g.queued() == 1 }, "queued once urgent")
	read := make(chan struct{})
	go func() { b := g.RLock(); note("reader"); g.RUnlock(b); close(read) }()
	g.RUnlock(long)
	if err := receive(t, locked, "lockIdleUntil"); err != nil {
		t.Fatal(err)
	}
	receive(t, read, "the reader that came after")
	if want := []string{"writer", "reader"}; !slices.Equal(order, want) {
		t.Fatalf("order %v, want %v", order, want)
	}

	held := g.RLock()
	go func() {
		err := g.lockIdleUntil(context.Background(), urgent)
		if err == nil {
			g.Unlock()
		}
		locked <- err
	}()
	eventually(t, func() bool { return g.queued() == 1 }, "queued at once, urgent being closed")
	g.RUnlock(held)
	if err := receive(t, locked, "lockIdleUntil"); err != nil {
		t.Fatal(err)
	}
}
