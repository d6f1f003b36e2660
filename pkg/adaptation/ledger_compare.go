package adaptation

// Comparing the ledger with SyncFn: what a listing shows that the ledger
// does not (the gate's rounds take the comparisons: reseed, checkLedger).

import (
	"google.golang.org/protobuf/proto"

	"github.com/nri-handover/nri/api"
)

// comparison is what comparing the ledger with a SyncFn listing found.
type comparison struct {
	done   bool // the ledger held a state to compare
	differ int  // entries missing, extra or different
	sample []string
}

func (c *comparison) add(what, key string) {
	c.differ++
	if len(c.sample) < maxSample {
		c.sample = append(c.sample, what+" "+key)
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
