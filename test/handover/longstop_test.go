package handover_test

import (
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/nri-handover/nri/pkg/adaptation"
	"github.com/nri-handover/nri/test/plugins/record"
	testruntime "github.com/nri-handover/nri/test/runtime"
)

// Issue 17, finding 1: containerd holds BlockPluginSync across a whole
// StopContainer (the pod's grace period, 30 s by default), StopPodSandbox
// and RemoveContainer. A plugin that joins or takes over meanwhile must not
// keep the node's other runtime operations out while it waits for that one.
//
// Each spec holds one such block until it releases it, with the runtime in
// containerd's locking shape, and lets the joining instance wait past one
// request timeout (its log says so): upstream's join, and our takeover
// before this finding was fixed, queued for the gate by then, and a waiting
// writer keeps every new BlockPluginSync out until the stop ends.
var _ = Describe("Joining beside a long graceful stop", Label("handover"), func() {
	BeforeEach(func() {
		checkLeaks()
		withTimeouts(requestTimeout, time.Second)
	})

	containerd := []testruntime.Option{testruntime.WithContainerdLocking()}

	It("a takeover keeps nobody out while it waits for the stop; A serves meanwhile and B takes over once it ended", func() {
		e := newEnvWith(containerd)
		a := e.start(instSpec{Instance: "a", Version: "1.0.0", Generation: 1})
		e.confirmActive(a, 1)
		e.podWith("pod", "stopping")
		stop := e.holdStop()

		b := e.start(instSpec{Instance: "b", Version: "2.0.0", Generation: 2})
		e.waitsLogged("10-p")

		By("other runtime operations run while the stop holds its block, and A handles them")
		from := e.rt.LastSeq()
		e.othersRun("pod", "during")
		Expect(a.seqs()).To(ContainElements(seqsAfter(e.rt, from)))
		Expect(a.isActive()).To(BeTrue())
		Expect(b.events()).To(BeEmpty())
		Expect(b.count(record.Synchronize)).To(BeZero(), "B is synchronized only once the operations in flight when it joined ended")

		By("once the stop ends, B synchronizes and takes over")
		stop()
		Expect(e.rt.StopContainer(bg(), "stopping")).To(Succeed())
		e.confirmActive(b, 1)
		Eventually(a.has(record.Shutdown, superseded, "succ=b")).Should(BeTrue())
		_, err := e.rt.CreateContainer(bg(), testruntime.NewContainer("pod", "after"))
		Expect(err).NotTo(HaveOccurred())
		Expect(b.seqs()).To(ContainElements(seqsAfter(e.rt, b.activeBy[0])))
		Expect(b.find(record.Synchronize, "kind=full", "pred=a")).To(HaveLen(1), records("B synchronized once, in full, from A", b))

		v := expectExactlyOnce(e.collect(collectOpts{inOrder: true}))
		Expect(v.Switches).To(Equal(1))
		Expect(v.Absent).To(BeZero())
		Expect(e.metrics.Outcomes("p")).To(ContainElement("completed"))
	})

	It("a takeover whose patience runs out is refused with TIMEOUT, never synchronized under the gate; A keeps serving", func() {
		e := newEnvWith(containerd, adaptation.WithTakeoverPatience(3*time.Second))
		a := e.start(instSpec{Instance: "a", Generation: 1})
		e.confirmActive(a, 1)
		e.podWith("pod", "stopping")
		stop := e.holdStop()

		b := e.start(instSpec{Instance: "b", Generation: 2})
		e.waitsLogged("10-p")
		from := e.rt.LastSeq()
		e.othersRun("pod", "waiting")

		By("B is refused with the typed reason while the stop still holds its block")
		Eventually(func() bool { return b.has(record.Shutdown, timedOut)() || b.has(Exit, timedOut)() }).
			Should(BeTrue(), records("B", b))
		Eventually(b.exited).Should(BeTrue())
		Expect(e.logs.Lines()).To(ContainElement(And(ContainSubstring("10-p"), ContainSubstring("patience"))))
		Expect(b.count(record.Synchronize)).To(BeZero())
		Expect(b.count(record.RoleChange)).To(BeZero())
		Expect(e.metrics.Outcomes("p")).To(ContainElement("failed"))

		By("A is still the active instance and handles every operation, the stop still held")
		e.othersRun("pod", "refused")
		Expect(a.isActive()).To(BeTrue())
		Expect(a.count(record.Shutdown)).To(BeZero())
		Expect(a.seqs()).To(ContainElements(seqsAfter(e.rt, from)))

		stop()
		Expect(e.rt.StopContainer(bg(), "stopping")).To(Succeed())
		Expect(e.rt.Lifecycle(bg(), "pod-after", "ctr-after")).To(Succeed())
		Expect(a.seqs()).To(ContainElements(seqsAfter(e.rt, from)))
		Expect(b.events()).To(BeEmpty())
		v := expectExactlyOnce(e.collect(collectOpts{inOrder: true}))
		Expect(v.Switches).To(BeZero())
		Expect(v.Absent).To(BeZero())
	})

	It("an opted-in plugin with delta rounds joining fresh keeps nobody out, and is active once the stop ended", func() {
		e := newEnvWith(containerd)
		e.podWith("pod", "stopping")
		stop := e.holdStop()

		b := e.start(instSpec{Instance: "b", Generation: 1})
		Eventually(b.has(record.Configure)).Should(BeTrue())
		e.othersRun("pod", "configured")
		e.waitsLogged("10-p")

		By("other runtime operations run while it waits for the stop")
		e.othersRun("pod", "during")
		Expect(b.count(record.Synchronize)).To(BeZero())
		Expect(b.events()).To(BeEmpty())

		By("once the stop ends, it synchronizes (phase 1), commits and handles what follows")
		stop()
		Expect(e.rt.StopContainer(bg(), "stopping")).To(Succeed())
		e.confirmActive(b, 1)
		Expect(e.rt.Lifecycle(bg(), "pod-after", "ctr-after")).To(Succeed())
		Expect(b.seqs()).To(ContainElements(seqsAfter(e.rt, b.activeBy[0])))
		Expect(b.find(record.Synchronize, "kind=full")).To(HaveLen(1), records("one full round", b))
	})
})

