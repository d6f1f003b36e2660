package main

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/nri-handover/nri/pkg/adaptation"
)

// timeline records what happened to each plugin instance over one part of
// the demo: process lives and their states, the demo's actions and the
// adaptation's switches (as marks), and the intervals without an active
// instance. It learns the switches from the adaptation's log (it is the
// part's adaptation.Logger) and handover outcomes from its HandoverMetrics.
type timeline struct {
	// exclusive: one instance is active at a time (handover); otherwise
	// every connected instance receives every event.
	exclusive bool

	mu       sync.Mutex
	start    time.Time
	end      time.Time // set by close: later changes are not recorded
	lives    []*life
	live     map[string]*life // instance id -> its running process
	marks    []mark
	warnings []string
	outcomes []outcome
	removed  int      // active instances the adaptation removed
	recent   []string // the adaptation's last log lines, for errors
	changed  chan struct{}

	active   string    // the active instance (exclusive)
	lostAt   time.Time // when the active instance was lost, while none is active
	gap      time.Duration
	gapWhy   string
	fresh    string // instance whose first synchronization makes it active
	freezeAt string // instance to freeze when its takeover starts
	onFreeze func()
}

// life is one process of an instance; segs are its states over time.
type life struct {
	instance, version string
	generation        uint64
	start, end        time.Time
	how               string // how it ended
	segs              []seg
}

type seg struct {
	from, to time.Time
	state    string // "starting", "synchronizing", "frozen", "active", "standby"
}

type markKind int

const (
	markAction markKind = iota // something the demo did
	markKill                   // kill -9
	markSwitch                 // the adaptation changed the active instance
)

type mark struct {
	t     time.Time
	kind  markKind
	label string
}

type outcome struct {
	t                     time.Time
	outcome               string
	duration, runtimeWait time.Duration
}

func newTimeline(exclusive bool) *timeline {
	return &timeline{exclusive: exclusive, start: time.Now(), live: map[string]*life{}, changed: make(chan struct{}, 1)}
}

func (tl *timeline) notify() {
	select {
	case tl.changed <- struct{}{}:
	default:
	}
}

func (tl *timeline) recording() bool { return tl.end.IsZero() }

func (tl *timeline) started(instance, version string, generation uint64, t time.Time) *life {
	tl.mu.Lock()
	defer tl.mu.Unlock()
	l := &life{instance: instance, version: version, generation: generation, start: t}
	l.segs = []seg{{from: t, state: "starting"}}
	tl.lives = append(tl.lives, l)
	tl.live[instance] = l
	return l
}

func (tl *timeline) ended(l *life, t time.Time, how string) {
	tl.mu.Lock()
	defer tl.mu.Unlock()
	if tl.live[l.instance] == l {
		delete(tl.live, l.instance)
	}
	if !tl.recording() || !l.end.IsZero() {
		return
	}
	l.end, l.how = t, how
	l.segs[len(l.segs)-1].to = t
	if tl.exclusive && tl.active == l.instance {
		tl.loseLocked(t)
	}
}

// setStateLocked starts a new state of instance's running process.
func (tl *timeline) setStateLocked(instance, state string, t time.Time) {
	l := tl.live[instance]
	if l == nil || !l.end.IsZero() || !tl.recording() {
		return
	}
	last := &l.segs[len(l.segs)-1]
	if last.state == state {
		return
	}
	last.to = t
	l.segs = append(l.segs, seg{from: t, state: state})
}

func (tl *timeline) mark(kind markKind, format string, args ...any) {
	tl.mu.Lock()
	defer tl.mu.Unlock()
	tl.markLocked(time.Now(), kind, fmt.Sprintf(format, args...))
}

func (tl *timeline) markLocked(t time.Time, kind markKind, label string) {
	if tl.recording() {
		tl.marks = append(tl.marks, mark{t: t, kind: kind, label: label})
	}
}

// expectFresh names the instance whose next "connected and synchronized"
// makes it active (the adaptation logs that line without the instance id).
func (tl *timeline) expectFresh(instance string) {
	tl.mu.Lock()
	tl.fresh = instance
	tl.mu.Unlock()
}

