// Package ledger is the adaptation's own record of the runtime's pods and
// containers, so that an instance can be brought up to date, and a peer
// placed in its pod, without asking the runtime outside the sync gate.
//
// The runtime's SyncFn may be called only while no runtime operation is in
// flight (containerd's resets its per-container NRI state from the CRI store:
// a stop in flight is then relayed to no plugin). Every SyncFn call here is
// under the gate (Start, a join under the gate, and a check taken when the
// gate is free at once); its result is first compared with the ledger and
// then seeds it. From then on every event relayed updates it, each change
// numbered by the ledger's version, and so does every change the adaptation
// hands the runtime: a plugin's UpdateContainers (minus what UpdateFn
// reported failed), the updates merged into the replies of CreateContainer,
// UpdateContainer and StopContainer, and the updates a Synchronize reply
// asks for. A relayed removal stays removed: container ids are never reused,
// and a runtime may list a container whose removal it already relayed
// (CRI-O relays RemoveContainer before it removes the container from its
// stores, and takes no gate). A cursor reads the full state at its position
// and then what changed since: a takeover's successor starts from a snapshot
// and catches up with deltas while its predecessor keeps serving.
//
// What the ledger cannot see is what a runtime changes without relaying it
// (moby relays only creation; an exit that bypasses BlockPluginSync may be
// stored after SyncFn read its state). The comparisons find it: the ledger
// is used for a takeover only while the last one found no difference and
// once the runtime relayed a container's life past its creation (usable), and otherwise a takeover
// joins under the gate, as upstream's join does. hack/model/ledger.pml
// holds these rules against containerd's, CRI-O's and moby's orders.
//
// The ledger knows no plugin: the adaptation notes events and seeds it
// (Note, Seed), and reads it (Listing, Snapshot, State, OpenCursor). It is
// kept while the runtime offers handover (Kept: WithPluginHandover, on by
// default): one clone of the event's object per event; a creation's
// merged adjustment is applied to its clone when first read (settle).

package ledger

import (
	"slices"
	"sync"

	"google.golang.org/protobuf/proto"

	"github.com/nri-handover/nri/api"
	"github.com/nri-handover/nri/internal/adjust"
)

// Ledger holds, per pod and container, its own copy of the object as the
// runtime last showed it (ledgerEntry), whole: a comparison with SyncFn
// counts any field that differs, and a takeover's Synchronize hands plugins
// whole objects. Copies, not the runtime's objects: those share maps with
// the runtime's stores (containerd's labels and annotations), merging edits
// a creation's in place, and a runtime may change what it relayed later.
// Copies share equal parts with the entry's previous copy (objects.go).
type Ledger struct {
	mu     sync.Mutex
	Kept   bool // the runtime offers handover: events are noted
	seeded bool // a SyncFn result was recorded
	ver    uint64
	objs   map[string]*ledgerEntry // live objects, and tombstones while a cursor is open
	open   int                     // open cursors
	// changed lists the keys changed while a cursor is open, in version
	// order, so that a cursor reads what changed since it without scanning
	// every object (a switch's hold reads one at 50 000 containers).
	changed []string

	// gone holds the keys of objects whose removal was relayed, oldest
	// first in goneOrder, so that a listing the runtime made before it
	// removed them from its stores does not bring them back. A key is
	// forgotten once a listing no longer shows it, and the oldest beyond
	// maxGone are (a runtime lags by one operation, not by thousands).
	gone      map[string]bool
	goneOrder []string

	// trusted: the last comparison with SyncFn found no difference, and no
	// change handed to the runtime since has an unknown outcome (usable).
	trusted bool
	// relaysLife: the runtime relayed a container's life past its
	// creation (a start, a stop, a removal). Until it does, a comparison
	// that found no difference proves nothing about removals (moby relays
	// creation only), so the ledger is not used (usable).
	relaysLife bool
	// updating counts, per container key, the UpdateFn calls in flight: the
	// runtime may have applied one that the ledger notes only once UpdateFn
	// returns, so a comparison meanwhile does not count the container.
	updating map[string]int
	// bound is how many objects the ledger may hold before it is no longer
	// trusted, or, untrusted, dropped until the next seed (note).
	bound int
	// epoch counts the drops: a cursor opened before one reads as closed.
	epoch uint64
	// seeds numbers the seeds, for the entries a listing showed.
	seeds uint64
	// kb is note's scratch for an object's key.
	kb []byte
}

