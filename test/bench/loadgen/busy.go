package loadgen

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// BusyConfig describes a takeover (or, upstream, a join) on a node whose
// BlockPluginSync is never idle: holders take the block every HoldEvery and
// keep it for HoldFor each, so that several overlap at any moment (a busy
// node's creations, starts, stops and removals); one more holds it for Stop
// (a graceful stop), taken right before the plugin is launched; and runtime
// operations (the event path, as in Stall) are paced every Interval.
type BusyConfig struct {
	Interval    time.Duration // pacing of the runtime operations
	ChangeEvery int           // as StallConfig's
	HoldEvery   time.Duration // pacing of the overlapping holders
	HoldFor     time.Duration // how long each holder keeps the block
	Stop        time.Duration // the long holder's hold
	Warmup      time.Duration // load before the stop and the launch
	Tail        time.Duration // load after the plugin handled an operation
	Timeout     time.Duration // give up waiting for the plugin
	// Name and Instance identify the plugin whose first handled operation
	// ends the window.
	Name, Instance string
}

// BusyResult is what the takeover took and what it did to the load, over
// the window from the plugin's launch to the completion of the first
// operation it handled.
type BusyResult struct {
	WindowMs float64 `json:"windowMs"`
	// StopMs is how long the long holder held the block (it is released
	// after Stop, or at the end of the run if that comes first).
	StopMs float64 `json:"stopMs"`
	// Ops, P50Ms, P99Ms, MaxMs: the runtime operations scheduled in the
	// window, latency from their scheduled start.
	Ops   int     `json:"ops"`
	P50Ms float64 `json:"p50Ms"`
	P99Ms float64 `json:"p99Ms"`
	MaxMs float64 `json:"maxMs"`
	// HoldP99Ms, HoldMaxMs: how long the overlapping holders scheduled in
	// the window waited for BlockPluginSync, from their scheduled start.
	Holders   int     `json:"holders"`
	HoldP99Ms float64 `json:"holdP99Ms"`
	HoldMaxMs float64 `json:"holdMaxMs"`
	// GapMs is the longest interval in the window in which none of the
	// holders (the long one included) held BlockPluginSync; the runtime
	// operations' own short holds are not counted, so it is an upper bound.
	GapMs  float64 `json:"gapMs"`
	Errors int     `json:"errors"`
	// Extra: the plugin's own timeline (launch→synced, synced→active) and
	// what only one implementation measures.
	Extra map[string]float64 `json:"extra,omitempty"`
}

// busyClock tracks how many holders hold the block and the longest time
// none did.
type busyClock struct {
	mu      sync.Mutex
	holders int
	idleAt  time.Time // when holders last dropped to 0 (zero: held)
	// from, until: the window gaps are measured in (zero until: open).
	from, until time.Time
	gap         time.Duration
}

func (c *busyClock) acquired() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.holders == 0 && !c.idleAt.IsZero() {
		c.closeGap(time.Now())
	}
	c.holders++
}

func (c *busyClock) released() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.holders--; c.holders == 0 {
		c.idleAt = time.Now()
	}
}

// closeGap records the idle interval ending at now, clipped to the window;
// c.mu is held.
func (c *busyClock) closeGap(now time.Time) {
	a, b := c.idleAt, now
	c.idleAt = time.Time{}
	if !c.from.IsZero() && a.Before(c.from) {
		a = c.from
	}
	if !c.until.IsZero() && b.After(c.until) {
		b = c.until
	}
	if c.from.IsZero() || b.Before(a) {
		return
	}
	c.gap = max(c.gap, b.Sub(a))
}

func (c *busyClock) open() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.from = time.Now()
}

// close ends the window and returns its longest gap.
func (c *busyClock) close(at time.Time) time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.until = at
	if c.holders == 0 && !c.idleAt.IsZero() {
		c.closeGap(at)
	}
	return c.gap
}

