package handover_test

import (
	"fmt"
	"slices"
	"strings"

	"github.com/nri-handover/nri/test/plugins/record"
	testruntime "github.com/nri-handover/nri/test/runtime"
)

// The exactly-once checker. It reads three independent records of one run
//
//   - the runtime's: every event it dispatched, with its sequence number, in
//     dispatch order (test/runtime);
//   - the wire's: every request the adaptation sent to each plugin
//     connection (wireTrace), which says who an event was dispatched to;
//   - each plugin process's own: what it handled, and what it was told
//     (Synchronize rounds, roles, Shutdown),
//
// and reports every way in which they contradict "each event was handled by
// exactly one instance, the one active at that moment". It never looks at
// the adaptation's internals, so it can judge any implementation, including
// a deliberately broken one.
//
// The rules for instances that died (kill -9, crash): an event sent to an
// instance that dies while handling it may or may not be in its record, but
// never in anyone else's; such a loss can only be the dead instance's last
// events. Events with no instance at all ("absent") are allowed only in the
// documented window: after the active instance died and until the next
// instance commits, and, under StrictReactivation, never while a standby is
// being brought back.

// runInput is everything the checker looks at.
type runInput struct {
	Events    []testruntime.Event // the runtime's record, in dispatch order
	Sends     []wireSend          // the wire trace; nil checks the plugin records only
	Instances []instRecord        // in start order
	// ConnsInOrder says instance i used wire connection i+1: the suite
	// started each instance only after the previous one had connected.
	ConnsInOrder bool
	// StrictReactivation forbids absent events between the loss of the
	// active instance and the reactivation of a standby.
	StrictReactivation bool
}

// instRecord is one plugin process as the checker sees it.
type instRecord struct {
	ID           string
	Lines        []record.Line
	Died         bool     // killed or crashed: its last events may be missing
	StartedAfter uint64   // the runtime's last sequence number before it started
	ActiveBy     []uint64 // the runtime's last sequence number when it was seen active
}

// verdict is the checker's finding.
type verdict struct {
	Violations []string
	Events     int // events checked
	Owned      int // handled by exactly one instance
	Lost       int // sent to an instance that died before recording it
	Absent     int // dispatched while no instance was active
	Switches   int // changes of the owning instance
	Gaps       []string
}

func (v *verdict) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d events: %d owned, %d lost to a dying instance, %d absent; %d switches; %d violations",
		v.Events, v.Owned, v.Lost, v.Absent, v.Switches, len(v.Violations))
	for _, g := range v.Gaps {
		fmt.Fprintf(&b, "\n  gap: %s", g)
	}
	const max = 40
	for i, s := range v.Violations {
		if i == max {
			fmt.Fprintf(&b, "\n  ... %d more", len(v.Violations)-max)
			break
		}
		fmt.Fprintf(&b, "\n  violation: %s", s)
	}
	return b.String()
}

// run is a maximal stretch of consecutive events with the same owner (-1:
// nobody).
type run struct {
	owner    int
	from, to uint64
	n        int
}

