package adaptation

// The hold: a pause of event dispatch around a switch.
//
// A switch must happen between two events, and the instance switched to
// must know every event dispatched before it. Waiting for an instant with no
// runtime operation in flight starves on a busy node, and queuing for the
// sync gate keeps every operation out for as long as the longest one in
// flight (a graceful stop). The hold instead pauses the relaying of events,
// gated or not (a container exit too): the holder queues, every event that
// starts after that waits, and once the event in flight (if any) is over the
// holder has the dispatch to itself. It then brings the instance up to date
// from the ledger, tells those involved their roles and switches, each round
// trip bounded by the request timeout and none under the adaptation's lock,
// and releases. The events kept out meanwhile wait for that work alone.
//
// While the hold is queued or held the runtime's own lock may be taken by an
// event that waits for it (containerd takes its NRI mutex before relaying),
// so an UpdateContainers from any plugin is not passed to the runtime then:
// it is deferred to the release (runtime_service.go).

import (
	"context"
	"sync"
)

type hold struct {
	mu       sync.Mutex
	queue    []*holdTicket // holders, in arrival order; the first one holds
	released chan struct{} // closed when the queue empties; nil while empty
	deferred []deferredUpdate
}

// holdTicket is not zero-sized: pointers to zero-sized values need not differ.
type holdTicket struct {
	turn chan struct{} // closed when this ticket holds
}

type deferredUpdate struct {
	p       *plugin
	updates []*ContainerUpdate
}

// enqueue queues a holder without waiting: from now on no event starts
// before the ticket is released.
func (h *hold) enqueue() *holdTicket {
	t := &holdTicket{turn: make(chan struct{})}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.queue = append(h.queue, t)
	if len(h.queue) == 1 {
		close(t.turn)
		h.released = make(chan struct{})
	}
	return t
}

// waiting returns a channel to wait on if the hold is queued or held, nil
// otherwise.
func (h *hold) waiting() <-chan struct{} {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.released
}

// acquire waits for t's turn and then for the event in flight to end, or
// gives up (releasing t) when ctx is done.
func (r *Adaptation) acquire(ctx context.Context, t *holdTicket) error {
	select {
	case <-t.turn:
	case <-ctx.Done():
		r.release(t)
		return ctx.Err()
	}
	r.Lock() // the event in flight, if any, is over; none starts
	r.Unlock()
	return nil
}

// release ends t's hold (or takes it out of the queue) and applies the
// updates deferred meanwhile, once nobody holds.
func (r *Adaptation) release(t *holdTicket) {
	h := &r.hold
	h.mu.Lock()
	for i, q := range h.queue {
		if q != t {
			continue
		}
		h.queue = append(h.queue[:i], h.queue[i+1:]...)
		if i == 0 && len(h.queue) > 0 {
			close(h.queue[0].turn)
		}
		break
	}
	var deferred []deferredUpdate
	if len(h.queue) == 0 && h.released != nil {
		close(h.released)
		h.released = nil
		deferred, h.deferred = h.deferred, nil
	}
	h.mu.Unlock()
	if len(deferred) == 0 || r.ctx.Err() != nil {
		return
	}
	// Not on the caller's goroutine: it may hold the registry's lock, and
	// the runtime's UpdateFn takes the runtime's.
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		for _, d := range deferred {
			r.reg.applyUpdates(r.ctx, d.p, d.updates)
		}
	}()
}

// deferUpdate keeps a plugin's updates for the release if the hold is
// queued or held, and tells whether it did.
func (h *hold) deferUpdate(p *plugin, updates []*ContainerUpdate) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.released == nil {
		return false
	}
	h.deferred = append(h.deferred, deferredUpdate{p: p, updates: updates})
	return true
}

// lockDispatch takes the adaptation's lock for an event once no hold is
// queued or held. A hold is bounded by the request timeouts of its round
// trips; the event gives up only if its own context ends.
func (r *Adaptation) lockDispatch(ctx context.Context) error {
	for {
		c := r.hold.waiting()
		if c == nil {
			r.Lock()
			if r.hold.waiting() == nil {
				return nil
			}
			r.Unlock()
			continue
		}
		select {
		case <-c:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}