// Busy runs the scenario. launch starts the plugin; the window ends at the
// completion of the first paced operation the plugin handled.
func Busy(ctx context.Context, h Harness, cfg BusyConfig, launch func() error) (*BusyResult, error) {
	if cfg.Interval <= 0 || cfg.HoldEvery <= 0 || cfg.HoldFor <= 0 || cfg.Stop <= 0 {
		return nil, errors.New("busy: interval, hold-every, hold-for and stop must be positive")
	}
	p := newMarkPacer(h, cfg.Interval, cfg.ChangeEvery, cfg.Name, cfg.Instance)
	clk := &busyClock{}
	type probe struct {
		sched time.Time
		wait  time.Duration
	}
	var (
		hmu     sync.Mutex
		holds   []probe
		holders sync.WaitGroup
	)
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() { // the overlapping holders, one goroutine each
		defer close(done)
		every(cfg.HoldEvery, stop, func(_ int, sched time.Time) {
			holders.Add(1)
			go func() {
				defer holders.Done()
				release := h.Hold()
				clk.acquired()
				w := time.Since(sched)
				hmu.Lock()
				holds = append(holds, probe{sched, w})
				hmu.Unlock()
				time.Sleep(cfg.HoldFor)
				clk.released()
				release()
			}()
		})
	}()
	pdone := make(chan struct{})
	go func() {
		defer close(pdone)
		p.run(ctx, stop)
	}()
	var unstop func()
	finish := func() {
		if unstop != nil {
			unstop()
		}
		close(stop)
		<-done
		<-pdone
		holders.Wait()
	}

	if err := wait(ctx, cfg.Warmup); err != nil {
		finish()
		return nil, err
	}
	// the graceful stop, then the plugin
	releaseStop := h.Hold()
	clk.acquired()
	held := time.Now()
	var stopped time.Time
	var once sync.Once
	unstop = func() {
		once.Do(func() {
			stopped = time.Now()
			clk.released()
			releaseStop()
		})
	}
	stopTimer := time.AfterFunc(cfg.Stop, unstop)
	defer stopTimer.Stop()
	clk.open()
	launched := time.Now()
	if err := launch(); err != nil {
		finish()
		return nil, fmt.Errorf("launch plugin: %w", err)
	}
	if err := p.awaitSeen(ctx, cfg.Timeout, cfg.Name, cfg.Instance); err != nil {
		finish()
		return nil, err
	}
	p.mu.Lock()
	seenAt := p.seenAt
	p.mu.Unlock()
	gap := clk.close(seenAt)
	if err := wait(ctx, cfg.Tail); err != nil {
		finish()
		return nil, err
	}
	finish()

	res := &BusyResult{WindowMs: ms(seenAt.Sub(launched)), StopMs: ms(stopped.Sub(held)), GapMs: ms(gap)}
	var win []time.Duration
	p.mu.Lock()
	for _, s := range p.samples {
		if s.err {
			res.Errors++
		}
		if !s.sched.Before(launched) && !s.sched.After(seenAt) {
			win = append(win, s.lat)
		}
	}
	errs := p.errs
	p.mu.Unlock()
	res.Ops = len(win)
	res.P50Ms, res.P99Ms, res.MaxMs = ms(Quantile(win, 0.5)), ms(Quantile(win, 0.99)), ms(Quantile(win, 1))
	var hw []time.Duration
	hmu.Lock()
	for _, s := range holds {
		if !s.sched.Before(launched) && !s.sched.After(seenAt) {
			hw = append(hw, s.wait)
		}
	}
	hmu.Unlock()
	res.Holders = len(hw)
	res.HoldP99Ms, res.HoldMaxMs = ms(Quantile(hw, 0.99)), ms(Quantile(hw, 1))
	res.Extra = map[string]float64{"launchedUnixMs": float64(launched.UnixNano()) / 1e6, "handledUnixMs": float64(seenAt.UnixNano()) / 1e6}
	if res.Errors > 0 {
		return res, fmt.Errorf("%d runtime operations failed, first: %v", res.Errors, errs)
	}
	return res, nil
}
