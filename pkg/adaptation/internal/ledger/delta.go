package ledger

// Deltas: what changed in the runtime's state since a cursor of the ledger,
// for the delta rounds that follow a full synchronization round.

import (
	"cmp"
	"slices"

	"github.com/nri-handover/nri/api"
)

// Delta is what changed between two states of the runtime.
type Delta struct {
	Pods        []*api.PodSandbox
	Ctrs        []*api.Container
	RemovedPods []string
	RemovedCtrs []string
}

func (d *Delta) Empty() bool {
	return len(d.Pods)+len(d.Ctrs)+len(d.RemovedPods)+len(d.RemovedCtrs) == 0
}

// Sort orders every part by id, so that a delta's rounds do not depend on
// the order the ledger keeps them in (a map, and its log of changes).
func (d *Delta) Sort() {
	slices.SortFunc(d.Pods, func(a, b *api.PodSandbox) int { return cmp.Compare(a.GetId(), b.GetId()) })
	slices.SortFunc(d.Ctrs, func(a, b *api.Container) int { return cmp.Compare(a.GetId(), b.GetId()) })
	slices.Sort(d.RemovedPods)
	slices.Sort(d.RemovedCtrs)
}