// podWith runs a pod with a running container.
func (e *env) podWith(pod, ctr string) {
	ExpectWithOffset(1, e.rt.RunPod(bg(), testruntime.NewPod(pod))).To(Succeed())
	_, err := e.rt.CreateContainer(bg(), testruntime.NewContainer(pod, ctr))
	ExpectWithOffset(1, err).NotTo(HaveOccurred())
	ExpectWithOffset(1, e.rt.StartContainer(bg(), ctr)).To(Succeed())
}

// holdStop takes BlockPluginSync as containerd does across a graceful
// StopContainer and keeps it until the returned release (or the spec's
// cleanup) is called.
func (e *env) holdStop() (release func()) {
	blk := e.rt.Adaptation().BlockPluginSync()
	var once sync.Once
	release = func() { once.Do(blk.Unblock) }
	DeferCleanup(release)
	return release
}

// waitsLogged waits until the adaptation logged that plugin waits for
// runtime operations in flight: it has waited a request timeout by then.
func (e *env) waitsLogged(plugin string) {
	EventuallyWithOffset(1, e.logs.Lines).Should(ContainElement(And(ContainSubstring(plugin),
		ContainSubstring("runtime operations in flight"))), "the joining instance waited a request timeout")
}

// othersRun runs other runtime operations, each on a goroutine of its own:
// a BlockPluginSync round trip and a CreateContainer (which holds the block,
// then containerd's NRI lock). Both must complete; no deadline of their own
// is asserted, only that they are not kept out.
func (e *env) othersRun(pod, ctr string) {
	blocked := make(chan struct{})
	go func() {
		defer close(blocked)
		e.rt.Adaptation().BlockPluginSync().Unblock()
	}()
	created := make(chan error, 1)
	go func() {
		_, err := e.rt.CreateContainer(bg(), testruntime.NewContainer(pod, ctr))
		created <- err
	}()
	EventuallyWithOffset(1, blocked).Should(BeClosed(), "a BlockPluginSync round trip is kept out")
	var err error
	EventuallyWithOffset(1, created).Should(Receive(&err), "CreateContainer is kept out")
	ExpectWithOffset(1, err).NotTo(HaveOccurred())
}