// freezeOnTakeover calls freeze the moment instance's takeover starts: the
// adaptation logs it before it sends the first synchronization request, so
// a process stopped there hangs in the middle of its handover. The
// adaptation waits in its log call until freeze returns: this is the demo's
// fault injection, no logger should do that otherwise.
func (tl *timeline) freezeOnTakeover(instance string, freeze func()) {
	tl.mu.Lock()
	tl.freezeAt, tl.onFreeze = instance, freeze
	tl.mu.Unlock()
}

// lose marks the active instance as gone from t (its kill), before the
// adaptation notices.
func (tl *timeline) lose(instance string, t time.Time) {
	tl.mu.Lock()
	defer tl.mu.Unlock()
	if tl.active == instance {
		tl.loseLocked(t)
	}
}

func (tl *timeline) loseLocked(t time.Time) {
	tl.active, tl.lostAt = "", t
	tl.gapWhy = ""
}

func (tl *timeline) activateLocked(instance string, t time.Time, why string) {
	tl.setStateLocked(instance, "active", t)
	if !tl.exclusive {
		return
	}
	if prev := tl.active; prev != "" && prev != instance {
		tl.setStateLocked(prev, "standby", t)
	}
	if !tl.lostAt.IsZero() {
		if g := t.Sub(tl.lostAt); g > tl.gap {
			tl.gap, tl.gapWhy = g, why
		}
		tl.lostAt = time.Time{}
	}
	tl.active = instance
}

// close stops recording at t: the part's traffic is over.
func (tl *timeline) close(t time.Time) {
	tl.mu.Lock()
	defer tl.mu.Unlock()
	for _, l := range tl.lives {
		if l.end.IsZero() {
			l.end, l.how = t, "running"
			l.segs[len(l.segs)-1].to = t
		}
	}
	tl.end = t
}

var instanceRE = regexp.MustCompile(`instance "?([^\s"]+)"?`)

// adaptationLog follows the adaptation's account of joins and switches.
func (tl *timeline) adaptationLog(msg string) {
	if freeze, instance := tl.follow(msg); freeze != nil {
		// Outside the lock: freezing takes the fleet's.
		freeze()
		tl.mu.Lock()
		tl.setStateLocked(instance, "frozen", time.Now())
		tl.mu.Unlock()
	}
	tl.notify()
}

// follow updates the timeline from one log line; it returns the freeze to
// carry out if the line starts the takeover freezeOnTakeover waits for.
func (tl *timeline) follow(msg string) (freeze func(), instance string) {
	now := time.Now()
	tl.mu.Lock()
	defer tl.mu.Unlock()
	var ids []string
	for _, m := range instanceRE.FindAllStringSubmatch(msg, -1) {
		ids = append(ids, m[1])
	}
	switch {
	case strings.Contains(msg, " takes over from ") && len(ids) > 0:
		tl.setStateLocked(ids[0], "synchronizing", now)
		if ids[0] == tl.freezeAt && tl.onFreeze != nil {
			freeze, instance = tl.onFreeze, ids[0]
			tl.freezeAt, tl.onFreeze = "", nil
		}
	case strings.Contains(msg, " superseded by ") && len(ids) == 2:
		tl.activateLocked(ids[1], now, "handover")
		tl.markLocked(now, markSwitch, fmt.Sprintf("switch: %s → %s (handover; %s stands by)", ids[0], ids[1], ids[0]))
	case strings.Contains(msg, " reactivated after ") && len(ids) == 2:
		tl.activateLocked(ids[0], now, fmt.Sprintf("%s lost until %s reactivated", ids[1], ids[0]))
		tl.markLocked(now, markSwitch, fmt.Sprintf("switch: %s reactivated (%s lost)", ids[0], ids[1]))
	case strings.HasPrefix(msg, "plugin ") && strings.HasSuffix(msg, " removed"):
		tl.removed++
	case strings.Contains(msg, " connected and synchronized") && tl.fresh != "":
		tl.activateLocked(tl.fresh, now, "first instance")
		tl.markLocked(now, markSwitch, fmt.Sprintf("%s synchronized: receives events", tl.fresh))
		tl.fresh = ""
	}
	return freeze, instance
}

