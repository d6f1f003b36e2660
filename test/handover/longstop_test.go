package handover_test

import (
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/nri-handover/nri/test/plugins/record"
	testruntime "github.com/nri-handover/nri/test/runtime"
)

// containerd holds BlockPluginSync across a whole StopContainer (the pod's
// grace period, 30 s by default), StopPodSandbox and RemoveContainer. A
// takeover meanwhile (issue 30, finding 0) neither waits for that operation
// nor keeps the node's other operations out: it is synchronized from the
// ledger and switches in a hold of the dispatch. A fresh join, with nobody
// serving its events, joins as upstream's does (finding 6).
var _ = Describe("Joining beside a long graceful stop", Label("handover"), func() {
	BeforeEach(func() {
		checkLeaks()
		withTimeouts(requestTimeout, time.Second)
	})

	containerd := []testruntime.Option{testruntime.WithContainerdLocking()}

	It("a takeover commits while the stop still holds its block: nobody is kept out, A serves until the switch and B after it", func() {
		e := newEnvWith(containerd)
		a := e.start(instSpec{Instance: "a", Version: "1.0.0", Generation: 1})
		e.confirmActive(a, 1)
		e.podWith("pod", "stopping")
		stop := e.holdStop()

		By("B is synchronized from the ledger and switched to without waiting for the stop")
		b := e.start(instSpec{Instance: "b", Version: "2.0.0", Generation: 2})
		e.confirmActive(b, 1)
		Eventually(a.has(record.Shutdown, superseded, "succ=b")).Should(BeTrue())
		Expect(b.find(record.Synchronize, "kind=full", "pred=a")).To(HaveLen(1), records("B synchronized once, in full, from A", b))

		By("other runtime operations run while the stop holds its block, and B handles them")
		from := e.rt.LastSeq()
		e.othersRun("pod", "during")
		Expect(b.seqs()).To(ContainElements(seqsAfter(e.rt, from)))

		By("the stop, begun before the switch, is relayed once, to B")
		stop()
		Expect(e.rt.StopContainer(bg(), "stopping")).To(Succeed())
		_, err := e.rt.CreateContainer(bg(), testruntime.NewContainer("pod", "after"))
		Expect(err).NotTo(HaveOccurred())
		v := expectExactlyOnce(e.collect(collectOpts{inOrder: true}))
		Expect(v.Switches).To(Equal(1))
		Expect(v.Absent).To(BeZero())
		Expect(e.metrics.Outcomes("p")).To(ContainElement("completed"))
	})

	It("an opted-in plugin joining fresh joins as upstream's do: it queues for the gate and is active once the stop ended", func() {
		e := newEnvWith(containerd)
		e.podWith("pod", "stopping")
		stop := e.holdStop()

		b := e.start(instSpec{Instance: "b", Generation: 1})
		Eventually(b.has(record.Configure)).Should(BeTrue())
		Consistently(func() int { return b.count(record.Synchronize) }, "200ms").Should(BeZero(),
			"nobody serves its events: it is synchronized under the gate, after the operation in flight")

		By("once the stop ends, it synchronizes under the gate, and handles what follows")
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