const (
	// maxGone bounds the relayed removals remembered between listings.
	maxGone = 4096
	// minLedgerBound is the slack the ledger may grow by beyond twice what
	// the last listing held.
	minLedgerBound = 1024
	// maxSample bounds the differing entries a comparison names.
	maxSample = 5
)

// ledgerEntry is the latest state of one pod or container.
type ledgerEntry struct {
	ver     uint64
	pod     *api.PodSandbox
	ctr     *api.Container
	removed bool
	// listed: a SyncFn listing showed the object. One relayed but not
	// listed yet may be a creation the runtime stores after relaying it
	// (CRI-O); missed counts the listings without it since, and the second
	// one drops it (the creation failed after it was relayed).
	listed bool
	missed uint8
	seen   uint64 // the last seed whose listing showed it (ledger.seeds)
	// podStopped: the pod's StopPodSandbox was relayed. A runtime goes on
	// changing a stopped object without relaying it (containerd tears the
	// pod's network namespace down after relaying its stop, its pid is gone,
	// and its listing leaves exited containers out): a comparison takes the
	// listing for it, and does not count it.
	podStopped bool
	// created, while not nil, is the merged adjustment of the container's
	// creation, not applied to ctr (the container as sent) yet: the
	// runtime's generator (adjust.Apply) costs more than the rest of the
	// event, and the start that follows a creation replaces the entry
	// first. settle applies it when the entry is read. It is the reply the
	// runtime was handed, which a runtime reads and does not modify; a
	// comparison with SyncFn would find the entry different if one did.
	created *api.ContainerAdjustment
}

// settle applies the entry's pending creation (created), before anything
// reads its container. It reports false if the runtime's generator rejects
// the adjustment: the creation failed, there is no container, and the entry
// is dropped, as if never noted (a cursor skips a key it does not find).
// l.mu is held.
func (l *Ledger) settle(key string, e *ledgerEntry) bool {
	if e == nil || e.created == nil {
		return true
	}
	a := e.created
	e.created = nil
	if err := adjust.Apply(e.ctr, a); err != nil {
		delete(l.objs, key)
		return false
	}
	e.ctr.State = api.ContainerState_CONTAINER_CREATED
	return true
}

// stopped tells whether the object's stop was relayed (stopped).
func (e *ledgerEntry) stopped() bool {
	return e.podStopped || e.ctr.GetState() == api.ContainerState_CONTAINER_STOPPED
}

func (l *Ledger) Recording() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.Kept && l.seeded
}

// Usable tells whether a takeover may be synchronized from the ledger.
//
// The rule: only while the last comparison with SyncFn found no difference,
// and once the runtime relayed a container's life past its creation. Whether a runtime relays
// everything the ledger needs is known from what it does, not from a
// setting: a runtime that relays every change (containerd) compares equal,
// one that does not (moby relays only creation: removed containers stay)
// does not, and its takeovers then join under the gate from SyncFn, as
// upstream's join does. Until the first comparison nothing has shown the
// ledger exact, and until then nothing has shown that a removal reaches
// it between two comparisons (hack/model/ledger.pml,
// BUG_TRUST_ALWAYS), so it is not used either.
func (l *Ledger) Usable() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.Kept && l.seeded && l.trusted && l.relaysLife
}

// Distrust marks the ledger untrusted until the next comparison finds it
// exact: a change was handed to the runtime with an unknown outcome.
func (l *Ledger) Distrust() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.trusted = false
}

