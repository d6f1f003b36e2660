package adaptation

// Comparing the ledger with SyncFn: what a listing shows that the ledger
// does not, counted, logged and reported, and when a comparison is taken.

import (
	"context"
	"errors"
	"strings"
	"time"

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

// reseed compares the ledger with what SyncFn returned, says what differs
// (the log and LedgerMetrics), and records the listing. It runs inside a
// SyncCB, under the sync gate; from is the ledger's version read before
// SyncFn was called.
func (r *Adaptation) reseed(from uint64, pods []*api.PodSandbox, ctrs []*api.Container) {
	c := r.ledger.seed(from, pods, ctrs)
	if !c.done {
		return
	}
	if c.differ == 0 {
		r.log.Infof(r.ctx, "ledger compared with SyncFn: 0 differ")
	} else {
		r.log.Warnf(r.ctx, "ledger compared with SyncFn: %d differ (%s); takeovers join under the sync gate until a comparison finds none",
			c.differ, strings.Join(c.sample, ", "))
	}
	if m, ok := r.metrics.(LedgerMetrics); ok {
		m.RecordLedgerComparison(c.differ)
	}
}

// checkWait bounds how long checkLedger's caller waits for the comparison.
// Once the gate is taken, a hold queued meanwhile (an instance lost, a
// switch) can keep out an event that holds the runtime's own lock, which
// SyncFn takes; that hold may be waiting for the caller. The comparison
// goes on without the caller then, holding the gate until SyncFn returns.
const checkWait = 500 * time.Millisecond

// checkLedger compares the ledger with SyncFn, and reseeds it, if the sync
// gate can be taken at once and no hold is queued (while one is, an event
// waiting for it may hold the runtime's lock, which SyncFn takes): it never
// waits for the runtime's operations, and calls SyncFn only under the gate,
// as everywhere. It is called before a takeover would be synchronized from
// the ledger, where a join would cost a SyncFn call anyway, and by a
// registration that finds the ledger dropped.
func (r *Adaptation) checkLedger(ctx context.Context) {
	if !r.handover || !r.hold.idle() {
		return
	}
	done := make(chan struct{})
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		defer close(done)
		err := r.syncRound(r.ctx, gateRound{noWait: true})
		if err != nil && !errors.Is(err, errGateBusy) && r.ctx.Err() == nil {
			r.log.Warnf(r.ctx, "failed to compare the ledger with SyncFn: %v", err)
		}
	}()
	t := time.NewTimer(checkWait)
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
		r.log.Infof(ctx, "comparing the ledger with SyncFn takes longer than %v: going on without it", checkWait)
	case <-ctx.Done():
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
