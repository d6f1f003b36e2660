// Package loadgen drives the benchmark scenarios against a runtime built on
// either NRI implementation. It depends on the standard library only, so
// that the binary built on upstream's adaptation and the one built on ours
// measure with the very same code.
package loadgen

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"
)

// MarkPrefix starts the annotation key a benchmark plugin sets in
// CreateContainer: MarkPrefix+name, valued with its instance. Seeing it in
// a response tells the runtime which instance handled the event.
const MarkPrefix = "bench.nri.io/"

// MarkKey is the annotation key plugin name sets.
func MarkKey(name string) string { return MarkPrefix + name }

// EnvKey is the environment variable plugin name sets in CreateContainer,
// valued with its instance.
func EnvKey(name string) string { return "BENCH_" + strings.ToUpper(name) }

// Runtime is a container runtime with an NRI adaptation under test.
type Runtime interface {
	// Op is one runtime operation, the event path: hold BlockPluginSync,
	// relay a CreateContainer event for a new container (the plugins answer
	// with an annotation and an environment variable each), add the
	// container to the runtime's state, release the block, relay
	// StartContainer. It returns the annotations the plugins' merged
	// adjustment sets.
	Op(ctx context.Context, i int) (map[string]string, error)
	// Notify holds BlockPluginSync and relays StartContainer for a
	// container the runtime holds: a notification (its replies carry nothing
	// back but an error) that adds nothing to the runtime's state.
	Notify(ctx context.Context, i int) error
}

// sample is one paced operation.
type sample struct {
	sched time.Time     // when the pacer meant to start it
	lat   time.Duration // completion minus sched
	err   bool
}

// pacer runs operations at a fixed rate. A late operation is not skipped:
// the next ones start back to back until the schedule is caught up, and each
// one's latency counts from its scheduled start, so a stall shows up in every
// operation that should have run during it (no coordinated omission).
// newMarkPacer paces operations until instance of plugin name marks one.
func newMarkPacer(rt Runtime, interval time.Duration, changeEvery int, name, instance string) *pacer {
	return &pacer{
		rt:          rt,
		interval:    interval,
		changeEvery: changeEvery,
		seen:        make(chan struct{}),
		watch:       func(ann map[string]string) bool { return ann[MarkKey(name)] == instance },
	}
}

type pacer struct {
	rt       Runtime
	interval time.Duration
	// changeEvery: operation i is an Op if i%changeEvery == 0, else a Notify.
	changeEvery int
	// until returns true once an annotation set ends the wait it watches.
	watch func(map[string]string) bool

	mu      sync.Mutex
	samples []sample
	seenAt  time.Time // completion of the first op watch accepted
	seen    chan struct{}
	errs    []error
}

// awaitSeen waits until the watched plugin instance handled an operation,
// at most timeout.
func (p *pacer) awaitSeen(ctx context.Context, timeout time.Duration, name, instance string) error {
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case <-p.seen:
		return nil
	case <-t.C:
		p.mu.Lock()
		defer p.mu.Unlock()
		return fmt.Errorf("plugin %s instance %s handled no event within %s (errors: %v)", name, instance, timeout, p.errs)
	case <-ctx.Done():
		return ctx.Err()
	}
}

// every calls f(i, sched) at sched = start + i*interval, i = 0, 1, ...,
// until stop is closed; a call that runs late does not shift the schedule.
func every(interval time.Duration, stop <-chan struct{}, f func(i int, sched time.Time)) {
	start := time.Now()
	t := time.NewTimer(0)
	defer t.Stop()
	for i := 0; ; i++ {
		sched := start.Add(time.Duration(i) * interval)
		if d := time.Until(sched); d > 0 {
			t.Reset(d)
			select {
			case <-t.C:
			case <-stop:
				return
			}
		} else {
			select {
			case <-stop:
				return
			default:
			}
		}
		f(i, sched)
	}
}

func (p *pacer) run(ctx context.Context, stop <-chan struct{}) {
	every(p.interval, stop, func(i int, sched time.Time) {
		var ann map[string]string
		var err error
		if p.changeEvery <= 1 || i%p.changeEvery == 0 {
			ann, err = p.rt.Op(ctx, i)
		} else {
			err = p.rt.Notify(ctx, i)
		}
		lat := time.Since(sched)
		p.mu.Lock()
		p.samples = append(p.samples, sample{sched: sched, lat: lat, err: err != nil})
		if err != nil && len(p.errs) < 5 {
			p.errs = append(p.errs, err)
		}
		if err == nil && p.watch != nil && p.seenAt.IsZero() && p.watch(ann) {
			p.seenAt = sched.Add(lat)
			close(p.seen)
		}
		p.mu.Unlock()
	})
}

