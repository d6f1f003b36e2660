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
// A plugin's UpdateContainers passes the holds as an event does (passHolds):
// while a hold is queued or held the runtime's own lock, which UpdateFn
// takes, may be held by an event that waits for it (containerd takes its
// NRI mutex before relaying), and the switch may change who may update. So
// the call waits for the holds queued before it, is checked again, and only
// then reaches UpdateFn, whose answer is the reply, as upstream's is. The one
// exception is the instance a held hold switches to: the holder waits on its
// replies (its round, its ACTIVE notice), which may be what calls, so its
// updates are kept for the release and checked again then.

import (
	"context"
	"slices"
	"sync"
	"time"
)

// hold orders events and holders first come, first served: each takes a
// number on arrival; an event waits only for the holders that came before
// it, and a holder waits for the events that came before it to end. So an
// event waits at most for the holds queued when it arrived, however many
// queue after it.
type hold struct {
	mu       sync.Mutex
	next     uint64
	holders  []*holdTicket // queued or holding, in arrival order (urgent ones first after the one holding)
	events   []uint64      // numbers of the events waiting or in flight, ascending
	flight   []uint64      // those of them past the wait
	holding  bool          // holders[0] holds
	changed  chan struct{} // closed on a change a waiter may wait for; nil if nobody waits
	deferred []deferredUpdate
}

// holdTicket is a holder's place in the queue. An urgent one (a standby's
// reactivation, a candidate's switch once nobody serves) goes before every
// holder not yet holding and keeps out every event not yet in flight: the
// loss it repairs must not let any event pass.
type holdTicket struct {
	id     uint64
	urgent bool
	queued time.Time // events arriving from then on wait for its release
	to     *plugin   // the instance it switches to, once swapped: the holder waits on its replies
}

type deferredUpdate struct {
	p       *plugin
	updates []*ContainerUpdate
}

func (h *hold) waitC() chan struct{} {
	if h.changed == nil {
		h.changed = make(chan struct{})
	}
	return h.changed
}

func (h *hold) broadcast() {
	if h.changed != nil {
		close(h.changed)
		h.changed = nil
	}
}

// wait waits for the next change, or ctx; h.mu is held.
func (h *hold) wait(ctx context.Context) error {
	ch := h.waitC()
	h.mu.Unlock()
	defer h.mu.Lock()
	select {
	case <-ch:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// enqueue queues a holder without waiting: from now on no event that
// arrives starts before the ticket is released.
func (h *hold) enqueue() *holdTicket {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.next++
	t := &holdTicket{id: h.next, queued: time.Now()}
	h.holders = append(h.holders, t)
	return t
}

// enqueueUrgent queues an urgent holder: after the one holding, if any, and
// the urgent ones before it.
func (h *hold) enqueueUrgent() *holdTicket {
	if bugNonUrgentHolds {
		return h.enqueue()
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.next++
	t := &holdTicket{id: h.next, queued: time.Now()}
	h.queueUrgent(t)
	return t
}

// urge makes a queued or holding t urgent (its candidate's predecessor was
// just lost).
func (h *hold) urge(t *holdTicket) {
	h.mu.Lock()
	defer h.mu.Unlock()
	i := slices.Index(h.holders, t)
	switch {
	case i < 0 || t.urgent:
	case i == 0 && h.holding:
		t.urgent = true
	default:
		h.holders = slices.Delete(h.holders, i, i+1)
		h.queueUrgent(t)
	}
}

// queueUrgent puts t, made urgent, after the holder holding, if any, and the
// urgent ones queued before it; h.mu is held.
func (h *hold) queueUrgent(t *holdTicket) {
	t.urgent = true
	i := 0
	if len(h.holders) > 0 && h.holding {
		i = 1
	}
	for i < len(h.holders) && h.holders[i].urgent {
		i++
	}
	h.holders = slices.Insert(h.holders, i, t)
	h.broadcast()
}

// blocks tells whether a holder keeps event n out; h.mu is held.
func (h *hold) blocks(n uint64) bool {
	return slices.ContainsFunc(h.holders, func(t *holdTicket) bool { return t.id < n || t.urgent })
}

// clear tells whether t may hold: it is first, and the events it must not
// overtake are over; h.mu is held.
func (h *hold) clear(t *holdTicket) bool {
	if h.holders[0] != t {
		return false
	}
	if t.urgent {
		return len(h.flight) == 0
	}
	return len(h.events) == 0 || h.events[0] > t.id
}

// acquire waits until t is the first holder and the events that arrived
// before it have ended, or gives up (releasing t) when ctx is done.
func (r *Adaptation) acquire(ctx context.Context, t *holdTicket) error {
	h := &r.hold
	h.mu.Lock()
	for !h.clear(t) {
		if err := h.wait(ctx); err != nil {
			h.mu.Unlock()
			r.release(t)
			return err
		}
	}
	h.holding = true
	h.mu.Unlock()
	return nil
}

// switchesTo records that the held t switched to p, whose requests the
// holder now waits on.
func (h *hold) switchesTo(t *holdTicket, p *plugin) {
	h.mu.Lock()
	defer h.mu.Unlock()
	t.to = p
	h.broadcast()
}

// release ends t's hold (or takes it out of the queue) and applies the
// updates deferred meanwhile, once nobody holds.
func (r *Adaptation) release(t *holdTicket) {
	h := &r.hold
	h.mu.Lock()
	if len(h.holders) > 0 && h.holders[0] == t {
		h.holding = false
	}
	h.holders = slices.DeleteFunc(h.holders, func(q *holdTicket) bool { return q == t })
	h.broadcast()
	var deferred []deferredUpdate
	if len(h.holders) == 0 {
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
			r.applyDeferred(d)
		}
	}()
}

// idle tells whether no holder is queued or holding.
func (h *hold) idle() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.holders) == 0
}