// Seed compares the ledger with the runtime's state as SyncFn reported it
// (if it holds one), then records that state. from is the version read
// before SyncFn was called: an object an event changed since then keeps
// what the event said, which is newer.
//
// The comparison counts the entries missing from the ledger, extra in it,
// or different. An entry an event changed after from is newer than the
// listing, a listed object whose removal was relayed and a relayed object
// no listing showed yet are the runtime's store lagging behind what it
// relayed, and a container with an UpdateFn call in flight may be either
// side of it: none is a difference.
func (l *Ledger) Seed(from uint64, pods []*api.PodSandbox, ctrs []*api.Container) Comparison {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.Kept {
		return Comparison{}
	}
	cmp := Comparison{Done: l.seeded}
	inFlight := 0 // entries not compared: an UpdateFn call for them is in flight
	if l.objs == nil {
		l.objs = map[string]*ledgerEntry{}
	}
	// The listed entries are marked with this seed's number (seen); the
	// relayed removals a listing still shows go in goneSeen.
	l.seeds++
	gen := l.seeds
	var goneSeen map[string]bool
	// One pass compares and copies only what differs: this runs under the
	// gate, while runtime operations wait. An object's key is built in kb
	// and made a string only for an entry that changes.
	var kb []byte
	set := func(prefix, id string, m proto.Message, entry func(old *ledgerEntry) *ledgerEntry) {
		kb = append(append(kb[:0], prefix...), id...)
		if l.gone[string(kb)] {
			if goneSeen == nil {
				goneSeen = map[string]bool{}
			}
			goneSeen[string(kb)] = true
			if BugBringsBack { // listed again, taken as the runtime's
				e := entry(nil)
				e.listed, e.seen = true, gen
				l.bump(string(kb))
				e.ver = l.ver
				l.objs[string(kb)] = e
			}
			return
		}
		old, ok := l.objs[string(kb)]
		if ok && old.created != nil && !l.settle(string(kb), old) {
			old, ok = nil, false
		}
		switch {
		case ok && old.ver > from:
			old.listed, old.seen = true, gen
			return
		case l.updating[string(kb)] > 0:
			inFlight++
		case !ok || old.removed:
			if cmp.Done {
				cmp.add("missing", string(kb))
			}
		case sameObject(old.msg(), m):
			old.listed, old.seen = true, gen
			return
		case old.stopped(), onlyPidDiffers(old.ctr, m):
		default:
			if cmp.Done {
				what := string(kb)
				if len(cmp.Sample) < maxSample { // only named ones are worth the walk
					what += " (" + differingFields(old.msg(), m) + ")"
				}
				cmp.add("different", what)
			}
		}
		key := string(kb)
		e := entry(old)
		e.listed, e.seen = true, gen
		if old != nil {
			e.podStopped = old.podStopped
		}
		l.bump(key)
		e.ver = l.ver
		l.objs[key] = e
	}
	for _, p := range pods {
		set("pod/", p.GetId(), p, func(old *ledgerEntry) *ledgerEntry {
			return &ledgerEntry{pod: clonePodReusing(p, old.getPod())}
		})
	}
	for _, c := range ctrs {
		set("ctr/", c.GetId(), c, func(old *ledgerEntry) *ledgerEntry {
			return &ledgerEntry{ctr: cloneContainerReusing(c, old.getCtr())}
		})
	}
	for key, e := range l.objs {
		if e.seen == gen || e.removed || e.ver > from || !l.settle(key, e) {
			continue
		}
		if !e.listed && e.missed == 0 { // relayed, not stored yet
			e.missed++
			continue
		}
		// A stopped container the listing lacks is not a difference:
		// containerd lists no exited container, as upstream's join shows it.
		if cmp.Done && l.updating[key] == 0 && !e.stopped() {
			cmp.add("extra", key)
		}
		l.Remove(key)
	}
	if len(l.gone) > 0 {
		l.goneOrder = slices.DeleteFunc(l.goneOrder, func(key string) bool { return !goneSeen[key] })
		for key := range l.gone {
			if !goneSeen[key] {
				delete(l.gone, key)
			}
		}
	}
	slices.Sort(cmp.Sample)
	l.seeded = true
	// A comparison that skipped an update in flight proves the ledger exact
	// only once that update is noted: the next one tells.
	l.trusted = cmp.Done && cmp.Differ == 0 && inFlight == 0
	l.bound = 2*(len(pods)+len(ctrs)) + minLedgerBound
	return cmp
}

