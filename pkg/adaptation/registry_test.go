package adaptation

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/nri-handover/nri/api"
)

func TestDispatchOrderIsTotal(t *testing.T) {
	mk := func(idx, base string, seq uint64) *plugin { return &plugin{idx: idx, base: base, seq: seq} }
	ps := []*plugin{mk("10", "b", 1), mk("10", "a", 5), mk("05", "z", 3), mk("10", "a", 2)}
	slices.SortFunc(ps, dispatchOrder)
	var got []string
	for _, p := range ps {
		got = append(got, p.name()+"#"+string(rune('0'+p.seq)))
	}
	want := []string{"05-z#3", "10-a#2", "10-a#5", "10-b#1"}
	if !slices.Equal(got, want) {
		t.Fatalf("order %v, want %v", got, want)
	}
}

// Without handover, instances sharing a name and index all get events, as upstream.
func TestSameNameAndIndexDispatchInRegistrationOrder(t *testing.T) {
	rt := newFakeRuntime()
	r, sock := startRuntime(t, rt, WithPluginHandover(false))
	defer r.Stop()

	rec := newRecorder()
	first := newFakePlugin("10", "twin", rec)
	first.connect(t, sock)
	defer first.close()
	receive(t, first.synced, "first twin synchronized")
	second := newFakePlugin("10", "twin", rec)
	second.connect(t, sock)
	defer second.close()
	receive(t, second.synced, "second twin synchronized")
	eventually(t, func() bool { return len(r.reg.active()) == 2 }, "both twins active")

	first.handle = func(context.Context, api.Event, any) (any, error) { rec.add("first"); return nil, nil }
	second.handle = func(context.Context, api.Event, any) (any, error) { rec.add("second"); return nil, nil }
	if err := r.StartContainer(context.Background(), &StartContainerRequest{}); err != nil {
		t.Fatal(err)
	}
	got := slices.DeleteFunc(rec.list(), func(s string) bool { return s != "first" && s != "second" })
	if !slices.Equal(got, []string{"first", "second"}) {
		t.Fatalf("twins called as %v", got)
	}
}

// Registrations of one name and index arriving at once, opted-in and
// written for upstream alike, never read each other's identity while it is
// being written (run with the race detector), and settle as the rules say
// whatever the order: the highest rollout generation is the one instance
// of the name that receives events; every other connection is refused,
// displaced or superseded, none stays beside it.
func TestConcurrentRegistrationsOfOneName(t *testing.T) {
	rt := newFakeRuntime()
	r, sock := startRuntime(t, rt)
	defer r.Stop()

	const n = 8
	plugins := make([]*fakePlugin, n)
	for i := range plugins {
		f := newFakePlugin("10", "p", nil)
		if i%2 == 0 {
			id := fmt.Sprintf("i%d", i)
			f.regReq = func(q *api.RegisterPluginRequest) {
				q.InstanceId, q.Generation = id, uint64(i+1)
				q.Features = []string{api.FeatureHandover, api.FeatureDeltaSync}
			}
		}
		f.dial(t, sock)
		defer f.close()
		plugins[i] = f
	}
	var wg sync.WaitGroup
	for _, f := range plugins {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_ = f.register(context.Background()) // refusals are checked below, by the outcome
		}()
	}
	wg.Wait()
	newest := fmt.Sprintf("i%d", n-2)
	eventually(t, func() bool {
		ids := activeInstances(r, "10-p")
		if len(ids) > 1 {
			for _, id := range ids {
				if id == newest {
					t.Fatalf("active instances of 10-p: %q: the newest beside others", ids)
				}
			}
		}
		if len(ids) != 1 || ids[0] != newest {
			return false
		}
		for i, f := range plugins {
			if i != n-2 && !f.gone() {
				return false
			}
		}
		return true
	}, "the newest generation active alone, every other connection closed")
	if plugins[n-2].gone() {
		t.Fatal("the newest instance was disconnected")
	}
}
