package legacyhandover

import (
	"testing"

	"github.com/nri-handover/nri/test/e2e/harness"
	"github.com/nri-handover/nri/test/plugins/record"
)

// rollout starts the plugin in pod a (generation 1), then in pod b
// (generation 2), both annotated, and returns them once b took over.
func rollout(t *testing.T, e *env) (a, b *plug, podA, podB *pod) {
	t.Helper()
	podA = e.runPod(ds("lho-a", 1, true))
	a = e.start(podA)
	a.synchronized(t, 1)
	e.handledBy([]*plug{a})
	podB = e.runPod(ds("lho-b", 2, true))
	b = e.start(podB)
	b.synchronized(t, 1)
	return a, b, podA, podB
}

// Forward: the newer pod's instance takes one full Synchronize and every
// event from its switch on; the older stays connected, gets no event, no
// Shutdown, no second Synchronize, and its updates are refused naming the
// newer one.
func TestForwardRollout(t *testing.T) {
	eachStub(t, func(t *testing.T, stub harness.SkewPeer) {
		e := newEnv(t, stub)
		a, b, _, podB := rollout(t, e)
		for range 3 {
			e.handledBy([]*plug{b}, a)
		}
		if got := b.unsolicited(t); got != "ok" {
			t.Errorf("the active instance's update refused: %s", got)
		}
		a.idleBehind(t, podB)
		if a.exited() || a.count(record.Shutdown) != 0 || a.count(record.Synchronize) != 1 {
			t.Fatalf("older instance: exited %v, %d Shutdown, %d Synchronize; want connected, 0, 1",
				a.exited(), a.count(record.Shutdown), a.count(record.Synchronize))
		}
	})
}

// Rollback: a higher pod-template-generation takes over whatever it runs
// (here the same binary: the runtime decides from the pod, never from the
// plugin); the instance it replaces goes idle too.
func TestRollbackTakesOver(t *testing.T) {
	eachStub(t, func(t *testing.T, stub harness.SkewPeer) {
		e := newEnv(t, stub)
		a, b, _, _ := rollout(t, e)
		podC := e.runPod(ds("lho-c", 3, true))
		c := e.start(podC)
		c.synchronized(t, 1)
		e.handledBy([]*plug{c}, a, b)
		b.idleBehind(t, podC)
		a.idleBehind(t, podC)
	})
}

// The older instance restarted (its container, in its pod): it connects
// again, stays idle and is never synchronized; the newer keeps every event.
func TestOlderInstanceRestartsIdle(t *testing.T) {
	eachStub(t, func(t *testing.T, stub harness.SkewPeer) {
		e := newEnv(t, stub)
		a, b, podA, podB := rollout(t, e)
		a.kill()
		a2 := e.start(podA)
		a2.idleBehind(t, podB)
		e.handledBy([]*plug{b}, a2)
		if n := a2.count(record.Synchronize); n != 0 {
			t.Fatalf("restarted older instance synchronized %d times, want 0", n)
		}
	})
}

// The newer instance dies after the switch: the older one gets a second
// full Synchronize on its connection, under the gate, and every event from
// then on; the newer one restarted takes over again. Every stub release
// here (v0.8.0, v0.10.0, v0.12.5) hands the second Synchronize to the
// plugin's handler like the first, with the runtime's state of now (the
// containers created while it was idle): none keeps state about having
// been synchronized (pkg/stub/stub.go, collectSync and deliverSync).
func TestNewerDiesAfterSwitch(t *testing.T) {
	eachStub(t, func(t *testing.T, stub harness.SkewPeer) {
		e := newEnv(t, stub)
		a, b, _, podB := rollout(t, e)
		e.handledBy([]*plug{b}, a)
		b.kill()
		a.synchronized(t, 2)
		syncs := a.syncs()
		if len(syncs) != 2 || syncs[1].Ctrs <= syncs[0].Ctrs {
			t.Fatalf("the older instance's Synchronize rounds %+v: want a second one with the containers created since the first", syncs)
		}
		e.handledBy([]*plug{a}, b)
		if got := a.unsolicited(t); got != "ok" {
			t.Errorf("the reactivated instance's update refused: %s", got)
		}
		b2 := e.start(podB)
		b2.synchronized(t, 1)
		e.handledBy([]*plug{b2}, a)
		a.idleBehind(t, podB)
	})
}

// The newer instance dies in its Synchronize: the older never stopped
// receiving events; the newer restarted takes over.
func TestNewerDiesMidSynchronization(t *testing.T) {
	eachStub(t, func(t *testing.T, stub harness.SkewPeer) {
		e := newEnv(t, stub)
		podA := e.runPod(ds("lho-a", 1, true))
		a := e.start(podA)
		a.synchronized(t, 1)
		podB := e.runPod(ds("lho-b", 2, true))
		b := e.start(podB, "-die-in-synchronize")
		b.synchronized(t, 1)
		eventually(t, "the newer instance exited", b.exited)
		e.handledBy([]*plug{a}, b)
		if a.count(record.Synchronize) != 1 {
			t.Fatalf("the older instance was synchronized again")
		}
		b2 := e.start(podB)
		b2.synchronized(t, 1)
		e.handledBy([]*plug{b2}, a)
	})
}

// A pod of another namespace or of another DaemonSet, annotated, with the
// plugin's name and a higher generation: not an instance of the plugin.
// It takes nothing over and runs beside it, as upstream runs two plugins
// of one name: both get every event.
func TestOtherWorkloadRunsBeside(t *testing.T) {
	eachStub(t, func(t *testing.T, stub harness.SkewPeer) {
		for _, s := range []podSpec{
			{name: "lho-other-ns", ns: "other", app: "lho", gen: 9, annotated: true},
			{name: "lho-other-app", ns: "kube-system", app: "impostor", gen: 9, annotated: true},
		} {
			t.Run(s.name, func(t *testing.T) {
				e := newEnv(t, stub)
				podA := e.runPod(ds("lho-a", 1, true))
				a := e.start(podA)
				a.synchronized(t, 1)
				o := e.start(e.runPod(s))
				o.synchronized(t, 1)
				e.handledBy([]*plug{a, o})
				for _, p := range []*plug{a, o} {
					if got := p.unsolicited(t); got != "ok" {
						t.Errorf("%s: update refused: %s", p.name, got)
					}
				}
			})
		}
	})
}

// The annotation on only one of the two pods (the rollout that adds it, or
// the one that removes it), or on neither: upstream's behaviour, both
// instances get every event.
func TestAnnotationOnOnePodIsUpstream(t *testing.T) {
	eachStub(t, func(t *testing.T, stub harness.SkewPeer) {
		for _, c := range []struct {
			name   string
			aAnnot bool
			bAnnot bool
		}{
			{"older only", true, false},
			{"newer only", false, true},
			{"neither", false, false},
		} {
			t.Run(c.name, func(t *testing.T) {
				e := newEnv(t, stub)
				a := e.start(e.runPod(ds("lho-a", 1, c.aAnnot)))
				a.synchronized(t, 1)
				b := e.start(e.runPod(ds("lho-b", 2, c.bAnnot)))
				b.synchronized(t, 1)
				e.handledBy([]*plug{a, b})
				for _, p := range []*plug{a, b} {
					if got := p.unsolicited(t); got != "ok" {
						t.Errorf("%s: update refused: %s", p.name, got)
					}
				}
				if a.exited() || a.count(record.Synchronize) != 1 {
					t.Fatalf("older instance: exited %v, %d Synchronize; want connected, 1", a.exited(), a.count(record.Synchronize))
				}
			})
		}
	})
}