// forget remembers a relayed removal of key (gone). l.mu is held.
func (l *Ledger) forget(key string) {
	if l.gone == nil {
		l.gone = map[string]bool{}
	}
	if l.gone[key] {
		return
	}
	l.gone[key] = true
	l.goneOrder = append(l.goneOrder, key)
	if len(l.goneOrder) > maxGone {
		delete(l.gone, l.goneOrder[0])
		l.goneOrder = l.goneOrder[1:]
	}
}

// dropLocked forgets the runtime's state until the next seed: a ledger that
// outgrew its bound. Open cursors read as closed. l.mu is held.
func (l *Ledger) dropLocked() {
	l.objs, l.changed = nil, nil
	l.seeded, l.trusted = false, false
	l.epoch++
}

// Version is the ledger's current Version, for seed.
func (l *Ledger) Version() uint64 {
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

// Remove drops an object, leaving a tombstone while a cursor may need it.
// l.mu is held.
func (l *Ledger) Remove(key string) {
	if l.open == 0 {
		delete(l.objs, key)
		return
	}
	l.bump(key)
	l.objs[key] = &ledgerEntry{ver: l.ver, removed: true}
}

// bump moves the version on for a change of key. l.mu is held.
func (l *Ledger) bump(key string) {
	l.ver++
	if l.open > 0 {
		l.changed = append(l.changed, key)
	}
}

// Note records what an event implies for its object, and the updates of
// other containers merged into its reply (rsp, nil for events without
// one), which the runtime applies. For CreateContainer and UpdateContainer,
// req holds the container, and the resources asked for, as the runtime sent
// them (merging the replies edits the request in place); failed tells that
// the runtime does not carry out the operation (the container is not
// created, not updated). The caller holds the adaptation's lock.
func (l *Ledger) Note(event api.Event, req any, rsp any, failed bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.Kept || !l.seeded || failed && (event == api.Event_CREATE_CONTAINER || event == api.Event_UPDATE_CONTAINER) {
		return
	}
	// The key is built in l.kb and made a string only where it is kept:
	// an event that replaces an entry replaces it in place (entries are
	// read only under l.mu, and never kept past it).
	kb, e, ok := implied(event, req, rsp, l.objs, l.kb[:0])
	l.kb = kb
	switch {
	case !ok || l.gone[string(kb)]: // ids are never reused
	case e.removed:
		key := string(kb)
		l.Remove(key)
		l.forget(key)
	default:
		old := l.objs[string(kb)]
		var key string // bump keeps it only while a cursor is open
		if old == nil || l.open > 0 {
			key = string(kb)
		}
		l.bump(key)
		e.ver = l.ver
		if old != nil {
			e.listed = old.listed
			*old = e
			break
		}
		ne := new(ledgerEntry)
		*ne = e
		l.objs[key] = ne
	}
	switch event {
	case api.Event_START_CONTAINER, api.Event_POST_START_CONTAINER, api.Event_STOP_CONTAINER,
		api.Event_REMOVE_CONTAINER, api.Event_STOP_POD_SANDBOX, api.Event_REMOVE_POD_SANDBOX:
		l.relaysLife = true
	}
	if r, ok := rsp.(updating); ok && !BugMissesUpdates {
		var others []*api.ContainerUpdate
		for _, u := range r.GetUpdate() {
			if u != nil && "ctr/"+u.GetContainerId() != string(kb) {
				others = append(others, u)
			}
		}
		l.applyLocked(others, nil)
	}
	// Bounded whatever the runtime relays. A ledger that outgrew twice the
	// last listing is not known to be exact any more (a runtime that relays
	// creation but not removal, as moby, grows it so; one that relays both
	// rarely doubles its node between two listings): the next comparison
	// tells. One that outgrows that too, untrusted, is dropped until the
	// next seed (the next registration or join).
	if len(l.objs) > l.bound {
		if l.trusted {
			l.trusted = false
			l.bound = 2*len(l.objs) + minLedgerBound
		} else {
			l.dropLocked()
		}
	}
}

// UpdatingBegins marks the containers of updates as having an UpdateFn call
// in flight, until applied; it returns updates.
func (l *Ledger) UpdatingBegins(updates []*api.ContainerUpdate) []*api.ContainerUpdate {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.updating == nil {
		l.updating = map[string]int{}
	}
	for _, u := range updates {
		l.updating["ctr/"+u.GetContainerId()]++
	}
	return updates
}

// Applied records the updates the adaptation handed the runtime, but those
// it reported failed, once the runtime Applied them, and ends their
// updatingBegins.
func (l *Ledger) Applied(updates, failed []*api.ContainerUpdate) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.updatingEndsLocked(updates)
	if l.Kept && l.seeded && !BugMissesUpdates {
		l.applyLocked(updates, failed)
	}
}

