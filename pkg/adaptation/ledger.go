package adaptation

// The ledger: the adaptation's own record of the runtime's pods and
// containers, so that an instance can be brought up to date, and a peer
// placed in its pod, without asking the runtime outside the sync gate.
//
// The runtime's SyncFn may be called only while no runtime operation is in
// flight (containerd's resets its per-container NRI state from the CRI store:
// a stop in flight is then relayed to no plugin). Every SyncFn call here is
// under the gate (Start, and a join under the gate) and its result seeds the
// ledger; from then on every event relayed updates it, each change numbered
// by the ledger's version. A cursor reads the full state at its position and
// then what changed since: a takeover's successor starts from a snapshot and
// catches up with deltas while its predecessor keeps serving (join.go).
//
// What the ledger cannot see: a change the runtime makes without an event
// (an update from a plugin's UpdateContainers that the runtime applies is
// seen as the next event for the container shows it), and an exit that
// bypasses BlockPluginSync dispatched while SyncFn runs whose effect the
// runtime stores only after SyncFn read its state. Upstream's Synchronize of
// a joining plugin has the same window; the next event for the object
// corrects it.
//
// The ledger is kept while the runtime offers handover (WithPluginHandover,
// on by default): one clone of the event's object per event.

import (
	"strings"
	"sync"

	"google.golang.org/protobuf/proto"

	"github.com/nri-handover/nri/api"
	"github.com/nri-handover/nri/internal/adjust"
)

type ledger struct {
	mu     sync.Mutex
	kept   bool // the runtime offers handover: events are noted
	seeded bool // a SyncFn result was recorded
	ver    uint64
	objs   map[string]*ledgerEntry // live objects, and tombstones while a cursor is open
	open   int                     // open cursors
	// changed lists the keys changed while a cursor is open, in version
	// order, so that a cursor reads what changed since it without scanning
	// every object (a switch's hold reads one at 50 000 containers).
	changed []string
}

// ledgerEntry is the latest state of one pod or container.
type ledgerEntry struct {
	ver     uint64
	pod     *api.PodSandbox
	ctr     *api.Container
	removed bool
}

// cursor reads the ledger from a position: since reports the entries
// changed from next on.
type cursor struct {
	l      *ledger
	next   uint64
	closed bool // guarded by l.mu
}

func (l *ledger) recording() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.kept && l.seeded
}

// seed records the runtime's state as SyncFn reported it. from is the
// version read before SyncFn was called: an object an event changed since
// then keeps what the event said, which is newer.
func (l *ledger) seed(from uint64, pods []*api.PodSandbox, ctrs []*api.Container) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.kept {
		return
	}
	if l.objs == nil {
		l.objs = map[string]*ledgerEntry{}
	}
	seen := make(map[string]bool, len(pods)+len(ctrs))
	// Only what differs is copied: a join under the gate runs this while
	// runtime operations wait.
	set := func(key string, m proto.Message, entry func(old *ledgerEntry) *ledgerEntry) {
		seen[key] = true
		old, ok := l.objs[key]
		if ok && (old.ver > from || !old.removed && sameObject(old.msg(), m)) {
			return
		}
		e := entry(old)
		l.bump(key)
		e.ver = l.ver
		l.objs[key] = e
	}
	for _, p := range pods {
		set("pod/"+p.GetId(), p, func(old *ledgerEntry) *ledgerEntry {
			return &ledgerEntry{pod: clonePodReusing(p, old.getPod())}
		})
	}
	for _, c := range ctrs {
		set("ctr/"+c.GetId(), c, func(old *ledgerEntry) *ledgerEntry {
			return &ledgerEntry{ctr: cloneContainerReusing(c, old.getCtr())}
		})
	}
	for key, e := range l.objs {
		if !seen[key] && !e.removed && e.ver <= from {
			l.remove(key)
		}
	}
	l.seeded = true
}

// version is the ledger's current version, for seed.
func (l *ledger) version() uint64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.ver
}

// getPod and getCtr are the entry's object, if any: what a new copy of it
// may share (cloneContainerReusing).
func (e *ledgerEntry) getPod() *api.PodSandbox {
	if e == nil {
		return nil
	}
	return e.pod
}

func (e *ledgerEntry) getCtr() *api.Container {
	if e == nil {
		return nil
	}
	return e.ctr
}

func (e *ledgerEntry) msg() proto.Message {
	if e.pod != nil {
		return e.pod
	}
	return e.ctr
}

// remove drops an object, leaving a tombstone while a cursor may need it.
// l.mu is held.
func (l *ledger) remove(key string) {
	if l.open == 0 {
		delete(l.objs, key)
		return
	}
	l.bump(key)
	l.objs[key] = &ledgerEntry{ver: l.ver, removed: true}
}

// bump moves the version on for a change of key. l.mu is held.
func (l *ledger) bump(key string) {
	l.ver++
	if l.open > 0 {
		l.changed = append(l.changed, key)
	}
}

