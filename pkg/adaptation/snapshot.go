package adaptation

// Deltas: what changed in the runtime's state since a cursor of the ledger,
// for the delta rounds that follow a full synchronization round.

import (
	"cmp"
	"slices"

	"github.com/nri-handover/nri/api"
)

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