// StallConfig describes a registration stall measurement.
type StallConfig struct {
	Interval time.Duration // pacing of runtime operations
	Warmup   time.Duration // operations before the plugin is launched
	Tail     time.Duration // operations after the plugin took over
	Timeout  time.Duration // give up waiting for the plugin after this
	// ChangeEvery makes only every so many operations create a container
	// (the others are a Notify), so that few objects change while a plugin
	// synchronizes; 0 or 1: all of them do.
	ChangeEvery int
	// Name and Instance identify the plugin whose first handled event ends
	// the registration window.
	Name, Instance string
}

// StallResult is what one registration did to runtime operations. Latency
// is from an operation's scheduled start to its completion.
type StallResult struct {
	// WindowMs runs from launching the plugin process to the completion of
	// the first operation the plugin handled; the window's operations are
	// those scheduled to start in it.
	WindowMs float64 `json:"windowMs"`
	Ops      int     `json:"ops"`    // operations scheduled in the window
	Errors   int     `json:"errors"` // failed operations in the whole run
	P50Ms    float64 `json:"p50Ms"`
	P99Ms    float64 `json:"p99Ms"`
	MaxMs    float64 `json:"maxMs"`
	// BaseP99Ms is the p99 before the plugin was launched.
	BaseP99Ms float64 `json:"baseP99Ms"`
	// Extra carries measurements only one implementation can make.
	Extra map[string]float64 `json:"extra,omitempty"`
}

// Stall paces operations, launches the plugin after the warm-up and measures
// operation latency until the plugin handles its first event.
func Stall(ctx context.Context, rt Runtime, cfg StallConfig, launch func() error) (*StallResult, error) {
	if cfg.Interval <= 0 {
		return nil, errors.New("stall: interval must be positive")
	}
	p := newMarkPacer(rt, cfg.Interval, cfg.ChangeEvery, cfg.Name, cfg.Instance)
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		p.run(ctx, stop)
	}()
	finish := func() { close(stop); <-done }

	if err := wait(ctx, cfg.Warmup); err != nil {
		finish()
		return nil, err
	}
	launched := time.Now()
	if err := launch(); err != nil {
		finish()
		return nil, fmt.Errorf("launch plugin: %w", err)
	}
	if err := p.awaitSeen(ctx, cfg.Timeout, cfg.Name, cfg.Instance); err != nil {
		finish()
		return nil, err
	}
	if err := wait(ctx, cfg.Tail); err != nil {
		finish()
		return nil, err
	}
	finish()

	res := &StallResult{WindowMs: ms(p.seenAt.Sub(launched))}
	var base, win []time.Duration
	for _, s := range p.samples {
		if s.err {
			res.Errors++
		}
		switch {
		case s.sched.Before(launched):
			base = append(base, s.lat)
		case !s.sched.After(p.seenAt):
			win = append(win, s.lat)
		}
	}
	res.Ops = len(win)
	res.P50Ms, res.P99Ms, res.MaxMs = ms(Quantile(win, 0.50)), ms(Quantile(win, 0.99)), ms(Quantile(win, 1))
	res.BaseP99Ms = ms(Quantile(base, 0.99))
	if res.Errors > 0 {
		return res, fmt.Errorf("%d runtime operations failed, first: %v", res.Errors, p.errs)
	}
	return res, nil
}

// WaitHandled runs unpaced operations until want accepts an answer, for
// setting up plugins before a measurement.
func WaitHandled(ctx context.Context, rt Runtime, timeout time.Duration, want func(map[string]string) bool) error {
	deadline := time.Now().Add(timeout)
	var last error
	for i := 0; time.Now().Before(deadline); i++ {
		ann, err := rt.Op(ctx, -1-i)
		if err == nil && want(ann) {
			return nil
		}
		last = err
		if err := wait(ctx, time.Millisecond); err != nil {
			return err
		}
	}
	return fmt.Errorf("plugins not handling events within %s (last error: %v)", timeout, last)
}

// HasMarks accepts annotations carrying a mark from each of names.
func HasMarks(names ...string) func(map[string]string) bool {
	return func(ann map[string]string) bool {
		for _, n := range names {
			if ann[MarkKey(n)] == "" {
				return false
			}
		}
		return true
	}
}

// Quantile returns the q-quantile (nearest rank) of ds; q=1 is the maximum.
func Quantile(ds []time.Duration, q float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	i := int(q*float64(len(s))+0.999999) - 1
	i = max(0, min(i, len(s)-1))
	return s[i]
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func wait(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// SplitCommand splits a plugin command line given as one flag value.
func SplitCommand(s string) []string { return strings.Fields(s) }