// UpdatingEnds ends updatingBegins for updates whose UpdateFn call ended
// without telling what it applied.
func (l *Ledger) UpdatingEnds(updates []*api.ContainerUpdate) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.updatingEndsLocked(updates)
}

func (l *Ledger) updatingEndsLocked(updates []*api.ContainerUpdate) {
	for _, u := range updates {
		key := "ctr/" + u.GetContainerId()
		if n, ok := l.updating[key]; ok {
			if n <= 1 {
				delete(l.updating, key)
			} else {
				l.updating[key] = n - 1
			}
		}
	}
}

// applyLocked merges each update's resources into its container as the
// runtime does (adjust.MergeResources). A container the ledger does not
// hold, or holds stopped, the runtime does not update either. l.mu is held.
func (l *Ledger) applyLocked(updates, failed []*api.ContainerUpdate) {
	for _, u := range updates {
		id := u.GetContainerId()
		if u == nil || slices.ContainsFunc(failed, func(f *api.ContainerUpdate) bool { return f.GetContainerId() == id }) {
			continue
		}
		key := "ctr/" + id
		e := l.objs[key]
		if !l.settle(key, e) || e == nil || e.ctr == nil || e.ctr.GetState() == api.ContainerState_CONTAINER_STOPPED {
			continue
		}
		c := CloneContainer(e.ctr) // whole: its resources are merged in place
		adjust.MergeResources(c, u.GetLinux().GetResources())
		if sameObject(c, e.ctr) {
			continue
		}
		l.bump(key)
		l.objs[key] = &ledgerEntry{ver: l.ver, ctr: c, listed: e.listed}
	}
}

// The replies whose merged result the runtime applies.
type (
	adjusting interface {
		GetAdjust() *api.ContainerAdjustment
	}
	updating interface{ GetUpdate() []*api.ContainerUpdate }
)

