package adaptation

import (
	"context"
	"slices"
	"sync"
)

// syncGate is a readers-writer lock between runtime operations (readers,
// through BlockPluginSync) and plugin synchronization (the writer). Unlike
// sync.RWMutex, acquiring the write side can be abandoned through a context,
// so that Stop never waits behind a runtime that holds a block. Like
// sync.RWMutex, a waiting writer keeps new readers out so that a stream of
// runtime operations cannot starve plugin registration. Writers get in
// first come, first served, so plugins are synchronized in the order they
// finished registering.
//
// A runtime may hold a read for long: containerd holds BlockPluginSync
// across a whole graceful StopContainer (the pod's grace period). A writer
// queued behind it keeps every other runtime operation out until it ends,
// as upstream's join does. An opted-in instance that synchronized outside the
// gate (handover.go, prepare) waits with drain and lockIdle instead, which
// keep nobody out: the node runs on while it waits, however long, and its
// predecessor serves. With nobody serving, its commit queues after all
// (lockIdleUntil).
type syncGate struct {
	mu      sync.Mutex
	readers int
	writer  bool
	idlers  int // lockIdle callers waiting, for tests and logs
	// held counts read holds in two buckets, so that drain can wait for
	// the holds taken before it without keeping new ones out: new holds go
	// to held[cur].
	held  [2]holdBucket
	cur   int
	queue []*gateTicket // writers waiting to get in, in arrival order
	// changed is closed when the state changes in a way a waiter may be
	// waiting for. It exists only while somebody waits: the runtime takes
	// and releases a read hold for every operation, and must not pay for a
	// channel (or a wake-up) when nobody is waiting.
	changed chan struct{}
}

// holdBucket counts read holds; a hold remembers its bucket.
type holdBucket struct {
	g *syncGate
	n int
}

// gateTicket is not zero-sized: pointers to zero-sized values need not differ.
type gateTicket struct{ _ byte }

func newSyncGate() *syncGate {
	g := &syncGate{}
	g.held[0].g, g.held[1].g = g, g
	return g
}

// waitC returns the channel a waiter waits on; g.mu must be held.
func (g *syncGate) waitC() chan struct{} {
	if g.changed == nil {
		g.changed = make(chan struct{})
	}
	return g.changed
}

// broadcast wakes up all waiters; g.mu must be held.
func (g *syncGate) broadcast() {
	if g.changed != nil {
		close(g.changed)
		g.changed = nil
	}
}

// RLock blocks until no writer holds or waits for the gate, and returns the
// bucket RUnlock must be given.
func (g *syncGate) RLock() *holdBucket {
	g.mu.Lock()
	for g.writer || len(g.queue) > 0 {
		ch := g.waitC()
		g.mu.Unlock()
		<-ch
		g.mu.Lock()
	}
	g.readers++
	b := &g.held[g.cur]
	b.n++
	g.mu.Unlock()
	return b
}

// RUnlock releases a read hold taken in bucket b.
func (g *syncGate) RUnlock(b *holdBucket) {
	g.mu.Lock()
	if g.readers <= 0 || b.n <= 0 {
		g.mu.Unlock()
		panic("nri: RUnlock of unlocked sync gate")
	}
	g.readers--
	b.n--
	if g.readers == 0 || b.n == 0 { // writers wait for no readers, drain for an empty bucket
		g.broadcast()
	}
	g.mu.Unlock()
}

// drain waits until every read hold taken before it was called has been
// released, or gives up when ctx is done. Unlike Lock it keeps nobody out:
// operations that start meanwhile run. A takeover drains before it asks the
// runtime for its state, so that state holds what every operation in flight
// when its journal opened did (journal.go).
func (g *syncGate) drain(ctx context.Context) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	// The other bucket holds what an earlier drain still waits for: wait for
	// it too before new holds go there.
	for g.held[1-g.cur].n > 0 {
		if err := g.waitLocked(ctx); err != nil {
			return err
		}
	}
	old := g.cur
	g.cur = 1 - old
	for g.held[old].n > 0 {
		if err := g.waitLocked(ctx); err != nil {
			return err
		}
	}
	return nil
}