func checkExactlyOnce(in runInput) *verdict {
	v := &verdict{Events: len(in.Events)}
	bad := func(f string, a ...any) { v.Violations = append(v.Violations, fmt.Sprintf(f, a...)) }
	name := func(i int) string { return in.Instances[i].ID }

	dispatched := map[uint64]testruntime.Event{}
	for _, e := range in.Events {
		dispatched[e.Seq] = e
		if e.Err != nil {
			bad("the runtime's %s (seq %d) failed: %v", e.Event.PrettyName(), e.Seq, e.Err)
		}
	}

	// Each plugin's own record.
	handlers := map[uint64][]int{}
	type earlyEvent struct {
		inst int
		ev   string
		seq  uint64
	}
	var early []earlyEvent
	react := make([]int, len(in.Instances))
	lastRecorded := make([]uint64, len(in.Instances))
	for i, inst := range in.Instances {
		synced, standby, shut := false, false, false
		// An instance that is told its role (it opted into handover) may
		// handle events only between ACTIVE and the next STANDBY.
		toldRoles := slices.ContainsFunc(inst.Lines, func(l record.Line) bool { return l.Ev == record.RoleChange })
		active := false
		seen := map[uint64]bool{}
		for _, l := range inst.Lines {
			switch {
			case l.Ev == record.Synchronize:
				d := details(l.Detail)
				if d["kind"] != "delta" {
					synced = true
				}
				if d["react"] == "true" {
					react[i]++
					standby = false
				}
			case l.Ev == record.RoleChange:
				standby = details(l.Detail)["role"] == "STANDBY"
				active = details(l.Detail)["role"] == "ACTIVE"
			case l.Ev == record.Shutdown:
				shut = true
			case isEvent(l.Ev):
				e, ok := dispatched[l.Seq]
				switch {
				case !ok:
					bad("%s handled %s seq %d, which the runtime never dispatched", name(i), l.Ev, l.Seq)
					continue
				case e.Event.PrettyName() != l.Ev:
					bad("%s handled seq %d as %s, the runtime dispatched %s", name(i), l.Seq, l.Ev, e.Event.PrettyName())
				}
				if seen[l.Seq] {
					bad("%s handled %s seq %d twice", name(i), l.Ev, l.Seq)
					continue
				}
				seen[l.Seq] = true
				if l.Seq <= lastRecorded[i] {
					bad("%s handled seq %d after seq %d: out of dispatch order", name(i), l.Seq, lastRecorded[i])
				}
				lastRecorded[i] = max(lastRecorded[i], l.Seq)
				if !synced {
					bad("%s handled %s seq %d before it was synchronized", name(i), l.Ev, l.Seq)
				}
				if standby {
					bad("%s handled %s seq %d while it was a standby", name(i), l.Ev, l.Seq)
				} else if toldRoles && !active {
					bad("%s handled %s seq %d before it was told it is active", name(i), l.Ev, l.Seq)
				}
				if shut {
					bad("%s handled %s seq %d after it was told to shut down", name(i), l.Ev, l.Seq)
				}
				if l.Seq <= inst.StartedAfter {
					early = append(early, earlyEvent{i, l.Ev, l.Seq})
				}
				handlers[l.Seq] = append(handlers[l.Seq], i)
			}
		}
	}
	// An event the runtime began before an instance started may reach it
	// only if it waited for that instance's switch (the dispatch is held
	// for a switch): then no other instance handled an event the runtime
	// began after it and before the instance started.
	for _, e := range early {
		for s := e.seq + 1; s <= in.Instances[e.inst].StartedAfter; s++ {
			if slices.ContainsFunc(handlers[s], func(j int) bool { return j != e.inst }) {
				bad("%s handled %s seq %d, dispatched before the instance was started (after seq %d), and %s handled the later seq %d",
					name(e.inst), e.ev, e.seq, in.Instances[e.inst].StartedAfter, name(handlers[s][0]), s)
				break
			}
		}
	}

	// The runtime's side of the wire.
	connInst := map[int]int{}
	instConn := map[int]int{}
	if in.ConnsInOrder {
		for i := range in.Instances {
			connInst[i+1], instConn[i] = i, i+1
		}
	}
	sentTo := map[uint64][]int{}
	shutDown := map[int]bool{}
	lastRole := map[int]wireSend{}
	for _, s := range in.Sends {
		if s.Method == "RoleChange" {
			// Role changes to one instance must not overtake each other: the
			// plugin would end up in the role decided first. (Shutdown is
			// final whatever it overtakes.)
			if prev, ok := lastRole[s.Conn]; ok && s.Begin != 0 && (prev.End == 0 || prev.End > s.Begin) {
				bad("the runtime sent %s(%s) to connection %d while its %s(%s) was still in flight: the roles may arrive out of order",
					s.Method, s.Detail, s.Conn, prev.Method, prev.Detail)
			}
			lastRole[s.Conn] = s
		}
		switch {
		case s.Method == "Shutdown":
			shutDown[s.Conn] = true
		case (isEvent(s.Method) || s.Method == "StateChange") && s.Seq != 0:
			if shutDown[s.Conn] {
				bad("the runtime sent %s seq %d to connection %d after its Shutdown", s.Method, s.Seq, s.Conn)
			}
			sentTo[s.Seq] = append(sentTo[s.Seq], s.Conn)
		}
	}

	// Per event: who handled it, who it was sent to.
	owners := make([]int, len(in.Events))
	lost := map[int][]uint64{}
	var runs []run
	for k, e := range in.Events {
		hs := handlers[e.Seq]
		owner, isLost := -1, false
		if len(hs) > 1 {
			var names []string
			for _, h := range hs {
				names = append(names, name(h))
			}
			bad("%s seq %d was handled by %d instances: %s", e.Event.PrettyName(), e.Seq, len(hs), strings.Join(names, ", "))
		}
		if len(hs) > 0 {
			owner = hs[0]
		}
		if in.Sends != nil {
			conns := sentTo[e.Seq]
			if len(conns) > 1 {
				bad("the runtime sent %s seq %d to %d connections %v", e.Event.PrettyName(), e.Seq, len(conns), conns)
			}
			for _, h := range hs {
				if c, ok := instConn[h]; ok && !slices.Contains(conns, c) {
					bad("%s recorded %s seq %d, but the runtime sent it to connections %v, not to its connection %d",
						name(h), e.Event.PrettyName(), e.Seq, conns, c)
				}
			}
			for _, c := range conns {
				i, ok := connInst[c]
				if !ok || slices.Contains(hs, i) {
					continue
				}
				if !in.Instances[i].Died {
					bad("the runtime sent %s seq %d to %s, which is alive and has no record of it",
						e.Event.PrettyName(), e.Seq, name(i))
					continue
				}
				isLost = true
				lost[i] = append(lost[i], e.Seq)
				if owner < 0 {
					owner = i
				}
			}
		}
		switch {
		case owner < 0:
			v.Absent++
		case isLost && len(hs) == 0:
			v.Lost++
		default:
			v.Owned++
		}
		owners[k] = owner
		if n := len(runs); n > 0 && runs[n-1].owner == owner {
			runs[n-1].to, runs[n-1].n = e.Seq, runs[n-1].n+1
		} else {
			runs = append(runs, run{owner: owner, from: e.Seq, to: e.Seq, n: 1})
		}
	}
	for i, seqs := range lost {
		if lastRecorded[i] > seqs[0] {
			bad("%s missed seq %d but recorded the later seq %d: a lost event must be a dying instance's last",
				name(i), seqs[0], lastRecorded[i])
		}
	}

	// Ownership over time.
	runsOf := map[int]int{}
	prevOwner := -1
	for k, r := range runs {
		if r.owner < 0 {
			v.checkGap(in, runs, k, bad)
			continue
		}
		runsOf[r.owner]++
		if runsOf[r.owner] > 1+react[r.owner] {
			bad("%s handled events again (seq %d..%d) after it had lost them, without being reactivated",
				name(r.owner), r.from, r.to)
		}
		if prevOwner >= 0 && prevOwner != r.owner {
			v.Switches++
			if r.owner < prevOwner && !(react[r.owner] > 0 && in.Instances[prevOwner].Died) {
				bad("events went back from %s to the older %s at seq %d", name(prevOwner), name(r.owner), r.from)
			}
			if r.owner > prevOwner && k > 0 && runs[k-1].owner == prevOwner && react[prevOwner] == 0 {
				// The predecessor it named may also be an instance that was
				// reactivated after prevOwner and superseded again before it
				// handled an event.
				if pred, ok := takeoverOf(in.Instances[r.owner]); ok && pred != in.Instances[prevOwner].ID &&
					!reactivatedAfter(in, pred, in.Instances[prevOwner].ID) && !switchedToAfter(in, pred, in.Instances[prevOwner].ID, runsOf) {
					bad("%s took over from %s at seq %d, but its Synchronize named %q as its predecessor",
						name(r.owner), name(prevOwner), r.from, pred)
				}
			}
		}
		prevOwner = r.owner
	}

	// The suite's own observations of when each instance was active.
	anyDiedFrom := make([]bool, len(in.Instances)+1)
	for i := len(in.Instances) - 1; i >= 0; i-- {
		anyDiedFrom[i] = anyDiedFrom[i+1] || in.Instances[i].Died
	}
	for i, inst := range in.Instances {
		for _, a := range inst.ActiveBy {
			for k, e := range in.Events {
				o := owners[k]
				if e.Seq <= a || o < 0 || o >= i {
					continue
				}
				if react[o] > 0 && anyDiedFrom[i] {
					continue
				}
				bad("%s seq %d went to %s after the newer %s had been confirmed active (by seq %d)",
					e.Event.PrettyName(), e.Seq, name(o), name(i), a)
			}
		}
	}
	return v
}

