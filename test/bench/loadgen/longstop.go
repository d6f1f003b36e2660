package loadgen

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// LongStopConfig describes a join beside a long graceful stop: a runtime
// operation holds BlockPluginSync for Hold (containerd holds it across a
// whole StopContainer, the pod's grace period) while a plugin registers, and
// other operations take and release BlockPluginSync every Interval.
type LongStopConfig struct {
	Interval time.Duration // pacing of the BlockPluginSync round trips
	Warmup   time.Duration // round trips before the stop begins
	Hold     time.Duration // how long the stop holds BlockPluginSync
	Tail     time.Duration // round trips after the plugin handled an operation
	Timeout  time.Duration // give up waiting for the plugin after the stop ended
	// Name and Instance identify the plugin whose first handled operation
	// ends the window.
	Name, Instance string
}

// LongStopResult is what the join did to the other operations: how long a
// BlockPluginSync round trip waited, counted from its scheduled start (a
// round trip kept out delays every one scheduled behind it, and each counts).
type LongStopResult struct {
	HoldMs float64 `json:"holdMs"`
	// WindowMs runs from launching the plugin process to the completion of
	// the first operation it handled; the window's round trips are those
	// scheduled in it.
	WindowMs float64 `json:"windowMs"`
	// AfterStopMs runs from the end of the stop to that operation.
	AfterStopMs float64 `json:"afterStopMs"`
	Probes      int     `json:"probes"`
	P50WaitMs   float64 `json:"p50WaitMs"`
	P99WaitMs   float64 `json:"p99WaitMs"`
	MaxWaitMs   float64 `json:"maxWaitMs"`
	// BaseMaxMs is the longest wait before the stop began.
	BaseMaxMs float64            `json:"baseMaxMs"`
	Extra     map[string]float64 `json:"extra,omitempty"`
}

// LongStop runs the scenario: round trips from the start, the stop after
// the warm-up, the plugin launched right after the stop began, the stop
// released after Hold, then unpaced operations until the plugin handled
// one.
func LongStop(ctx context.Context, h Harness, cfg LongStopConfig, launch func() error) (*LongStopResult, error) {
	if cfg.Interval <= 0 || cfg.Hold <= 0 {
		return nil, errors.New("longstop: interval and hold must be positive")
	}
	type probe struct {
		sched time.Time
		lat   time.Duration
	}
	var (
		mu      sync.Mutex
		samples []probe
	)
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		every(cfg.Interval, stop, func(_ int, sched time.Time) {
			h.BlockUnblock()
			lat := time.Since(sched)
			mu.Lock()
			samples = append(samples, probe{sched, lat})
			mu.Unlock()
		})
	}()
	finish := func() { close(stop); <-done }

	if err := wait(ctx, cfg.Warmup); err != nil {
		finish()
		return nil, err
	}
	release := h.Hold()
	held := time.Now()
	var once sync.Once
	unhold := func() { once.Do(release) }
	defer unhold()
	launched := time.Now()
	if err := launch(); err != nil {
		finish()
		return nil, fmt.Errorf("launch plugin: %w", err)
	}
	if err := wait(ctx, time.Until(held.Add(cfg.Hold))); err != nil {
		finish()
		return nil, err
	}
	unhold()
	released := time.Now()
	want := cfg.Instance
	if err := WaitHandled(ctx, h, cfg.Timeout, func(ann map[string]string) bool { return ann[MarkKey(cfg.Name)] == want }); err != nil {
		finish()
		return nil, fmt.Errorf("plugin %s instance %s after the stop: %w", cfg.Name, want, err)
	}
	seen := time.Now()
	if err := wait(ctx, cfg.Tail); err != nil {
		finish()
		return nil, err
	}
	finish()

	res := &LongStopResult{
		HoldMs:      ms(released.Sub(held)),
		WindowMs:    ms(seen.Sub(launched)),
		AfterStopMs: ms(seen.Sub(released)),
	}
	var base, win []time.Duration
	for _, s := range samples {
		switch {
		case s.sched.Before(held):
			base = append(base, s.lat)
		case !s.sched.Before(launched) && !s.sched.After(seen):
			win = append(win, s.lat)
		}
	}
	res.Probes = len(win)
	res.P50WaitMs, res.P99WaitMs, res.MaxWaitMs = ms(Quantile(win, 0.5)), ms(Quantile(win, 0.99)), ms(Quantile(win, 1))
	res.BaseMaxMs = ms(Quantile(base, 1))
	return res, nil
}