// waitLocked waits for the next change of the gate's state; g.mu is held.
func (g *syncGate) waitLocked(ctx context.Context) error {
	ch := g.waitC()
	g.mu.Unlock()
	defer g.mu.Lock()
	select {
	case <-ch:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// lockIdle takes the gate exclusively at an instant when nobody holds it and
// no writer waits, or gives up when ctx is done. Unlike Lock it never queues,
// so it keeps nobody out while it waits: a reader that comes first gets in
// first. A steady stream of overlapping reads could starve it; its callers
// bound the wait (patience.go).
func (g *syncGate) lockIdle(ctx context.Context) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.idlers++
	defer func() { g.idlers-- }()
	for g.writer || g.readers > 0 || len(g.queue) > 0 {
		if err := g.waitLocked(ctx); err != nil {
			return err
		}
	}
	g.writer = true
	return nil
}

// lockIdleUntil takes the gate as lockIdle does, at an idle instant and
// keeping nobody out, until urgent is closed; from then on it queues for it
// as Lock does, keeping new readers out. Or it gives up when ctx is done.
func (g *syncGate) lockIdleUntil(ctx context.Context, urgent <-chan struct{}) error {
	select {
	case <-urgent:
		return g.Lock(ctx)
	default:
	}
	ictx, cancel := context.WithCancel(ctx)
	defer cancel()
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		select {
		case <-urgent:
			cancel()
		case <-ictx.Done():
		}
	}()
	err := g.lockIdle(ictx)
	cancel()
	<-watched
	if err == nil || ctx.Err() != nil {
		return err
	}
	return g.Lock(ctx) // urgent closed
}

// inFlight counts the read holds, for logs.
func (g *syncGate) inFlight() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.readers
}

// writersWaiting counts the writers waiting to get in, queued or idle.
func (g *syncGate) writersWaiting() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.queue) + g.idlers
}

// Lock takes the gate exclusively, or gives up when ctx is done.
func (g *syncGate) Lock(ctx context.Context) error {
	return g.lockTicket(ctx, g.enqueue())
}

// enqueue reserves a place among the writers without waiting: from now on no
// new reader gets in before this writer. lockTicket then waits for its turn.
func (g *syncGate) enqueue() *gateTicket {
	me := &gateTicket{}
	g.mu.Lock()
	g.queue = append(g.queue, me)
	g.mu.Unlock()
	return me
}

// lockTicket takes the gate exclusively for an enqueued writer, or gives up
// (and leaves the queue) when ctx is done.
func (g *syncGate) lockTicket(ctx context.Context, me *gateTicket) error {
	g.mu.Lock()
	for g.writer || g.readers > 0 || g.queue[0] != me {
		ch := g.waitC()
		g.mu.Unlock()
		select {
		case <-ch:
			g.mu.Lock()
		case <-ctx.Done():
			g.mu.Lock()
			g.queue = slices.DeleteFunc(g.queue, func(t *gateTicket) bool { return t == me })
			g.broadcast()
			g.mu.Unlock()
			return ctx.Err()
		}
	}
	g.queue = g.queue[1:]
	g.writer = true
	g.mu.Unlock()
	return nil
}

// Unlock releases the exclusive hold.
func (g *syncGate) Unlock() {
	g.mu.Lock()
	if !g.writer {
		g.mu.Unlock()
		panic("nri: Unlock of unlocked sync gate")
	}
	g.writer = false
	g.broadcast()
	g.mu.Unlock()
}

// PluginSyncBlock is a runtime's hold on plugin synchronization, returned by
// BlockPluginSync.
type PluginSyncBlock struct {
	b *holdBucket
}

// BlockPluginSync keeps plugins from being synchronized, and thus from
// joining, until Unblock. A runtime holds it across any operation that
// changes the state it reports through SyncFn, so that a joining plugin sees
// either the state before or the state after the operation.
func (r *Adaptation) BlockPluginSync() *PluginSyncBlock {
	return &PluginSyncBlock{b: r.syncGate.RLock()}
}

// Unblock releases the block. It may be called more than once, from one
// goroutine.
func (b *PluginSyncBlock) Unblock() {
	if b != nil && b.b != nil {
		b.b.g.RUnlock(b.b)
		b.b = nil
	}
}