// applyDeferred applies updates kept for a release if their plugin may
// still update: the switch they were kept across may have superseded it.
func (r *Adaptation) applyDeferred(d deferredUpdate) {
	if err := r.reg.mayUpdate(d.p); err != nil && !bugUpdatesDeferred {
		r.log.Warnf(r.ctx, "dropping %d container updates requested during a plugin switch: %v", len(d.updates), err)
		return
	}
	failed, err := r.updateContainers(r.ctx, d.updates)
	if err != nil || len(failed) > 0 {
		r.log.Warnf(r.ctx, "runtime failed to apply %d of %d updates plugin %s requested during its switch: %v",
			len(failed), len(d.updates), d.p.name(), err)
	}
}

// passHolds lets a plugin's UpdateContainers pass the holds: it waits, as an
// event does, for the holds queued before it and any urgent one, without
// keeping a holder waiting for it, bounded by the request timeout and by
// Stop. The instance a held hold switches to cannot wait for the release it
// holds up: its updates are kept for the release instead (deferred).
func (r *Adaptation) passHolds(ctx context.Context, p *plugin, updates []*ContainerUpdate) (deferred bool, err error) {
	ctx, cancel := context.WithTimeout(ctx, getRequestTimeout())
	defer cancel()
	if r.ctx != nil {
		defer context.AfterFunc(r.ctx, cancel)()
	}
	h := &r.hold
	h.mu.Lock()
	defer h.mu.Unlock()
	h.next++
	n := h.next
	for h.blocks(n) {
		if p.inEvent.Load() > 0 {
			// Most likely called from its handler of an event the
			// holds wait for: waiting would stall that event until the
			// request timeout, and the plugin with it. It is the event's
			// receiver, so no switch has taken its place yet: as
			// upstream, UpdateFn now.
			return false, nil
		}
		if bugUpdatesDeferred || h.holding && h.holders[0].to == p {
			h.deferred = append(h.deferred, deferredUpdate{p: p, updates: updates})
			return true, nil
		}
		r.trace(ctx, pointUpdateWait, nil)
		if err := h.wait(ctx); err != nil {
			if r.stopping() {
				return false, errStopped
			}
			return false, err
		}
	}
	return false, nil
}

// lockDispatch takes the adaptation's lock for an event once the holds that
// came before it are over; unlockDispatch(n) ends the event. A hold is
// bounded by the request timeouts of its round trips; the event gives up
// only if its own context ends.
func (r *Adaptation) lockDispatch(ctx context.Context) (uint64, error) {
	h := &r.hold
	h.mu.Lock()
	h.next++
	n := h.next
	h.events = append(h.events, n)
	for !bugEventsIgnoreHold && h.blocks(n) {
		r.trace(ctx, pointHoldWait, nil)
		if err := h.wait(ctx); err != nil {
			h.done(n)
			h.mu.Unlock()
			return 0, err
		}
	}
	h.flight = append(h.flight, n)
	h.mu.Unlock()
	r.Lock()
	return n, nil
}

func (r *Adaptation) unlockDispatch(n uint64) {
	r.Unlock()
	h := &r.hold
	h.mu.Lock()
	h.done(n)
	h.mu.Unlock()
}

// done forgets event n; h.mu is held.
func (h *hold) done(n uint64) {
	if i := slices.Index(h.events, n); i >= 0 {
		h.events = slices.Delete(h.events, i, i+1)
	}
	if i := slices.Index(h.flight, n); i >= 0 {
		h.flight = slices.Delete(h.flight, i, i+1)
	}
	if len(h.holders) > 0 {
		h.broadcast()
	}
}
