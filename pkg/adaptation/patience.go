package adaptation

// Patience: how long an opted-in instance that joins outside the sync gate
// (a takeover, or a fresh join with delta rounds: handover.go, prepare) may
// wait for the runtime operations in flight, keeping nobody out.
//
// A runtime holds BlockPluginSync across operations that take long:
// containerd holds it across a whole graceful StopContainer (the pod's
// termination grace period, 30 s by default, often more), StopPodSandbox and
// RemoveContainer. A joining instance needs the operations in flight when
// its journal cursor opened to be over before it takes the runtime's state
// (syncGate.drain), and needs a moment with no operation in flight for its
// commit (syncGate.lockIdle). Neither wait keeps anybody out: the active
// instance keeps serving, and every other operation runs. Queuing for the
// gate instead (upstream's join) would keep every new operation out until
// the long one ended: a rollout during pod terminations would freeze the
// node. Once the instance is synchronized and nobody serves its events (a
// fresh join, or the active instance lost), its commit queues after all
// (lockIdleUntil): an operation that waits is better than one whose
// container bypasses the plugin for good.
//
// The wait is bounded by the patience, not by a request timeout: it is not
// the plugin that is slow. On expiry the instance is refused with
// SHUTDOWN_REASON_TIMEOUT ("took longer than the runtime allows"; a plugin
// reconnects and is synchronized again), never synchronized under the gate.

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// DefaultTakeoverPatience is how long a joining instance waits for runtime
// operations in flight by default: several graceful stops of the default
// 30 s grace period, and a pod's grace period is often raised to a minute or
// two, while a rollout still notices an instance that can never join.
const DefaultTakeoverPatience = 5 * time.Minute

// WithTakeoverPatience bounds how long an opted-in instance with delta rounds
// (api.FeatureDeltaSync) that takes over, or joins with no predecessor, waits
// for the runtime operations in flight (a graceful StopContainer holds
// BlockPluginSync for the pod's grace period) before it is refused with
// SHUTDOWN_REASON_TIMEOUT. It waits keeping nobody out: the active instance,
// if any, keeps serving and every runtime operation runs. The default is
// DefaultTakeoverPatience. While it waits, the adaptation logs a line every
// request timeout. Plugins without delta rounds join as upstream's do and
// are not bounded by it.
func WithTakeoverPatience(d time.Duration) Option {
	return func(r *Adaptation) error {
		if d <= 0 {
			return fmt.Errorf("invalid takeover patience %s", d)
		}
		r.patience = d
		return nil
	}
}

func (r *Adaptation) takeoverPatience() time.Duration {
	if r.patience > 0 {
		return r.patience
	}
	return DefaultTakeoverPatience
}

// patienceError is a joining instance's patience running out. It unwraps
// to context.DeadlineExceeded, so the instance is told TIMEOUT
// (shutdownReasonFor).
type patienceError struct {
	patience time.Duration
	what     string
}

func (e *patienceError) Error() string {
	return fmt.Sprintf("waited the takeover patience of %s for %s; refused rather than synchronized while runtime operations wait",
		e.patience, e.what)
}

func (e *patienceError) Unwrap() error { return context.DeadlineExceeded }

var errGoneWhileWaiting = errors.New("disconnected while it waited for runtime operations in flight")

// Waits of a joining instance, for await's logs and errors.
const (
	waitInFlight = "the runtime operations in flight when it joined to end"
	waitIdleGate = "an instant without runtime operations in flight to commit"
)

// await runs wait, a wait of p's join that keeps nobody out (syncGate.drain
// or lockIdle), until it returns, the runtime stops (ctx), p goes away, or
// deadline, p's patience, passes. It logs every request timeout while it
// waits, naming p and how long it waited.
func (g *registry) await(ctx context.Context, p *plugin, deadline time.Time, what string, wait func(context.Context) error) error {
	r := g.r
	gctx, gone := context.WithCancelCause(ctx)
	defer gone(nil)
	wctx, cancel := context.WithDeadlineCause(gctx, deadline, &patienceError{patience: r.takeoverPatience(), what: what})
	defer cancel()

	since := time.Now()
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		every := getRequestTimeout()
		if every <= 0 {
			every = DefaultPluginRequestTimeout
		}
		tick := time.NewTicker(every)
		defer tick.Stop()
		for {
			select {
			case <-wctx.Done():
				return
			case <-p.lostC:
				gone(errGoneWhileWaiting)
				return
			case <-p.doneC:
				gone(errGoneWhileWaiting)
				return
			case <-tick.C:
				r.log.Infof(ctx, "plugin %s has waited %s for %s (BlockPluginSync holds: %d); %s; refused in %s",
					p.describe(), time.Since(since).Round(time.Second), what, r.syncGate.inFlight(), g.keepsServing(p, what),
					time.Until(deadline).Round(time.Second))
			}
		}
	}()
	err := wait(wctx)
	cancel()
	<-watched
	if err == nil {
		return nil
	}
	if cause := context.Cause(wctx); cause != nil {
		err = cause
	}
	return err
}

// keepsServing says who handles p's events while p waits for what.
func (g *registry) keepsServing(p *plugin, what string) string {
	g.mu.Lock()
	defer g.mu.Unlock()
	if s := p.slot; s != nil && s.active != nil {
		if s.active.instance != "" {
			return fmt.Sprintf("instance %q keeps serving", s.active.instance)
		}
		return "the active instance keeps serving"
	}
	if what == waitIdleGate {
		return "nobody serves its events, so new runtime operations wait for its commit"
	}
	return "runtime operations run meanwhile"
}