// checkGap judges a stretch of events nobody handled.
func (v *verdict) checkGap(in runInput, runs []run, k int, bad func(string, ...any)) {
	r := runs[k]
	v.Gaps = append(v.Gaps, fmt.Sprintf("%d events, seq %d..%d", r.n, r.from, r.to))
	if k == 0 {
		bad("%d events (seq %d..%d) were dispatched before any instance was active", r.n, r.from, r.to)
		return
	}
	prev := runs[k-1].owner
	if !in.Instances[prev].Died && !succeededByDead(in, prev) {
		bad("%d events (seq %d..%d) had no active instance after %s, which did not die",
			r.n, r.from, r.to, in.Instances[prev].ID)
		return
	}
	if k+1 < len(runs) && in.StrictReactivation && in.Sends != nil {
		next := runs[k+1].owner
		if next < prev && next >= 0 {
			// The runtime notices the loss when the connection closes or
			// when a delivery to the dead instance fails, whichever comes
			// first; the runtime operation in progress then holds the sync
			// gate, so its remaining events cannot wait for the
			// reactivation. Any further event must.
			noticed := runs[k-1].to
			if in.ConnsInOrder {
				for _, s := range in.Sends {
					if s.Conn == prev+1 && s.Seq > noticed {
						noticed = s.Seq
					}
				}
			}
			rest := restOfOperation(in.Events, noticed)
			if r.to > rest {
				bad("%d events (seq %d..%d) passed without any instance while standby %s was reactivated after %s died"+
					" (only the rest of the operation in which the loss was noticed, up to seq %d, may)",
					r.n, r.from, r.to, in.Instances[next].ID, in.Instances[prev].ID, rest)
			}
		}
	}
}

