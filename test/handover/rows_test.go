package handover_test

import (
	"path/filepath"
	"slices"
	"syscall"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/nri-handover/nri/pkg/adaptation"
	"github.com/nri-handover/nri/test/e2e/harness"
	"github.com/nri-handover/nri/test/plugins/record"
	testruntime "github.com/nri-handover/nri/test/runtime"
)

// Shutdown reasons as the plugin records them.
const (
	superseded   = "reason=SHUTDOWN_REASON_SUPERSEDED"
	rejected     = "reason=SHUTDOWN_REASON_REGISTRATION_REJECTED"
	syncFailed   = "reason=SHUTDOWN_REASON_SYNCHRONIZATION_FAILED"
	timedOut     = "reason=SHUTDOWN_REASON_TIMEOUT"
	runtimeStops = "reason=SHUTDOWN_REASON_RUNTIME_SHUTDOWN"
)

// seqsAfter returns the runtime's sequence numbers above from.
func seqsAfter(rt *testruntime.Runtime, from uint64) []uint64 {
	var out []uint64
	for _, e := range rt.Record() {
		if e.Seq > from {
			out = append(out, e.Seq)
		}
	}
	return out
}

// lineIndex is the position in a shared record of the first line of kind ev
// written by in (-1 if none): the file's order is the order of the writes.
func lineIndex(path string, in *instance, ev string, pairs ...string) int {
	lines, err := record.Read(path)
	Expect(err).NotTo(HaveOccurred())
	pid := in.proc.Pid()
	for i, l := range lines {
		if l.Pid == pid && len(findLines([]record.Line{l}, ev, pairs...)) == 1 {
			return i
		}
	}
	return -1
}

// expectExactlyOnce runs the checker and expects a clean verdict.
func expectExactlyOnce(in runInput) *verdict {
	v := checkExactlyOnce(in)
	AddReportEntry("exactly-once verdict", v.String())
	ExpectWithOffset(1, v.Violations).To(BeEmpty(), v.String())
	return v
}

