package stub

import (
	"context"
	"errors"

	"github.com/nri-handover/nri/api"
)

// SyncInfo describes a synchronization round beyond the pods and containers
// that upstream's Synchronize handler receives.
type SyncInfo struct {
	// Takeover is set when this instance replaces another instance of the
	// plugin (or is reactivated after its successor failed): a plugin can
	// skip work its predecessor already did for the listed containers.
	Takeover *api.Takeover
	// Delta marks a catch-up round after a completed synchronization: the
	// handler gets only what was added or changed since the previous round.
	Delta bool
	// RemovedPods and RemovedContainers list the IDs gone since the
	// previous round (delta rounds only).
	RemovedPods       []string
	RemovedContainers []string
}

type syncInfoKey struct{}

// SyncInfoFrom returns the round's details inside a Synchronize handler.
func SyncInfoFrom(ctx context.Context) (*SyncInfo, bool) {
	info, ok := ctx.Value(syncInfoKey{}).(*SyncInfo)
	return info, ok
}

// Synchronize collects the chunks of a round (all but the last have more
// set) and hands the whole round to the plugin. Any number of rounds is
// accepted on a connection: delta rounds, and the round that reactivates a
// standby instance.
func (v *service) Synchronize(ctx context.Context, req *api.SynchronizeRequest) (*api.SynchronizeResponse, error) {
	s := v.s

	s.mu.Lock()
	round := mergeSync(v.sess.pending, req)
	if req.GetMore() {
		v.sess.pending = round
		s.mu.Unlock()
		s.logger.Debugf(ctx, "plugin %s: collected %d pods, %d containers so far",
			s.Name(), len(round.GetPods()), len(round.GetContainers()))
		return &api.SynchronizeResponse{More: true}, nil
	}
	v.sess.pending = nil
	s.mu.Unlock()

	info := &SyncInfo{
		Takeover:          round.GetTakeover(),
		Delta:             round.GetDelta(),
		RemovedPods:       round.GetRemovedPods(),
		RemovedContainers: round.GetRemovedContainers(),
	}
	s.logger.Infof(ctx, "plugin %s: synchronizing %d pods, %d containers (delta %v, takeover %v)",
		s.Name(), len(round.GetPods()), len(round.GetContainers()), info.Delta, info.Takeover != nil)

	var (
		update []*api.ContainerUpdate
		err    error
	)
	hctx := context.WithValue(ctx, syncInfoKey{}, info)
	switch {
	case s.h.syncRound != nil:
		update, err = s.h.syncRound(hctx, info, round.GetPods(), round.GetContainers())
	case s.h.synchronize != nil:
		update, err = s.h.synchronize(hctx, round.GetPods(), round.GetContainers())
	}
	if err != nil {
		if ctx.Err() != nil && errors.Is(err, ctx.Err()) {
			// Unwrapped, ttrpc reports it as a timeout (or cancellation)
			// that the runtime can tell from a refusal.
			return nil, ctx.Err()
		}
		return nil, err // as upstream's: the runtime names the plugin and the call
	}

	if !info.Delta {
		s.mu.Lock()
		v.sess.synced = true
		s.evalReadiness(v.sess)
		s.mu.Unlock()
	}
	return &api.SynchronizeResponse{Update: update}, nil
}

// mergeSync appends chunk to the round collected so far (nil for the first).
// The takeover is taken from whichever chunk carries it.
func mergeSync(round, chunk *api.SynchronizeRequest) *api.SynchronizeRequest {
	if round == nil {
		round = &api.SynchronizeRequest{}
	}
	round.Pods = append(round.Pods, chunk.GetPods()...)
	round.Containers = append(round.Containers, chunk.GetContainers()...)
	round.RemovedPods = append(round.RemovedPods, chunk.GetRemovedPods()...)
	round.RemovedContainers = append(round.RemovedContainers, chunk.GetRemovedContainers()...)
	if round.Takeover == nil {
		round.Takeover = chunk.GetTakeover()
	}
	round.Delta = round.Delta || chunk.GetDelta()
	return round
}