// postEvents pairs each event with the post-event a runtime operation
// dispatches after it for the same pod or container.
var postEvents = map[string]string{
	"CreateContainer":  "PostCreateContainer",
	"StartContainer":   "PostStartContainer",
	"UpdateContainer":  "PostUpdateContainer",
	"UpdatePodSandbox": "PostUpdatePodSandbox",
}

// restOfOperation returns the last sequence number of the runtime operation
// that dispatched seq: its post-event, if one follows for the same target.
func restOfOperation(events []testruntime.Event, seq uint64) uint64 {
	i := slices.IndexFunc(events, func(e testruntime.Event) bool { return e.Seq == seq })
	if i < 0 || i+1 >= len(events) {
		return seq
	}
	e, next := events[i], events[i+1]
	if postEvents[e.Event.PrettyName()] == next.Event.PrettyName() && e.Pod == next.Pod && e.Container == next.Container {
		return next.Seq
	}
	return seq
}

// succeededByDead tells whether instance i was superseded (or made a
// standby) by a successor that died: the switch happened, the successor
// died before it handled any event, and the plugin was absent from then on.
func succeededByDead(in runInput, i int) bool {
	return succeededByDeadFrom(in, i, len(in.Instances))
}

// succeededByDeadFrom follows successors that handled no event (a switch
// queued behind another switch's hold), at most depth of them.
func succeededByDeadFrom(in runInput, i, depth int) bool {
	byID := map[string]int{}
	for j, inst := range in.Instances {
		byID[inst.ID] = j
	}
	for _, l := range in.Instances[i].Lines {
		d := details(l.Detail)
		var succ string
		switch {
		case l.Ev == record.Shutdown && d["reason"] == "SHUTDOWN_REASON_SUPERSEDED":
			succ = d["succ"]
		case l.Ev == record.RoleChange && d["role"] == "STANDBY":
			succ = d["peer"]
		default:
			continue
		}
		j, ok := byID[succ]
		if !ok {
			continue
		}
		if in.Instances[j].Died {
			return true
		}
		handled := slices.ContainsFunc(in.Instances[j].Lines, func(l record.Line) bool { return isEvent(l.Ev) })
		if !handled && depth > 0 && succeededByDeadFrom(in, j, depth-1) {
			return true
		}
	}
	return false
}

// takeoverOf returns the predecessor named in an instance's first full
// synchronization, if it named one.
// reactivatedAfter tells whether the instance with id was reactivated when
// the instance with lost left.
func reactivatedAfter(in runInput, id, lost string) bool {
	for _, inst := range in.Instances {
		if inst.ID != id {
			continue
		}
		for _, l := range inst.Lines {
			if d := details(l.Detail); l.Ev == record.Synchronize && d["react"] == "true" && d["pred"] == lost {
				return true
			}
		}
	}
	return false
}

// switchedToAfter tells whether the instance id took over from lost and was
// superseded before it handled an event: two switches with no event between
// them (each switch holds the dispatch; the second queued during the first).
func switchedToAfter(in runInput, id, lost string, runsOf map[int]int) bool {
	for i, inst := range in.Instances {
		if inst.ID == id {
			pred, ok := takeoverOf(inst)
			return ok && pred == lost && runsOf[i] == 0
		}
	}
	return false
}

func takeoverOf(inst instRecord) (string, bool) {
	for _, l := range inst.Lines {
		if l.Ev != record.Synchronize {
			continue
		}
		d := details(l.Detail)
		if d["kind"] == "delta" {
			continue
		}
		pred, ok := d["pred"]
		return pred, ok && pred != ""
	}
	return "", false
}

// collectOpts chooses what collect puts into the checker's input.
type collectOpts struct {
	name    string // only instances of this plugin name (default "p")
	noWire  bool   // leave the wire trace out
	inOrder bool   // instances connected one after the other, all of plugin name
	strict  bool   // StrictReactivation
}

// collect builds the checker's input from a finished spec's env.
func (e *env) collect(o collectOpts) runInput {
	if o.name == "" {
		o.name = "p"
	}
	in := runInput{Events: e.rt.Record(), ConnsInOrder: o.inOrder, StrictReactivation: o.strict}
	if !o.noWire {
		in.Sends = e.trace.Sends()
	}
	for _, inst := range e.instances() {
		if inst.spec.Name != o.name {
			continue
		}
		in.Instances = append(in.Instances, instRecord{
			ID: inst.String(), Lines: inst.lines(), Died: inst.died(),
			StartedAfter: inst.startedAfter, ActiveBy: inst.activeBy,
		})
	}
	return in
}
