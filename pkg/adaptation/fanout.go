package adaptation

import (
	"context"
	"fmt"
	"sync"

	"github.com/nri-handover/nri/api"
)

// WithNotificationFanOut sends events whose replies carry nothing back but an
// error (RunPodSandbox, StopPodSandbox, RemovePodSandbox, UpdatePodSandbox,
// PostUpdatePodSandbox, PostCreateContainer, StartContainer,
// PostStartContainer, PostUpdateContainer, RemoveContainer) to all
// subscribed plugins at once instead of one after the other, so such an event
// costs the slowest plugin's round trip, not the sum of all of them.
//
// It is off by default because it changes what plugins observe, as upstream
// NRI v0.12.5 never does: plugins no longer see such an event in their index
// order, and when one plugin fails the request the others have received the
// event anyway (sequential relaying stops at the first failure). The error
// returned is the one of the first failing plugin in index order, as
// sequential relaying would have returned. A runtime's Metrics and builtin
// plugins must then be safe for concurrent use. Events whose replies are
// merged (CreateContainer, UpdateContainer, StopContainer) stay sequential:
// each plugin sees the adjustments of those before it, and conflicts are
// decided by that order.
func WithNotificationFanOut() Option {
	return func(r *Adaptation) error {
		r.fanOut = true
		return nil
	}
}

// fanOutRelay sends a notification to every subscribed plugin concurrently
// and waits for all of them; each is bounded by the request timeout. The
// caller holds the adaptation's lock.
func (r *Adaptation) fanOutRelay(ctx context.Context, plugins []*plugin, event api.Event, req any) error {
	spec, ok := eventTable[event]
	if !ok {
		return fmt.Errorf("no relay for event %s", event.PrettyName())
	}
	defer r.ledger.Note(event, req, nil, false)
	errs := make([]error, len(plugins))
	var wg sync.WaitGroup
	for i, p := range plugins {
		if !p.receives(event) {
			continue
		}
		spawn(&wg, func() { _, errs[i] = p.relay(ctx, &spec, req) })
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