// note records what an event implies for its object. For CreateContainer,
// req holds a copy the ledger may keep of the container as the runtime sent
// it (not as merging the replies edited it) and rsp the merged adjustment
// the runtime applies to it; failed tells that the container is not
// created. The caller holds the adaptation's lock.
func (l *ledger) note(event api.Event, req any, rsp *api.CreateContainerResponse, failed bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.kept || !l.seeded || failed && event == api.Event_CREATE_CONTAINER {
		return
	}
	key, e := implied(event, req, rsp, l.objs)
	switch {
	case e == nil:
	case e.removed:
		l.remove(key)
	default:
		l.bump(key)
		e.ver = l.ver
		l.objs[key] = e
	}
}

// implied is the state an event leaves its object in: a container event
// sets the container's state; removals leave a tombstone. The copy shares
// what is unchanged with the object's entry in objs.
func implied(event api.Event, req any, rsp *api.CreateContainerResponse, objs map[string]*ledgerEntry) (string, *ledgerEntry) {
	if r, ok := req.(interface{ GetContainer() *api.Container }); ok && r.GetContainer() != nil {
		c := r.GetContainer()
		key := "ctr/" + c.GetId()
		if event != api.Event_CREATE_CONTAINER { // CreateContainer's is the caller's copy
			c = cloneContainerReusing(c, objs[key].getCtr())
		}
		switch event {
		case api.Event_CREATE_CONTAINER:
			// The container as the runtime reports it once created with
			// the merged adjustment. An adjustment the runtime's generator
			// rejects fails the creation: there is no container.
			if err := adjust.Apply(c, rsp.GetAdjust()); err != nil {
				return "", nil
			}
			c.State = api.ContainerState_CONTAINER_CREATED
		case api.Event_POST_CREATE_CONTAINER:
			c.State = api.ContainerState_CONTAINER_CREATED
		case api.Event_START_CONTAINER, api.Event_POST_START_CONTAINER:
			c.State = api.ContainerState_CONTAINER_RUNNING
		case api.Event_STOP_CONTAINER:
			c.State = api.ContainerState_CONTAINER_STOPPED
		case api.Event_REMOVE_CONTAINER:
			return key, &ledgerEntry{removed: true}
		}
		return key, &ledgerEntry{ctr: c}
	}
	if r, ok := req.(interface{ GetPod() *api.PodSandbox }); ok && r.GetPod() != nil {
		key := "pod/" + r.GetPod().GetId()
		if event == api.Event_REMOVE_POD_SANDBOX {
			return key, &ledgerEntry{removed: true}
		}
		return key, &ledgerEntry{pod: clonePodReusing(r.GetPod(), objs[key].getPod())}
	}
	return "", nil
}

// state returns every pod and container the ledger holds, and ok false if
// it holds nothing yet (never seeded). The objects are shared and must not
// be modified: the ledger replaces entries, never edits them.
func (l *ledger) state() (pods []*api.PodSandbox, ctrs []*api.Container, ok bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.stateLocked()
}

func (l *ledger) stateLocked() (pods []*api.PodSandbox, ctrs []*api.Container, ok bool) {
	if !l.kept || !l.seeded {
		return nil, nil, false
	}
	d := &delta{}
	for _, e := range l.objs {
		switch {
		case e.removed:
		case e.pod != nil:
			d.pods = append(d.pods, e.pod)
		default:
			d.ctrs = append(d.ctrs, e.ctr)
		}
	}
	d.sort()
	return d.pods, d.ctrs, true
}

// snapshot returns the ledger's state and a cursor past it, atomically.
func (l *ledger) snapshot() (pods []*api.PodSandbox, ctrs []*api.Container, c *cursor, ok bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if pods, ctrs, ok = l.stateLocked(); !ok {
		return nil, nil, nil, false
	}
	return pods, ctrs, l.openLocked(), true
}

// openCursor returns a cursor at the ledger's current version.
func (l *ledger) openCursor() *cursor {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.openLocked()
}

func (l *ledger) openLocked() *cursor {
	l.open++
	return &cursor{l: l, next: l.ver + 1}
}

// close releases the cursor; tombstones go with the last one.
func (c *cursor) close() {
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

// since returns what changed from the cursor's position on and moves the
// cursor past it. ok is false once the cursor was closed (its standby went
// away while its reactivation was being prepared).
func (c *cursor) since() (d *delta, ok bool) {
	l := c.l
	l.mu.Lock()
	defer l.mu.Unlock()
	if c.closed {
		return nil, false
	}
	d = &delta{}
	// The keys changed since c.next are the last ver-c.next+1 entries of
	// changed (one per version while a cursor is open, and c is open).
	from := max(0, len(l.changed)-int(l.ver+1-c.next))
	seen := map[string]bool{}
	for _, key := range l.changed[from:] {
		e := l.objs[key]
		if seen[key] || e == nil || e.ver < c.next {
			continue
		}
		seen[key] = true
		id := key[len("ctr/"):]
		isPod := strings.HasPrefix(key, "pod/")
		switch {
		case e.removed && isPod:
			d.removedPods = append(d.removedPods, id)
		case e.removed:
			d.removedCtrs = append(d.removedCtrs, id)
		case isPod:
			d.pods = append(d.pods, e.pod)
		default:
			d.ctrs = append(d.ctrs, e.ctr)
		}
	}
	c.next = l.ver + 1
	d.sort()
	return d, true
}
