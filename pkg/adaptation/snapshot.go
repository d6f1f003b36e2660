package adaptation

// The runtime's state as SyncFn reports it, for a full synchronization round
// under the sync gate, and deltas: what changed since, for the delta rounds
// that follow (ledger.go).

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	"github.com/nri-handover/nri/api"
)

// runtimeState calls SyncFn and hands the runtime's state to use, which must
// not keep references to it. The caller holds the sync gate exclusively:
// SyncFn is called nowhere else (a runtime's SyncFn may rewrite its own
// per-container state, which an operation in flight still needs).
func (g *registry) runtimeState(ctx context.Context, use func([]*api.PodSandbox, []*api.Container)) error {
	g.r.at(pointSnapshot)
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
// the order the ledger keeps them in (a map, and its log of changes).
func (d *delta) sort() {
	slices.SortFunc(d.pods, func(a, b *api.PodSandbox) int { return cmp.Compare(a.GetId(), b.GetId()) })
	slices.SortFunc(d.ctrs, func(a, b *api.Container) int { return cmp.Compare(a.GetId(), b.GetId()) })
	slices.Sort(d.removedPods)
	slices.Sort(d.removedCtrs)
}
