package adaptation

import (
	"context"
	"errors"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nri-handover/nri/api"
)

// pauseAtSwap returns a schedule hook that, once armed, parks the first
// switch or reactivation to reach its swap (its hold held) until released.
func pauseAtSwap() (hook func(string), arm func(), atSwap, release chan struct{}) {
	var armed atomic.Bool
	var once sync.Once
	atSwap, release = make(chan struct{}), make(chan struct{})
	hook = func(point string) {
		if point == pointSwap && armed.Load() {
			once.Do(func() { close(atSwap); <-release })
		}
	}
	return hook, func() { armed.Store(true) }, atSwap, release
}

// A standby's reactivation is queued when its successor is lost; if a newer
// instance's switch held the dispatch then, that switch completes first and
// finds nobody active. The reactivation, whose reason (nobody serves the
// slot) is gone when it runs, is dropped: the newer instance stays active,
// and the standby, which stood by for an instance that is gone, is retired.
// Applied, it swapped the standby back in over the completed takeover and
// demoted the newer instance (the generation rule lets it when generations
// are undeclared, as here, or equal).
func TestStaleReactivationAfterCompletedTakeoverIsDropped(t *testing.T) {
	hook, arm, atSwap, release := pauseAtSwap()
	r, sock := startRuntime(t, newFakeRuntime(), WithStandbyGrace(time.Hour), WithScheduleHook(hook))
	defer r.Stop()

	a := handoverPlugin("10", "p", "a", 0, nil)
	a.connect(t, sock)
	defer a.close()
	waitOnlyActive(t, r, "a", "a active")
	b := handoverPlugin("10", "p", "b", 0, nil)
	b.connect(t, sock)
	defer b.close()
	waitOnlyActive(t, r, "b", "b active, a standing by")

	roles := make(chan api.PluginRole, 8)
	c := handoverPlugin("10", "p", "c", 0, nil)
	c.roleChange = func(_ context.Context, req *api.RoleChangeRequest) error {
		roles <- req.GetRole()
		return nil
	}
	arm()
	c.connect(t, sock)
	defer c.close()
	receive(t, atSwap, "c's switch holding the dispatch")
	b.close() // lost before c's swap: a's reactivation queues behind c's hold
	eventually(t, func() bool { return len(activeInstances(r, "10-p")) == 0 }, "b out of the dispatch")
	close(release)

	if got := receive(t, roles, "c's notice"); got != api.PluginRole_PLUGIN_ROLE_ACTIVE {
		t.Fatalf("c told %v", got)
	}
	var down *api.ShutdownRequest
	eventually(t, func() bool {
		select {
		case down = <-a.shutdowns:
			return true
		default:
			return slices.Equal(activeInstances(r, "10-p"), []string{"a"})
		}
	}, "a's reactivation ended")
	if got := activeInstances(r, "10-p"); !slices.Equal(got, []string{"c"}) {
		t.Fatalf("active after the stale reactivation: %q, want c", got)
	}
	if down.GetReason() != api.ShutdownReason_SHUTDOWN_REASON_SUPERSEDED || down.GetSuccessorInstance() != "c" {
		t.Errorf("a shut down with %v %q, successor %q; want SUPERSEDED by c", down.GetReason(), down.GetMessage(), down.GetSuccessorInstance())
	}
	select {
	case got := <-roles:
		t.Fatalf("c, whose takeover completed, was told %v", got)
	default:
	}
}

// The same, with the newer instance failing its ACTIVE notice: it is lost
// in turn and a second reactivation of the standby is queued. The first
// one, its reason back (nobody serves), reactivates the standby; the second
// finds it active and is dropped. It used to run with no resume cursor
// (the first had taken it) and panicked in cursor.since, taking the
// runtime down.
func TestSecondReactivationOfOneStandbyIsDropped(t *testing.T) {
	hook, arm, atSwap, release := pauseAtSwap()
	r, sock := startRuntime(t, newFakeRuntime(), WithStandbyGrace(time.Hour), WithScheduleHook(hook))
	defer r.Stop()

	aRoles := make(chan api.PluginRole, 8)
	a := handoverPlugin("10", "p", "a", 1, nil)
	a.roleChange = func(_ context.Context, req *api.RoleChangeRequest) error {
		aRoles <- req.GetRole()
		return nil
	}
	a.connect(t, sock)
	defer a.close()
	waitOnlyActive(t, r, "a", "a active")
	b := handoverPlugin("10", "p", "b", 2, nil)
	b.connect(t, sock)
	defer b.close()
	waitOnlyActive(t, r, "b", "b active, a standing by")
	for _, want := range []api.PluginRole{api.PluginRole_PLUGIN_ROLE_ACTIVE, api.PluginRole_PLUGIN_ROLE_STANDBY} {
		if got := receive(t, aRoles, "a's role"); got != want {
			t.Fatalf("a told %v, want %v", got, want)
		}
	}

	c := handoverPlugin("10", "p", "c", 3, nil)
	c.roleChange = func(_ context.Context, req *api.RoleChangeRequest) error {
		if req.GetRole() == api.PluginRole_PLUGIN_ROLE_ACTIVE {
			return errors.New("not today")
		}
		return nil
	}
	arm()
	c.connectRefused(t, sock)
	defer c.close()
	receive(t, atSwap, "c's switch holding the dispatch")
	b.close()
	eventually(t, func() bool { return len(activeInstances(r, "10-p")) == 0 }, "b out of the dispatch")
	close(release)

	if got := receive(t, aRoles, "a's reactivation"); got != api.PluginRole_PLUGIN_ROLE_ACTIVE {
		t.Fatalf("a told %v, want ACTIVE", got)
	}
	eventually(t, c.gone, "c disconnected")
	waitOnlyActive(t, r, "a", "a active again")
	// Both reactivations ended (the second dropped, not run): a is still
	// active, told nothing more, and connected.
	eventually(t, func() bool {
		r.hold.mu.Lock()
		defer r.hold.mu.Unlock()
		return len(r.hold.holders) == 0
	}, "no hold left")
	if got := activeInstances(r, "10-p"); !slices.Equal(got, []string{"a"}) {
		t.Fatalf("active: %q, want a", got)
	}
	select {
	case got := <-aRoles:
		t.Fatalf("a told %v after its reactivation", got)
	default:
	}
	if a.gone() {
		t.Fatal("the reactivated standby was disconnected")
	}
}
