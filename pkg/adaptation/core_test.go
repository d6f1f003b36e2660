package adaptation

import (
	"context"
	"testing"
	"time"

	"github.com/nri-handover/nri/api"
)

// Issue 30's findings 0 and 2, against the redesigned core (ledger + hold);
// they move to switch_test.go and standby_test.go (issue 43).

// Issue 30 finding 0: a takeover commits although runtime operations hold
// BlockPluginSync without a gap (overlapping holds, one of them a long
// graceful stop): it waits for no idle instant and keeps nobody out but for
// its own hold.
func TestTakeoverCommitsWhileOperationsAlwaysHoldTheBlock(t *testing.T) {
	rt := newFakeRuntime()
	r, sock := startRuntime(t, rt)
	defer r.Stop()
	a := handoverPlugin("10", "p", "a", 1, nil)
	a.connect(t, sock)
	defer a.close()
	waitOnlyActive(t, r, "a", "a active")

	stop := r.BlockPluginSync() // a graceful stop, held throughout
	defer stop.Unblock()
	other := r.BlockPluginSync()
	for _, f := range []func(string, string, string, uint64, *recorder) *fakePlugin{handoverPlugin, optedInWithout} {
		id := "b"
		if len(r.reg.active()) == 1 && r.reg.active()[0].instance == "b" {
			id = "c"
		}
		gen := uint64(2)
		if id == "c" {
			gen = 3
		}
		succ := f("10", "p", id, gen, nil)
		succ.connect(t, sock)
		defer succ.close()
		waitOnlyActive(t, r, id, id+" active while operations hold the block")
		next := r.BlockPluginSync() // overlapping: the block is never free
		other.Unblock()
		other = next
	}
	other.Unblock()
}

// Issue 30 finding 2: the active instance lost while a standby waits and a newer
// candidate is still synchronizing: the standby serves from the next event
// (no refusal for the pending candidate), and the candidate then takes over
// from it.
func TestStandbyReactivatedBesidePendingCandidate(t *testing.T) {
	rt := newFakeRuntime()
	pod := &api.PodSandbox{Id: "p1"}
	rt.pods = []*api.PodSandbox{pod}
	r, sock := startRuntime(t, rt, WithStandbyGrace(time.Minute))
	defer r.Stop()
	recA := newRecorder()
	a := handoverPlugin("10", "p", "a", 1, recA)
	a.connect(t, sock)
	defer a.close()
	waitOnlyActive(t, r, "a", "a active")
	b := handoverPlugin("10", "p", "b", 2, nil)
	b.connect(t, sock)
	waitOnlyActive(t, r, "b", "b active, a standing by")

	c := handoverPlugin("10", "p", "c", 3, nil)
	inSync, release := holdFullRound(c)
	c.connect(t, sock)
	defer c.close()
	receive(t, inSync, "c synchronizing")
	b.close()
	waitOnlyActive(t, r, "a", "a reactivated although c is pending")
	if err := r.RunPodSandbox(context.Background(), &RunPodSandboxRequest{Pod: pod}); err != nil {
		t.Fatal(err)
	}
	if got := recA.list(); len(got) == 0 || got[len(got)-1] != "10-p:RunPodSandbox" {
		t.Fatalf("the reactivated standby did not handle the next event: %v", got)
	}
	close(release)
	waitOnlyActive(t, r, "c", "c takes over from the reactivated a")
}
