package adaptation

import (
	"context"
	"sync"
)

// Calls into the runtime (SyncFn, UpdateFn) and Stop.
//
// Runtimes take their own locks in these callbacks, and hold the same locks
// around Stop: containerd's internal/nri holds one mutex around Stop() and
// takes it inside its SyncFn and UpdateFn (CRI-O and moby hold theirs around
// Stop too). A goroutine of ours that calls back while the runtime is stopping
// therefore blocks until Stop returns, and Stop must not wait for it. So:
//
//   - no callback is called once Stop has begun (the adaptation's context is
//     cancelled first thing in Stop);
//   - a callback runs on a goroutine of its own, and whoever called it stops
//     waiting when Stop begins, unless the runtime is inside our SyncCB at
//     that moment: the SyncCB is our code, bounded by the request timeout,
//     and waiting for it keeps its results from being written while the
//     caller reads them;
//   - a SyncCB the runtime calls after its caller gave up refuses to run.
//
// A runtime's callback still blocked when Stop returns finishes whenever the
// runtime lets it, and then touches nothing of ours.

// callSyncFn calls the runtime's SyncFn with cb, within the rules above.
func (r *Adaptation) callSyncFn(ctx context.Context, cb SyncCB) error {
	c := &runtimeCall{}
	guarded := func(ctx context.Context, pods []*PodSandbox, ctrs []*Container) ([]*ContainerUpdate, error) {
		c.mu.Lock()
		defer c.mu.Unlock()
		if c.abandoned || r.stopping() {
			return nil, errStopped
		}
		return cb(ctx, pods, ctrs)
	}
	_, err := callRuntime(r, c, func() (struct{}, error) {
		return struct{}{}, r.syncFn(ctx, guarded)
	})
	return err
}

// callUpdateFn calls the runtime's UpdateFn, within the rules above.
func (r *Adaptation) callUpdateFn(ctx context.Context, updates []*ContainerUpdate) ([]*ContainerUpdate, error) {
	return callRuntime(r, &runtimeCall{}, func() ([]*ContainerUpdate, error) {
		return r.updateFn(ctx, updates)
	})
}

// runtimeCall is one call into the runtime. mu is held while our SyncCB runs
// inside it; abandoned is set when the caller stopped waiting.
type runtimeCall struct {
	mu        sync.Mutex
	abandoned bool
}

type callResult[T any] struct {
	val T
	err error
}

// callRuntime runs call on its own goroutine and waits for it, or until Stop
// begins; then it returns errStopped without waiting for the runtime.
func callRuntime[T any](r *Adaptation, c *runtimeCall, call func() (T, error)) (T, error) {
	var zero T
	if r.stopping() {
		return zero, errStopped
	}
	done := make(chan callResult[T], 1)
	go func() {
		v, err := call()
		done <- callResult[T]{v, err}
	}()
	select {
	case res := <-done:
		return res.val, res.err
	case <-r.stopBegun():
	}
	c.mu.Lock() // waits for a SyncCB in progress, which is ours and bounded
	c.abandoned = true
	c.mu.Unlock()
	select {
	case res := <-done: // finished meanwhile: its answer is as good as any
		return res.val, res.err
	default:
		return zero, errStopped
	}
}

// stopBegun is closed when Stop begins: it cancels the adaptation's context.
func (r *Adaptation) stopBegun() <-chan struct{} {
	if r.ctx == nil { // an Adaptation not made by New, in tests
		return nil
	}
	return r.ctx.Done()
}

func (r *Adaptation) stopping() bool {
	select {
	case <-r.stopBegun():
		return true
	default:
		return false
	}
}