var _ = Describe("Plugin handover", Label("handover"), func() {
	BeforeEach(func() {
		checkLeaks()
		withTimeouts(requestTimeout, requestTimeout)
	})

	It("row 1: rollout: B synchronizes while A keeps handling events, then one atomic switch", func() {
		e := newEnv()
		shared := filepath.Join(e.dir, "shared.rec")
		a := e.start(instSpec{Instance: "a", Version: "1.0.0", Generation: 1, Record: shared})
		e.confirmActive(a, 1)
		Expect(e.rt.Lifecycle(bg(), "pod-before", "ctr-before")).To(Succeed())

		b := e.start(instSpec{Instance: "b", Version: "2.0.0", Generation: 2, Record: shared, HangAt: "synchronize"})
		Eventually(b.has(record.Hang, "step=synchronize")).Should(BeTrue())

		By("A handles every event while B is held in its synchronization")
		held := e.rt.LastSeq()
		Expect(e.rt.Lifecycle(bg(), "pod-during", "ctr-during")).To(Succeed())
		Expect(e.rt.RunPod(bg(), testruntime.NewPod("pod-delta"))).To(Succeed())
		_, err := e.rt.CreateContainer(bg(), testruntime.NewContainer("pod-delta", "ctr-delta"))
		Expect(err).NotTo(HaveOccurred())
		Expect(a.seqs()).To(ContainElements(seqsAfter(e.rt, held)))
		Expect(b.events()).To(BeEmpty())
		Expect(b.exited()).To(BeFalse())

		By("B takes over once released")
		b.signal(syscall.SIGUSR2)
		e.confirmActive(b, 1)
		Expect(e.rt.Lifecycle(bg(), "pod-after", "ctr-after")).To(Succeed())
		Expect(b.seqs()).To(ContainElements(seqsAfter(e.rt, b.activeBy[0])))

		Expect(b.find(record.Synchronize, "kind=full", "pred=a", "predver=1.0.0", "predgen=1")).To(HaveLen(1),
			records("B learns whom it takes over from", b))
		Expect(b.find(record.Synchronize, "kind=delta")).NotTo(BeEmpty(), records("B catches up with a delta round", b))

		By("A hears it stands by, naming B, before B hears it is active; once B took the role, A is superseded and disconnected")
		Eventually(a.has(record.Shutdown, superseded, "succ=b", "succver=2.0.0", "succgen=2")).Should(BeTrue())
		Eventually(a.has(Closed)).Should(BeTrue())
		Expect(a.find(record.RoleChange, "role=STANDBY", "peer=b")).To(HaveLen(1), records("A stands by for B", a))
		Expect(lineIndex(shared, a, record.RoleChange, "role=STANDBY")).To(BeNumerically("<", lineIndex(shared, b, record.RoleChange, "role=ACTIVE")))
		Expect(lineIndex(shared, b, record.RoleChange, "role=ACTIVE")).To(BeNumerically("<", lineIndex(shared, a, record.Shutdown)))
		Expect(lineIndex(shared, a, record.Shutdown)).To(BeNumerically("<", lineIndex(shared, a, Closed)))

		By("only B is ready; the superseded A stays up, not ready")
		Expect(b.readyFile).To(BeAnExistingFile())
		Expect(a.readyFile).NotTo(BeAnExistingFile())
		Expect(a.exited()).To(BeFalse())
		Expect(a.count(Ready)).To(Equal(1))

		v := expectExactlyOnce(e.collect(collectOpts{inOrder: true}))
		Expect(v.Switches).To(Equal(1))
		Expect(v.Absent).To(BeZero())
		Expect(v.Owned).To(Equal(v.Events))

		By("the handover is logged naming both instances and counted in metrics")
		Expect(e.logs.Lines()).To(ContainElement(And(ContainSubstring("instance a"), ContainSubstring("instance b"))))
		Expect(e.metrics.Outcomes("p")).To(ContainElement("completed"))
	})

	It("row 2: B with a different index is the same plugin and takes its own place in the order", func() {
		e := newEnv()
		shared := filepath.Join(e.dir, "shared.rec")
		a := e.start(instSpec{Instance: "a", Idx: "10", Generation: 1, Record: shared})
		e.confirmActive(a, 1)
		q := e.start(instSpec{Name: "q", Instance: "q", Idx: "20", Record: shared})
		e.confirmActive(q, 1)
		before := e.rt.LastSeq()
		Expect(e.rt.Lifecycle(bg(), "pod1", "ctr1")).To(Succeed())

		b := e.start(instSpec{Instance: "b", Idx: "30", Generation: 2, Record: shared})
		e.confirmActive(b, 1)
		Eventually(a.has(record.Shutdown, superseded, "succ=b")).Should(BeTrue())
		Expect(q.count(record.Shutdown)).To(BeZero(), "another plugin name is not affected")
		after := e.rt.LastSeq()
		Expect(e.rt.Lifecycle(bg(), "pod2", "ctr2")).To(Succeed())

		lines, err := record.Read(shared)
		Expect(err).NotTo(HaveOccurred())
		order := func(seq uint64) []string {
			var out []string
			for _, l := range lines {
				if isEvent(l.Ev) && l.Seq == seq {
					out = append(out, l.Idx+"-"+l.Name)
				}
			}
			return out
		}
		for _, ev := range e.rt.Record() {
			switch {
			case ev.Seq > before && ev.Seq <= before+13:
				Expect(order(ev.Seq)).To(Equal([]string{"10-p", "20-q"}), "seq %d", ev.Seq)
			case ev.Seq > after:
				Expect(order(ev.Seq)).To(Equal([]string{"20-q", "30-p"}), "seq %d", ev.Seq)
			}
		}
		expectExactlyOnce(e.collect(collectOpts{noWire: true}))
	})

	DescribeTable("row 3: rollback to an older version",
		func(refuse bool) {
			var opts []adaptation.Option
			if refuse {
				opts = append(opts, refuseDowngrades())
			}
			e := newEnv(opts...)
			a := e.start(instSpec{Instance: "a", Version: "2.0.0", Generation: 1})
			e.confirmActive(a, 1)
			Expect(e.rt.Lifecycle(bg(), "pod0", "ctr0")).To(Succeed())
			b := e.start(instSpec{Instance: "b", Version: "1.0.0", Generation: 2})

			if refuse {
				Eventually(b.has(record.Shutdown, rejected)).Should(BeTrue())
				Eventually(b.has(Exit, "is=rejected")).Should(BeTrue())
				Expect(b.find(record.Shutdown)[0].Err).To(And(ContainSubstring("1.0.0"), ContainSubstring("2.0.0")))
				mark := e.rt.LastSeq()
				Expect(e.rt.Lifecycle(bg(), "pod1", "ctr1")).To(Succeed())
				Expect(a.seqs()).To(ContainElements(seqsAfter(e.rt, mark)))
				Expect(a.isActive()).To(BeTrue())
				Expect(b.events()).To(BeEmpty())
				Expect(e.metrics.Outcomes("p")).To(ContainElement("rejected"))
				expectExactlyOnce(e.collect(collectOpts{inOrder: true}))
				return
			}

			e.confirmActive(b, 1)
			Eventually(a.has(record.Shutdown, superseded, "succ=b", "succver=1.0.0")).Should(BeTrue())
			Expect(a.events()).NotTo(BeEmpty(), "A handled the events before the switch")
			Expect(b.find(record.Synchronize, "kind=full", "pred=a", "predver=2.0.0")).To(HaveLen(1))
			Expect(b.find(record.RoleChange, "role=ACTIVE", "peer=a", "peerver=2.0.0")).To(HaveLen(1))
			Expect(e.rt.Lifecycle(bg(), "pod1", "ctr1")).To(Succeed())
			Expect(b.seqs()).To(ContainElements(seqsAfter(e.rt, b.activeBy[0])))
			Expect(e.logs.Lines()).To(ContainElement(And(ContainSubstring("version 2.0.0"), ContainSubstring("version 1.0.0"))))
			Expect(e.metrics.Outcomes("p")).To(ContainElement("completed"))
			v := expectExactlyOnce(e.collect(collectOpts{inOrder: true}))
			Expect(v.Switches).To(Equal(1))
		},
		Entry("is taken over by default: versions never block a rollback", false),
		Entry("is refused with WithRefuseDowngrades", true),
	)

	DescribeTable("row 4: a superseded instance restarted by the kubelet does not take over again",
		func(old, restarted instSpec, successorGen uint64) {
			e := newEnv()
			a := e.start(old)
			e.confirmActive(a, 1)
			b := e.start(instSpec{Instance: "b", Generation: successorGen})
			e.confirmActive(b, 1)
			Eventually(a.has(record.Shutdown, superseded)).Should(BeTrue())
			reap(a.proc) // the kubelet restarts the container

			for range 2 { // and again: it never flaps back
				r := e.start(restarted)
				Eventually(r.has(record.Shutdown, rejected)).Should(BeTrue(), records("restarted", r))
				Eventually(r.has(Exit, "is=rejected")).Should(BeTrue())
				Expect(r.events()).To(BeEmpty())
				Expect(b.isActive()).To(BeTrue())
			}
			mark := e.rt.LastSeq()
			Expect(e.rt.Lifecycle(bg(), "pod1", "ctr1")).To(Succeed())
			Expect(b.seqs()).To(ContainElements(seqsAfter(e.rt, mark)))
			Expect(b.count(record.Shutdown)).To(BeZero())
			expectExactlyOnce(e.collect(collectOpts{inOrder: true}))

			By("once its successor is gone, the old instance may take over again")
			reap(b.proc)
			Eventually(e.metrics.PluginCount).Should(BeZero())
			r := e.start(restarted)
			e.confirmActive(r, 1)
		},
		Entry("by remembered instance identity",
			instSpec{Instance: "a"}, instSpec{Instance: "a"}, uint64(0)),
		Entry("by rollout generation",
			instSpec{Instance: "a-pod1", Generation: 1}, instSpec{Instance: "a-pod2", Generation: 1}, uint64(2)),
		Entry("by both",
			instSpec{Instance: "a", Generation: 1}, instSpec{Instance: "a", Generation: 1}, uint64(2)),
	)

	DescribeTable("row 5: B fails before the switch; A stays active without a gap",
		func(fail instSpec, hold, shortTimeout bool, reason, exit string) {
			if shortTimeout {
				withTimeouts(requestTimeout, time.Second)
			}
			e := newEnv()
			a := e.start(instSpec{Instance: "a", Generation: 5})
			e.confirmActive(a, 1)
			s := startStream(e.rt, "s", 1_000_000)
			DeferCleanup(s.stop)
			e.waitEvents(20)

			fail.Instance = "b"
			if fail.Generation == 0 {
				fail.Generation = 6
			}
			if hold {
				fail.HangAt = "synchronize"
			}
			b := e.start(fail)
			if hold { // let the state change under B's feet so that a delta round follows
				Eventually(b.has(record.Hang, "step=synchronize")).Should(BeTrue())
				e.waitEvents(20)
				b.signal(syscall.SIGUSR2)
			}
			if reason != "" { // told why: by its Shutdown handler or by Run's error (row 8 requires both)
				Eventually(func() bool { return b.has(record.Shutdown, reason)() || b.has(Exit, reason)() }).
					Should(BeTrue(), records("B", b))
			}
			if exit != "" {
				Eventually(b.has(Exit, "is="+exit)).Should(BeTrue(), records("B", b))
			} else {
				Eventually(b.exited).Should(BeTrue())
			}
			e.waitEvents(20)
			Expect(s.stop()).To(Succeed())

			Expect(b.events()).To(BeEmpty())
			Expect(b.count(record.RoleChange)).To(BeZero())
			Expect(a.isActive()).To(BeTrue())
			Expect(a.count(record.Shutdown)).To(BeZero())
			v := expectExactlyOnce(e.collect(collectOpts{inOrder: true}))
			Expect(v.Switches).To(BeZero())
			Expect(v.Absent).To(BeZero())
			Expect(v.Owned).To(Equal(v.Events))
		},
		Entry("registration rejected (older rollout generation)", instSpec{Generation: 4}, false, false, rejected, "rejected"),
		Entry("Configure error", instSpec{FailAt: "configure"}, false, false, rejected, "rejected"),
		Entry("Synchronize error", instSpec{FailAt: "synchronize"}, false, false, syncFailed, "sync-failed"),
		Entry("Synchronize timeout", instSpec{HangAt: "synchronize"}, false, true, timedOut, "timeout"),
		Entry("error in the delta round", instSpec{FailAt: "delta"}, true, false, syncFailed, "sync-failed"),
		Entry("crash in Synchronize", instSpec{CrashAt: "synchronize"}, false, false, "", ""),
		Entry("kill -9 in Configure", instSpec{DieAt: "configure"}, false, false, "", ""),
		Entry("kill -9 in Synchronize", instSpec{DieAt: "synchronize"}, false, false, "", ""),
		Entry("kill -9 in the delta round", instSpec{DieAt: "delta"}, true, false, "", ""),
	)

	Describe("row 6: B dies after the switch", func() {
		It("by default, A is gone and the plugin is absent until B's restart registers", func() {
			e := newEnv()
			a := e.start(instSpec{Instance: "a", Generation: 1})
			e.confirmActive(a, 1)
			s := startStream(e.rt, "s", 1_000_000)
			DeferCleanup(s.stop)
			e.waitEvents(20)

			b := e.start(instSpec{Instance: "b", Generation: 2, DieAt: "event:5"})
			Eventually(b.died).Should(BeTrue())
			Eventually(a.has(record.Shutdown, superseded, "succ=b")).Should(BeTrue())
			Eventually(a.has(Closed)).Should(BeTrue(), records("A is disconnected, not kept", a))
			e.waitEvents(20)

			b2 := e.start(instSpec{Instance: "b", Generation: 2}) // B's restart
			e.confirmActive(b2, 1)
			e.waitEvents(20)
			Expect(s.stop()).To(Succeed())
			Expect(b2.find(record.Synchronize, "kind=full", "pred=b")).To(BeEmpty(), "nobody to take over from")

			v := expectExactlyOnce(e.collect(collectOpts{inOrder: true}))
			AddReportEntry("events without the plugin (documented baseline)", v.Absent)
			Expect(a.count(record.RoleChange, "role=ACTIVE")).To(Equal(1), "A is never brought back")
			Expect(v.Absent).To(BeNumerically(">", 0), "the events between B's death and its restart had no plugin")
			Expect(b2.seqs()).To(ContainElements(seqsAfter(e.rt, b2.activeBy[0])), "B's restart has the plugin's events again")
		})

		It("with a standby grace period, A is told what changed since it stood by and reactivated without losing an event", func() {
			e := newEnv(standbyGrace(time.Minute))
			a := e.start(instSpec{Instance: "a", Generation: 1})
			e.confirmActive(a, 1)
			s := startStream(e.rt, "s", 1_000_000)
			DeferCleanup(s.stop)
			e.waitEvents(20)

			b := e.start(instSpec{Instance: "b", Generation: 2, DieAt: "event:5"})
			Eventually(a.has(record.RoleChange, "role=STANDBY", "peer=b")).Should(BeTrue())
			Eventually(b.died).Should(BeTrue())
			e.confirmActive(a, 2)
			Expect(a.find(record.Synchronize, "kind=delta", "react=true", "pred=b")).To(HaveLen(1), records("A", a))
			Expect(a.count(record.Shutdown)).To(BeZero())
			e.waitEvents(20)
			Expect(s.stop()).To(Succeed())
			Expect(e.metrics.Outcomes("p")).To(ContainElement("reactivated"))

			// strict: only the rest of the runtime operation in progress when
			// B died (its post-event) may pass without an instance.
			v := expectExactlyOnce(e.collect(collectOpts{inOrder: true, strict: true}))
			Expect(v.Absent).To(BeNumerically("<=", 1))
		})

		It("with a standby grace period, a reactivated A superseded again ends in the role decided last", func() {
			e := newEnv(standbyGrace(time.Hour))
			a := e.start(instSpec{Instance: "a", Generation: 1, HangAt: "active:2"})
			e.confirmActive(a, 1)
			s := startStream(e.rt, "s", 1_000_000)
			DeferCleanup(s.stop)
			e.waitEvents(20)

			b := e.start(instSpec{Instance: "b", Generation: 2, DieAt: "event:3"})
			Eventually(b.died).Should(BeTrue())
			// A is reactivated; it holds the RoleChange(ACTIVE) telling it so.
			Eventually(a.has(record.Hang, "step=active:2")).Should(BeTrue(), records("A", a))
			// Role notices are sent under the adaptation's lock, so no event
			// moves while A holds its ACTIVE notice; C's first phase needs no
			// lock and takes over from the reactivated A.
			c := e.start(instSpec{Instance: "c", Generation: 3})
			Eventually(c.has(record.Synchronize, "pred=a")).Should(BeTrue(), records("C", c))
			a.signal(syscall.SIGUSR2)
			e.confirmActive(c, 1)

			// Once the runtime has A's answer to the reactivation, A must
			// still end up a standby, not ready: C is the active instance.
			Eventually(func() int {
				n := 0
				for _, snd := range e.trace.Sends() {
					if snd.Conn == 1 && snd.Method == "RoleChange" && snd.Detail == "PLUGIN_ROLE_ACTIVE" && snd.Done {
						n++
					}
				}
				return n
			}).Should(Equal(2))
			Eventually(a.readyFile).ShouldNot(BeAnExistingFile(), records("A believes it is active", a))
			Expect(c.readyFile).To(BeAnExistingFile())
			e.waitEvents(20)
			Expect(s.stop()).To(Succeed())
			expectExactlyOnce(e.collect(collectOpts{inOrder: true, strict: true}))
		})

		It("with a standby grace period, A is shut down when B survives it", func() {
			e := newEnv(standbyGrace(200 * time.Millisecond))
			a := e.start(instSpec{Instance: "a", Generation: 1})
			e.confirmActive(a, 1)
			b := e.start(instSpec{Instance: "b", Generation: 2})
			e.confirmActive(b, 1)
			Eventually(a.has(record.RoleChange, "role=STANDBY", "peer=b")).Should(BeTrue())
			Eventually(a.has(record.Shutdown, superseded, "succ=b")).Should(BeTrue())
			Eventually(a.has(Closed)).Should(BeTrue())
			Expect(e.rt.Lifecycle(bg(), "pod1", "ctr1")).To(Succeed())
			Expect(b.isActive()).To(BeTrue())
			expectExactlyOnce(e.collect(collectOpts{inOrder: true}))
		})
	})

	DescribeTable("row 7: A's unsolicited updates after the switch are refused",
		func(grace bool) {
			var opts []adaptation.Option
			if grace {
				opts = append(opts, standbyGrace(time.Minute))
			}
			e := newEnv(opts...)
			a := e.start(instSpec{Instance: "a", Generation: 1, UnsolicitedBytes: 111 << 20})
			e.confirmActive(a, 1)
			Expect(e.rt.RunPod(bg(), testruntime.NewPod("pod1"))).To(Succeed())
			_, err := e.rt.CreateContainer(bg(), testruntime.NewContainer("pod1", "ctr1"))
			Expect(err).NotTo(HaveOccurred())

			b := e.start(instSpec{Instance: "b", Generation: 2, UnsolicitedBytes: 222 << 20})
			e.confirmActive(b, 1)
			if grace {
				Eventually(a.has(record.RoleChange, "role=STANDBY")).Should(BeTrue())
			} else {
				Eventually(a.has(record.Shutdown, superseded)).Should(BeTrue())
			}
			limit := e.rt.MemoryLimit("ctr1")

			a.signal(syscall.SIGUSR1)
			Eventually(a.has(record.Unsolicited)).Should(BeTrue())
			refused := a.find(record.Unsolicited)[0]
			Expect(refused.Detail).To(ContainSubstring("sent=1"))
			Expect(refused.Err).NotTo(BeEmpty(), "the superseded instance's update must be refused")
			if grace {
				Expect(refused.Err).To(ContainSubstring("superseded"))
			}
			Expect(e.rt.Unsolicited()).To(BeEmpty())
			Expect(e.rt.MemoryLimit("ctr1")).To(Equal(limit))

			By("while the active instance's update is applied")
			b.signal(syscall.SIGUSR1)
			Eventually(b.has(record.Unsolicited)).Should(BeTrue())
			Expect(b.find(record.Unsolicited)[0].Err).To(BeEmpty())
			Expect(e.rt.MemoryLimit("ctr1")).To(Equal(int64(222 << 20)))
		},
		Entry("A disconnected (default)", false),
		Entry("A kept as a standby", true),
	)

	DescribeTable("row 8: every runtime-initiated disconnect sends Shutdown with the reason first",
		func(victim func(e *env) *instance, reason, exit string) {
			e := newEnv()
			v := victim(e)
			Eventually(v.has(record.Shutdown, reason)).Should(BeTrue(), records("victim", v))
			// The connection closed: the stub says so (Closed), or Run
			// returned because of it (Exit; a process may exit before the
			// stub's close callback ran).
			gone := func(l record.Line) bool { return l.Ev == Closed || l.Ev == Exit }
			Eventually(func() bool { return slices.ContainsFunc(v.lines(), gone) }).Should(BeTrue(), records("victim", v))
			lines := v.lines()
			shut := slices.IndexFunc(lines, func(l record.Line) bool { return l.Ev == record.Shutdown })
			Expect(shut).To(BeNumerically("<", slices.IndexFunc(lines, gone)))
			if details(reason)["reason"] == "SHUTDOWN_REASON_SUPERSEDED" {
				v.signal(syscall.SIGTERM) // a superseded stub stays up until stopped
			}
			Eventually(v.has(Exit, "is="+exit)).Should(BeTrue(), records("victim", v))

			conn := slices.Index(e.instances(), v) + 1
			Expect(e.trace.Sends()).To(ContainElement(And(
				HaveField("Conn", conn), HaveField("Method", "Shutdown"), HaveField("Detail", details(reason)["reason"]))))
		},
		Entry("runtime stop", func(e *env) *instance {
			a := e.start(instSpec{Instance: "a"})
			e.confirmActive(a, 1)
			e.rt.Stop()
			return a
		}, runtimeStops, "runtime-shutdown"),
		Entry("request timeout", func(e *env) *instance {
			withTimeouts(requestTimeout, time.Second)
			a := e.start(instSpec{Instance: "a", HangAt: "event:1"})
			e.confirmActive(a, 1)
			Expect(e.rt.RunPod(bg(), testruntime.NewPod("pod1"))).To(Succeed())
			return a
		}, timedOut, "timeout"),
		Entry("failed synchronization", func(e *env) *instance {
			return e.start(instSpec{Instance: "a", FailAt: "synchronize"})
		}, syncFailed, "sync-failed"),
		Entry("rejected registration", func(e *env) *instance {
			a := e.start(instSpec{Instance: "a", Generation: 2})
			e.confirmActive(a, 1)
			return e.start(instSpec{Instance: "old", Generation: 1})
		}, rejected, "rejected"),
		Entry("superseded", func(e *env) *instance {
			a := e.start(instSpec{Instance: "a", Generation: 1})
			e.confirmActive(a, 1)
			b := e.start(instSpec{Instance: "b", Generation: 2})
			e.confirmActive(b, 1)
			return a
		}, superseded, "superseded"),
	)

	Describe("row 9: mixed with upstream v0.12.5", func() {
		It("a legacy plugin is superseded by a new one and disconnected", func() {
			e := newEnv()
			up := e.startUpstream("p", "10")
			Eventually(up.has(record.Synchronize)).Should(BeTrue())
			Expect(e.rt.Lifecycle(bg(), "pod1", "ctr1")).To(Succeed())
			Expect(up.events()).To(HaveLen(3), "the upstream plugin handles RunPodSandbox, CreateContainer, StartContainer")

			b := e.start(instSpec{Instance: "b", Version: "2.0.0"})
			e.confirmActive(b, 1)
			Eventually(up.exited).Should(BeTrue(), "the legacy plugin is disconnected")
			Expect(e.rt.Lifecycle(bg(), "pod2", "ctr2")).To(Succeed())
			Expect(b.seqs()).To(ContainElements(seqsAfter(e.rt, b.activeBy[0])))
			for _, l := range up.events() {
				Expect(l.Seq).To(BeNumerically("<=", b.activeBy[0]))
			}
		})

		It("a new plugin against an upstream runtime works as a plain NRI plugin and reports handover unavailable", func() {
			dir := shortDir()
			u, err := upstreamRuntime(filepath.Join(dir, "nri.sock"))
			Expect(err).NotTo(HaveOccurred())
			DeferCleanup(func() { _ = u.Quit() })

			p := startInstance(dir, 0, instSpec{Instance: "n", Version: "2.0.0", Socket: u.Socket}, 0)
			Eventually(p.has(Ready, "handover=false")).Should(BeTrue(), records("plugin", p))
			Expect(p.find(record.Synchronize, "kind=full")).To(HaveLen(1))
			Expect(p.find(record.Synchronize)[0].Ctrs).To(Equal(1))
			Expect(p.count(record.RoleChange)).To(BeZero())
			Expect(p.readyFile).To(BeAnExistingFile())

			_, err = u.Do("run-pod", "pod9")
			Expect(err).NotTo(HaveOccurred())
			_, err = u.Do("create", "pod9", "ctr9")
			Expect(err).NotTo(HaveOccurred())
			_, err = u.Do("start", "ctr9")
			Expect(err).NotTo(HaveOccurred())
			var evs []string
			for _, l := range p.events() {
				evs = append(evs, l.Ev)
			}
			Expect(evs).To(ContainElements("RunPodSandbox", "CreateContainer", "StartContainer"))
		})
	})

	DescribeTable("row 10: concurrent newcomers: exactly one active instance at every event",
		func(genB, genC uint64, winner string) {
			e := newEnv()
			a := e.start(instSpec{Instance: "a", Generation: 1})
			e.confirmActive(a, 1)
			s := startStream(e.rt, "s", 1_000_000)
			DeferCleanup(s.stop)
			e.waitEvents(20)

			b := e.start(instSpec{Instance: "b", Generation: genB})
			c := e.start(instSpec{Instance: "c", Generation: genC})
			var won, lost *instance
			Eventually(func() bool {
				for _, pair := range [][2]*instance{{b, c}, {c, b}} {
					if pair[0].isActive() && refused(pair[1]) {
						won, lost = pair[0], pair[1]
						return true
					}
				}
				return false
			}).Should(BeTrue(), records("newcomers", b, c))
			won.activeBy = append(won.activeBy, e.rt.LastSeq())
			Expect(lost.isActive()).To(BeFalse())
			if winner != "" {
				Expect(won.String()).To(Equal(winner))
			}
			Eventually(a.has(record.Shutdown, superseded)).Should(BeTrue())
			e.waitEvents(20)
			Expect(s.stop()).To(Succeed())

			in := e.collect(collectOpts{})
			// Who connected first is unknown: order the newcomers by their
			// first event, so that "older" means "active earlier".
			first := func(r instRecord) uint64 {
				for _, l := range r.Lines {
					if isEvent(l.Ev) {
						return l.Seq
					}
				}
				return ^uint64(0)
			}
			slices.SortStableFunc(in.Instances[1:], func(x, y instRecord) int { return compareU64(first(x), first(y)) })
			v := expectExactlyOnce(in)
			Expect(v.Absent).To(BeZero())
		},
		Entry("the higher rollout generation wins, started first", uint64(3), uint64(2), "b"),
		Entry("the higher rollout generation wins, started second", uint64(2), uint64(3), "c"),
		Entry("same generation: one of them wins", uint64(2), uint64(2), ""),
	)
})

// refused tells whether the runtime turned an instance away or superseded
// it: its record has the Shutdown (superseded or rejected), or Run ended
// with that reason (a stub may return before the handler ran, see the
// report on pkg/stub).
func refused(in *instance) bool {
	return len(in.find(record.Shutdown, superseded))+len(in.find(record.Shutdown, rejected))+
		len(in.find(Exit, "is=superseded"))+len(in.find(Exit, "is=rejected")) > 0
}

func compareU64(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// upstreamRuntime starts the upstream v0.12.5 runtime binary with one pod
// holding one container.
func upstreamRuntime(socket string) (*harness.UpstreamRuntime, error) {
	b := &harness.Binaries{UpstreamRuntime: bins.UpstreamRuntime}
	return b.StartUpstreamRuntime(socket, 1, 1, GinkgoWriter)
}
