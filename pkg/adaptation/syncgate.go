package adaptation

import (
	"context"
	"slices"
	"sync"
)

// syncGate is a readers-writer lock between runtime operations (readers,
// through BlockPluginSync) and the calls of the runtime's SyncFn (the
// writer), as upstream's sync lock is. Unlike sync.RWMutex, acquiring the
// write side can be abandoned through a context, so that Stop never waits
// behind a runtime that holds a block. Like sync.RWMutex, a waiting writer
// keeps new readers out so that a stream of runtime operations cannot starve
// a join. Writers get in first come, first served, so plugins are
// synchronized in the order they finished registering.
//
// Only a join under the gate (joining.underGate) and Start wait for the write side;
// a comparison of the ledger with SyncFn takes it only if that needs no
// wait (TryLock, checkLedger): a takeover from the ledger never waits for
// the runtime's operations.
type syncGate struct {
	mu      sync.Mutex
	readers int
	writer  bool
	queue   []*gateTicket // writers waiting to get in, in arrival order
	// changed is closed when the state changes in a way a waiter may be
	// waiting for. It exists only while somebody waits: the runtime takes
	// and releases a read hold for every operation, and must not pay for a
	// channel (or a wake-up) when nobody is waiting.
	changed chan struct{}
	// onWait, if set, is called (g.mu held) when a runtime operation is
	// about to wait for the gate: the exploration's probe.
	onWait func()
}

// gateTicket is not zero-sized: pointers to zero-sized values need not differ.
type gateTicket struct{ _ byte }

func newSyncGate() *syncGate { return &syncGate{} }

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

// RLock blocks until no writer holds or waits for the gate.
func (g *syncGate) RLock() {
	g.mu.Lock()
	for g.writer || len(g.queue) > 0 {
		if g.onWait != nil {
			g.onWait()
		}
		ch := g.waitC()
		g.mu.Unlock()
		<-ch
		g.mu.Lock()
	}
	g.readers++
	g.mu.Unlock()
}

// RUnlock releases a read hold.
func (g *syncGate) RUnlock() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.readers <= 0 {
		panic("nri: RUnlock of unlocked sync gate")
	}
	if g.readers--; g.readers == 0 {
		g.broadcast()
	}
}

// inFlight counts the read holds, for logs and tests.
func (g *syncGate) inFlight() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.readers
}

// exclusive tells whether a writer holds the gate, for checks that SyncFn
// runs only under it.
func (g *syncGate) exclusive() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.writer && g.readers == 0
}

// Lock takes the gate exclusively, or gives up when ctx is done.
func (g *syncGate) Lock(ctx context.Context) error {
	me := &gateTicket{}
	g.mu.Lock()
	g.queue = append(g.queue, me)
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

// TryLock takes the gate exclusively if that needs no wait: no runtime
// operation holds it and no writer holds or waits for it.
func (g *syncGate) TryLock() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.writer || g.readers > 0 || len(g.queue) > 0 {
		return false
	}
	g.writer = true
	return true
}

// Unlock releases the exclusive hold.
func (g *syncGate) Unlock() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.writer {
		panic("nri: Unlock of unlocked sync gate")
	}
	g.writer = false
	g.broadcast()
}

// PluginSyncBlock is a runtime's hold on plugin synchronization, returned by
// BlockPluginSync.
type PluginSyncBlock struct {
	g *syncGate
}

// BlockPluginSync keeps plugins from being synchronized, and thus from
// joining, until Unblock. A runtime holds it across any operation that
// changes the state it reports through SyncFn, so that a joining plugin sees
// either the state before or the state after the operation.
func (r *Adaptation) BlockPluginSync() *PluginSyncBlock {
	r.syncGate.RLock()
	return &PluginSyncBlock{g: r.syncGate}
}

// Unblock releases the block. It may be called more than once, from one
// goroutine.
func (b *PluginSyncBlock) Unblock() {
	if b != nil && b.g != nil {
		b.g.RUnlock()
		b.g = nil
	}
}
