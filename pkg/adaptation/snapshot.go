package adaptation

// Snapshots and deltas: the runtime's state as SyncFn reports it, for an
// instance's full synchronization round, and what changed since, for the
// delta rounds that follow (journal.go).

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	"google.golang.org/protobuf/proto"

	"github.com/nri-handover/nri/api"
)

// snapshot is the runtime's state as SyncFn reports it, copied.
type snapshot struct {
	pods []*api.PodSandbox
	ctrs []*api.Container
}

// snapshot asks the runtime for its pods and containers without synchronizing
// anyone: the callback only copies what it is handed. A takeover needs the
// copy: it synchronizes its successor outside the runtime's SyncFn, which
// may hold locks the runtime's event path needs (containerd's does).
func (g *registry) snapshot(ctx context.Context) (*snapshot, error) {
	var s *snapshot
	err := g.runtimeState(ctx, func(pods []*api.PodSandbox, ctrs []*api.Container) {
		s = &snapshot{pods: clones(pods), ctrs: clones(ctrs)}
	})
	return s, err
}

// runtimeState calls SyncFn and hands the runtime's state to use, which must
// not keep references to it.
func (g *registry) runtimeState(ctx context.Context, use func([]*api.PodSandbox, []*api.Container)) error {
	g.r.at(pointSnapshot)
	if s := g.r.startState.Load(); s != nil { // within Start's one SyncFn call
		use(s.pods, s.ctrs)
		return nil
	}
	called := false
	err := g.r.callSyncFn(ctx, func(_ context.Context, pods []*api.PodSandbox, ctrs []*api.Container) ([]*api.ContainerUpdate, error) {
		called = true
		use(pods, ctrs)
		return nil, nil
	})
	if err == nil && !called {
		err = fmt.Errorf("runtime returned no snapshot")
	}
	if err != nil {
		return fmt.Errorf("failed to take the runtime's snapshot: %w", err)
	}
	return nil
}

func clones[T proto.Message](in []T) []T {
	out := make([]T, len(in))
	for i, m := range in {
		out[i] = proto.Clone(m).(T)
	}
	return out
}

// delta is what changed between two states of the runtime.
type delta struct {
	pods        []*api.PodSandbox
	ctrs        []*api.Container
	removedPods []string
	removedCtrs []string
}

func (d *delta) empty() bool {
	return len(d.pods)+len(d.ctrs)+len(d.removedPods)+len(d.removedCtrs) == 0
}

// sort orders every part by id, so that a delta's rounds do not depend on
// the order the journal kept them in.
func (d *delta) sort() {
	slices.SortFunc(d.pods, func(a, b *api.PodSandbox) int { return cmp.Compare(a.GetId(), b.GetId()) })
	slices.SortFunc(d.ctrs, func(a, b *api.Container) int { return cmp.Compare(a.GetId(), b.GetId()) })
	slices.Sort(d.removedPods)
	slices.Sort(d.removedCtrs)
}
