package ledger

// Comparing the ledger with SyncFn: what a listing shows that the ledger
// does not (the gate's rounds take the comparisons: reseed, checkLedger).

import (
	"google.golang.org/protobuf/proto"

	"github.com/nri-handover/nri/api"
)

// Comparison is what comparing the ledger with a SyncFn listing found.
type Comparison struct {
	Done   bool // the ledger held a state to compare
	Differ int  // entries missing, extra or different
	Sample []string
}

func (c *Comparison) add(what, key string) {
	c.Differ++
	if len(c.Sample) < maxSample {
		c.Sample = append(c.Sample, what+" "+key)
	}
}

// onlyPidDiffers tells whether container a differs from listed m in its pid
// alone. containerd reads a container's pid from its live task: an exit in
// flight (its event bypasses the gate, and comes) shows as pid 0 first.
func onlyPidDiffers(a *api.Container, m proto.Message) bool {
	b, ok := m.(*api.Container)
	if a == nil || !ok || a.GetPid() == b.GetPid() {
		return false
	}
	c := proto.Clone(a).(*api.Container)
	c.Pid = b.GetPid()
	return sameObject(c, b)
}