// implied is the state an event leaves its object in: a container event
// sets the container's state, an update its resources; removals leave a
// tombstone. The copy shares what is unchanged with the object's entry in
// objs (a creation's, not settled, shares the container as sent), but for
// an update's, whose resources are merged in place. The object's key is
// appended to kb; ok is false for an event without an object.
func implied(event api.Event, req any, rsp any, objs map[string]*ledgerEntry, kb []byte) (key []byte, e ledgerEntry, ok bool) {
	if r, ok := req.(interface{ GetContainer() *api.Container }); ok && r.GetContainer() != nil {
		c := r.GetContainer()
		kb = append(append(kb, "ctr/"...), c.GetId()...)
		old := objs[string(kb)]
		switch event {
		case api.Event_REMOVE_CONTAINER:
			return kb, ledgerEntry{removed: true}, true
		case api.Event_CREATE_CONTAINER: // the caller's copy
		case api.Event_UPDATE_CONTAINER:
			c = CloneContainer(c)
		default:
			if old != nil && old.created != nil {
				// The creation's copy, which no reader has seen (settle
				// hands it out) and this event replaces: reused in place.
				c = recycleContainer(c, old.ctr)
			} else {
				c = cloneContainerReusing(c, old.getCtr())
			}
		}
		switch event {
		case api.Event_CREATE_CONTAINER:
			// The container as the runtime reports it once created with
			// the merged adjustment, applied when first read (settle). An
			// adjustment the runtime's generator rejects fails the
			// creation: there is no container.
			var created *api.ContainerAdjustment
			if a, ok := rsp.(adjusting); ok {
				created = a.GetAdjust()
			}
			c.State = api.ContainerState_CONTAINER_CREATED
			return kb, ledgerEntry{ctr: c, created: created}, true
		case api.Event_UPDATE_CONTAINER:
			// The runtime applies the resources plugins merged for the
			// container if they changed them, else those it asked for.
			var res *api.LinuxResources
			if u, ok := req.(interface{ GetLinuxResources() *api.LinuxResources }); ok {
				res = u.GetLinuxResources()
			}
			if r, ok := rsp.(updating); ok {
				for _, u := range r.GetUpdate() {
					if u != nil && u.GetContainerId() == c.GetId() {
						res = u.GetLinux().GetResources()
					}
				}
			}
			adjust.MergeResources(c, res)
		case api.Event_POST_CREATE_CONTAINER:
			c.State = api.ContainerState_CONTAINER_CREATED
		case api.Event_START_CONTAINER, api.Event_POST_START_CONTAINER:
			c.State = api.ContainerState_CONTAINER_RUNNING
		case api.Event_STOP_CONTAINER:
			c.State = api.ContainerState_CONTAINER_STOPPED
		}
		return kb, ledgerEntry{ctr: c}, true
	}
	if r, ok := req.(interface{ GetPod() *api.PodSandbox }); ok && r.GetPod() != nil {
		kb = append(append(kb, "pod/"...), r.GetPod().GetId()...)
		if event == api.Event_REMOVE_POD_SANDBOX {
			return kb, ledgerEntry{removed: true}, true
		}
		old := objs[string(kb)]
		return kb, ledgerEntry{pod: clonePodReusing(r.GetPod(), old.getPod()),
			podStopped: event == api.Event_STOP_POD_SANDBOX || old != nil && old.podStopped}, true
	}
	return kb, ledgerEntry{}, false
}

// State returns every pod and container the ledger holds, and ok false if
// it holds nothing yet (never seeded). The objects are shared and must not
// be modified: the ledger replaces entries, never edits them.
func (l *Ledger) State() (pods []*api.PodSandbox, ctrs []*api.Container, ok bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.stateLocked()
}

func (l *Ledger) stateLocked() (pods []*api.PodSandbox, ctrs []*api.Container, ok bool) {
	d, ok := l.listingLocked()
	if ok {
		d.Sort()
	}
	return d.Pods, d.Ctrs, ok
}

// Listing is state in no particular order: what a peer's placement at
// registration reads, where sorting every object would cost the
// registration more than the rest of its screening (5 ms at 10 000
// containers).
func (l *Ledger) Listing() (pods []*api.PodSandbox, ctrs []*api.Container, ok bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	d, ok := l.listingLocked()
	return d.Pods, d.Ctrs, ok
}

func (l *Ledger) listingLocked() (*Delta, bool) {
	d := &Delta{}
	if !l.Kept || !l.seeded {
		return d, false
	}
	d.Pods = make([]*api.PodSandbox, 0, len(l.objs)/8)
	d.Ctrs = make([]*api.Container, 0, len(l.objs))
	for key, e := range l.objs {
		switch {
		case !l.settle(key, e), e.removed:
		case e.pod != nil:
			d.Pods = append(d.Pods, e.pod)
		default:
			d.Ctrs = append(d.Ctrs, e.ctr)
		}
	}
	return d, true
}