// The adaptation.Logger methods: info lines drive the timeline; warnings
// and errors are kept for the summary.
func (tl *timeline) Debugf(_ context.Context, format string, args ...any) {
	tl.keep("debug", fmt.Sprintf(format, args...))
}
func (tl *timeline) Infof(_ context.Context, format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	tl.keep("info", msg)
	tl.adaptationLog(msg)
}
func (tl *timeline) Warnf(_ context.Context, format string, args ...any) { tl.warn(format, args...) }
func (tl *timeline) Errorf(_ context.Context, format string, args ...any) {
	tl.warn(format, args...)
}

func (tl *timeline) warn(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	tl.keep("warning", msg)
	tl.mu.Lock()
	defer tl.mu.Unlock()
	tl.warnings = append(tl.warnings, msg)
}

// keep remembers the adaptation's last log lines.
func (tl *timeline) keep(level, msg string) {
	const keep = 30
	tl.mu.Lock()
	defer tl.mu.Unlock()
	line := fmt.Sprintf("%8.1f ms %s: %s", float64(time.Since(tl.start))/float64(time.Millisecond), level, msg)
	if len(tl.recent) == keep {
		tl.recent = append(tl.recent[:0], tl.recent[1:]...)
	}
	tl.recent = append(tl.recent, line)
}

// recentLog is the adaptation's last log lines, one per line.
func (tl *timeline) recentLog() string {
	tl.mu.Lock()
	defer tl.mu.Unlock()
	return strings.Join(tl.recent, "\n")
}

// The adaptation.Metrics methods: only handover outcomes are kept.
func (*timeline) RecordPluginInvocation(string, string, error)                                      {}
func (*timeline) RecordPluginLatency(string, string, time.Duration)                                 {}
func (*timeline) RecordPluginAdjustments(string, string, *adaptation.ContainerAdjustment, int, int) {}
func (*timeline) UpdatePluginCount(int)                                                             {}

func (tl *timeline) RecordHandover(_, result string, duration, wait time.Duration) {
	tl.mu.Lock()
	defer tl.mu.Unlock()
	tl.outcomes = append(tl.outcomes, outcome{t: time.Now(), outcome: result, duration: duration, runtimeWait: wait})
	tl.notify()
}

var (
	_ adaptation.Logger          = (*timeline)(nil)
	_ adaptation.HandoverMetrics = (*timeline)(nil)
)

func (tl *timeline) countOutcome(result string) int {
	tl.mu.Lock()
	defer tl.mu.Unlock()
	n := 0
	for _, o := range tl.outcomes {
		if o.outcome == result {
			n++
		}
	}
	return n
}

func (tl *timeline) removals() int {
	tl.mu.Lock()
	defer tl.mu.Unlock()
	return tl.removed
}

// waitOutcome waits until the adaptation reported n handovers with the
// given outcome.
func (tl *timeline) waitOutcome(result string, n int) error {
	return tl.waitFor(func() bool { return tl.countOutcome(result) >= n }, fmt.Sprintf("a %q handover", result))
}

// waitRemoved waits until the adaptation removed an active instance n times
// in all (it logs that after it reserved the sync gate for a standby).
func (tl *timeline) waitRemoved(n int) error {
	return tl.waitFor(func() bool { return tl.removals() >= n }, "the removal of the active instance")
}

// waitFor waits, bounded, until cond holds; cond is checked whenever the
// adaptation logged or reported something.
func (tl *timeline) waitFor(cond func() bool, what string) error {
	deadline := time.NewTimer(10 * time.Second)
	defer deadline.Stop()
	for !cond() {
		select {
		case <-tl.changed:
		case <-deadline.C:
			return fmt.Errorf("the adaptation reported no %s within 10s", what)
		}
	}
	return nil
}
