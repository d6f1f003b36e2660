package ledger

// Cursors: reading the ledger from a position, so that a takeover's
// successor starts from a snapshot and catches up with what changed since.

import (
	"strings"

	"github.com/nri-handover/nri/api"
)

// Cursor reads the ledger from a position: since reports the entries
// changed from next on.
type Cursor struct {
	l      *Ledger
	next   uint64
	epoch  uint64
	closed bool // guarded by l.mu
}

// Snapshot returns the ledger's state and a cursor past it, atomically.
func (l *Ledger) Snapshot() (pods []*api.PodSandbox, ctrs []*api.Container, c *Cursor, ok bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if pods, ctrs, ok = l.stateLocked(); !ok {
		return nil, nil, nil, false
	}
	return pods, ctrs, l.openLocked(), true
}

// OpenCursor returns a cursor at the ledger's current version.
func (l *Ledger) OpenCursor() *Cursor {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.openLocked()
}

func (l *Ledger) openLocked() *Cursor {
	l.open++
	return &Cursor{l: l, next: l.ver + 1, epoch: l.epoch}
}

// Close releases the cursor; tombstones go with the last one.
func (c *Cursor) Close() {
	if c == nil {
		return
	}
	l := c.l
	l.mu.Lock()
	defer l.mu.Unlock()
	if c.closed {
		return
	}
	c.closed = true
	if l.open--; l.open == 0 {
		for _, key := range l.changed {
			if e := l.objs[key]; e != nil && e.removed {
				delete(l.objs, key)
			}
		}
		l.changed = nil
	}
}

// Since returns what changed from the cursor's position on and moves the
// cursor past it. ok is false once the cursor was closed (its standby went
// away while its reactivation was being prepared).
func (c *Cursor) Since() (d *Delta, ok bool) {
	l := c.l
	l.mu.Lock()
	defer l.mu.Unlock()
	if c.closed || c.epoch != l.epoch {
		return nil, false
	}
	d = &Delta{}
	// The keys changed since c.next are the last ver-c.next+1 entries of
	// changed (one per version while a cursor is open, and c is open).
	from := max(0, len(l.changed)-int(l.ver+1-c.next))
	seen := map[string]bool{}
	for _, key := range l.changed[from:] {
		e := l.objs[key]
		if seen[key] || e == nil || e.ver < c.next || !l.settle(key, e) {
			continue
		}
		seen[key] = true
		id := key[len("ctr/"):]
		isPod := strings.HasPrefix(key, "pod/")
		switch {
		case e.removed && isPod:
			d.RemovedPods = append(d.RemovedPods, id)
		case e.removed:
			d.RemovedCtrs = append(d.RemovedCtrs, id)
		case isPod:
			d.Pods = append(d.Pods, e.pod)
		default:
			d.Ctrs = append(d.Ctrs, e.ctr)
		}
	}
	c.next = l.ver + 1
	d.Sort()
	return d, true
}
