package adaptation

// The journal: what events changed while an instance is being brought up to
// date, so that the part of a takeover that runs while runtime operations
// wait costs what changed, not what the node holds.
//
// An instance that takes over is synchronized from SyncFn while its
// predecessor keeps serving (phase 1). Everything the runtime does meanwhile
// passes through the adaptation as events, each carrying its pod or
// container, and each numbered by r.dispatched. The journal keeps, per pod
// and container, the state the latest of those events implies; a cursor
// reads what changed after its position. Nothing is kept while no cursor is
// open: the event path then only loads one atomic counter.
//
// What the journal cannot see: a change the runtime makes without an event,
// and an event that bypasses BlockPluginSync (a container exit) dispatched
// before a cursor opened whose effect the runtime stores only after SyncFn
// read its state. Upstream's Synchronize of a joining plugin has the same
// window; the next event for the object corrects it.

import (
	"strings"
	"sync"
	"sync/atomic"

	"google.golang.org/protobuf/proto"

	"github.com/nri-handover/nri/api"
	"github.com/nri-handover/nri/internal/adjust"
)

// maxJournal bounds the objects a journal keeps. A cursor that would need
// more (a standby kept for long on a busy node) overflows, and its instance
// is synchronized in full instead.
const maxJournal = 1 << 16

type journal struct {
	// open counts open cursors; the event path reads it without the lock.
	open atomic.Int32

	mu      sync.Mutex
	last    uint64 // the sequence number of the latest event noted
	objs    map[string]*journalEntry
	overrun uint64 // entries were dropped at or before this sequence number
}

// journalEntry is the latest state events imply for one pod or container.
type journalEntry struct {
	seq     uint64
	pod     *api.PodSandbox
	ctr     *api.Container
	removed bool
}

// cursor reads a journal from a position: its reader knows every event up to
// known, and since reports entries from next on. Opened while an event is
// being dispatched, a cursor counts that event as known but reports it too
// if it was noted before the read.
type cursor struct {
	j           *journal
	next, known uint64
	closed      bool // guarded by j.mu
}

// openCursor starts recording, if nobody did, and returns a cursor at the
// event being dispatched, if any, or the next one: seq is r.dispatched read
// after the cursor opened.
func (j *journal) openCursor(seq func() uint64) *cursor {
	j.open.Add(1)
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.objs == nil {
		j.objs = map[string]*journalEntry{}
	}
	d := seq()
	return &cursor{j: j, next: d, known: d}
}

// close releases the cursor; the journal's contents go with the last one.
// A standby's cursor may be closed (the standby went away) while its
// reactivation reads it: the read then fails as an overrun would.
func (c *cursor) close() {
	if c == nil {
		return
	}
	j := c.j
	j.mu.Lock()
	defer j.mu.Unlock()
	if c.closed {
		return
	}
	c.closed = true
	if j.open.Add(-1) == 0 {
		j.objs, j.overrun = nil, 0
	}
}

// recording tells whether a cursor is open, so events are noted.
func (j *journal) recording() bool { return j.open.Load() > 0 }

// note records what event seq, with request req, implies, if a cursor is
// open. For CreateContainer, req holds the container as the runtime sent it
// (not as merging the replies edited it) and rsp the merged adjustment the
// runtime applies to it; failed tells that there is nothing to note (only
// for CreateContainer: the runtime does not create the container, or the
// creation began with no cursor open and the reader gets the container from
// SyncFn, see Adaptation.CreateContainer). The caller holds the
// adaptation's lock.
func (j *journal) note(seq uint64, event api.Event, req any, rsp *api.CreateContainerResponse, failed bool) {
	if j.open.Load() == 0 {
		return
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.objs == nil { // the last cursor closed meanwhile
		return
	}
	j.last = seq
	if failed && event == api.Event_CREATE_CONTAINER {
		return
	}
	key, e := implied(event, req, rsp)
	if e == nil {
		return
	}
	e.seq = seq
	if _, ok := j.objs[key]; !ok && len(j.objs) >= maxJournal {
		j.overrun = seq
		return
	}
	j.objs[key] = e
}

// implied is the state an event leaves its object in: a container event
// sets the container's state; removals leave a tombstone.
func implied(event api.Event, req any, rsp *api.CreateContainerResponse) (string, *journalEntry) {
	if r, ok := req.(interface{ GetContainer() *api.Container }); ok && r.GetContainer() != nil {
		c := proto.Clone(r.GetContainer()).(*api.Container)
		key := "ctr/" + c.GetId()
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
			return key, &journalEntry{removed: true}
		}
		return key, &journalEntry{ctr: c}
	}
	if r, ok := req.(interface{ GetPod() *api.PodSandbox }); ok && r.GetPod() != nil {
		key := "pod/" + r.GetPod().GetId()
		if event == api.Event_REMOVE_POD_SANDBOX {
			return key, &journalEntry{removed: true}
		}
		return key, &journalEntry{pod: proto.Clone(r.GetPod()).(*api.PodSandbox)}
	}
	return "", nil
}

// since returns what changed from the cursor's position on and moves the
// cursor past the latest event noted. ok is false if the journal dropped
// entries the cursor needs: its reader must be synchronized in full.
func (c *cursor) since() (d *delta, ok bool) {
	j := c.j
	j.mu.Lock()
	defer j.mu.Unlock()
	if c.closed || j.overrun > 0 && j.overrun >= c.next { // sequence numbers start at 1
		return nil, false
	}
	d = &delta{}
	for key, e := range j.objs {
		if e.seq < c.next {
			continue
		}
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
	if j.last >= c.next {
		c.next, c.known = j.last+1, j.last
	}
	d.sort()
	return d, true
}

// knows tells whether the cursor's reader has been told about every event
// dispatched so far (seq is r.dispatched). The caller holds the adaptation's
// lock, so no event is in flight.
func (c *cursor) knows(seq uint64) bool {
	return seq <= c.known
}
