package e2e

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/nri-handover/nri/api"
	"github.com/nri-handover/nri/test/e2e/harness"
	"github.com/nri-handover/nri/test/plugins/record"
	testruntime "github.com/nri-handover/nri/test/runtime"
)

var _ = Describe("Event delivery", func() {
	BeforeEach(func() {
		checkLeaks()
		withTimeouts(adaptationRegistrationTimeout, requestTimeout)
	})

	It("relays every event to every plugin exactly once, in index order", func() {
		rt := startRuntime()
		rec := recordFile("shared")
		// Started out of index order: the order must come from the index.
		var plugins []*harness.Plugin
		for _, id := range []struct{ name, idx string }{{"charlie", "30"}, {"alpha", "10"}, {"bravo", "20"}} {
			plugins = append(plugins, startPlugin(harness.PluginSpec{
				Name: id.name, Idx: id.idx, Socket: rt.SocketPath(), Record: rec,
			}))
		}
		synced(rt, plugins...)

		Expect(rt.Lifecycle(bg(), "pod0", "ctr0")).To(Succeed())

		dispatched := rt.Record()
		Expect(dispatched).To(HaveLen(13))
		seen := map[api.Event]bool{}
		for _, d := range dispatched {
			Expect(d.Err).NotTo(HaveOccurred())
			seen[d.Event] = true
		}
		Expect(seen).To(HaveLen(13), "every event but validation")

		lines, err := record.Read(rec)
		Expect(err).NotTo(HaveOccurred())
		for _, d := range dispatched {
			handled := record.Filter(lines, func(l record.Line) bool { return l.Seq == d.Seq })
			var order []string
			for _, l := range handled {
				Expect(l.Ev).To(Equal(d.Event.PrettyName()))
				order = append(order, l.Idx+"-"+l.Name)
			}
			Expect(order).To(Equal([]string{"10-alpha", "20-bravo", "30-charlie"}),
				"handlers of %s (seq %d)", d.Name(), d.Seq)
		}
	})

	It("relays only the events a plugin subscribed to", func() {
		rt := startRuntime()
		p := startPlugin(harness.PluginSpec{
			Name: "picky", Idx: "10", Socket: rt.SocketPath(), Record: recordFile("picky"),
			Events: "CreateContainer,StopContainer,RemovePodSandbox",
		})
		synced(rt, p)

		Expect(rt.Lifecycle(bg(), "pod0", "ctr0")).To(Succeed())
		Expect(p.Events()).To(Equal([]string{
			"CreateContainer:ctr0", "StopContainer:ctr0", "RemovePodSandbox:pod0",
		}))
	})
})

var _ = Describe("Runtime shutdown", func() {
	BeforeEach(func() {
		checkLeaks()
		withTimeouts(adaptationRegistrationTimeout, requestTimeout)
	})

	// Upstream v0.12.5's Stop leaves an external plugin connected and tells
	// it nothing (its plugin stop returns early for external plugins); ours
	// does the same for a plugin that did not opt into handover. Stop
	// returns once it has told and closed the opted-in one.
	It("disconnects an opted-in plugin with a runtime-shutdown Shutdown and leaves one that did not opt in connected", func() {
		rt := startRuntime()
		rec := recordFile("shared")
		a := startPlugin(harness.PluginSpec{Name: "alpha", Idx: "10", Socket: rt.SocketPath(), Record: rec})
		b := startPlugin(harness.PluginSpec{Name: "bravo", Idx: "20", Socket: rt.SocketPath(), Record: rec, Handover: true})
		synced(rt, a)
		Eventually(b.Active).Should(BeTrue())

		rt.Stop()
		Eventually(b.Done()).Should(BeClosed(), "the opted-in plugin exits once disconnected")
		Expect(a.Count(record.Shutdown)).To(BeZero(), "upstream's adaptation sends no Shutdown")
		Expect(a.Count(record.Exit)).To(BeZero(), "upstream's adaptation leaves an external plugin connected")
		Expect(b.Lines()).To(ContainElement(And(
			HaveField("Ev", record.Shutdown),
			HaveField("Detail", api.ShutdownReason_SHUTDOWN_REASON_RUNTIME_SHUTDOWN.String()))))
	})
})

var _ = Describe("Runtime shutdown during synchronization", func() {
	BeforeEach(func() {
		checkLeaks()
		withTimeouts(adaptationRegistrationTimeout, requestTimeout)
	})

	// Stop cancels the adaptation's context before it shuts plugins down:
	// the interrupted synchronization's error path must still report the
	// runtime's shutdown, not SYNCHRONIZATION_FAILED (it once picked the
	// reason from the error alone).
	It("tells an opted-in plugin still synchronizing that the runtime shuts down", func() {
		rt := startRuntime()
		p := startPlugin(harness.PluginSpec{
			Name: "sluggish", Idx: "10", Socket: rt.SocketPath(), Record: recordFile("sluggish"),
			HangAt: "synchronize", Handover: true,
		})
		Eventually(func() int { return p.Count(record.Hang) }).Should(Equal(1))

		rt.Stop()
		Eventually(p.Done()).Should(BeClosed())
		Expect(p.Lines()).To(ContainElement(And(
			HaveField("Ev", record.Shutdown),
			HaveField("Detail", api.ShutdownReason_SHUTDOWN_REASON_RUNTIME_SHUTDOWN.String()))))
	})
})

var _ = Describe("Dispatch order ties", func() {
	BeforeEach(func() {
		checkLeaks()
		withTimeouts(adaptationRegistrationTimeout, requestTimeout)
	})

	It("orders plugins with the same index by name", func() {
		rt := startRuntime()
		rec := recordFile("shared")
		z := startPlugin(harness.PluginSpec{Name: "zulu", Idx: "10", Socket: rt.SocketPath(), Record: rec})
		synced(rt, z)
		a := startPlugin(harness.PluginSpec{Name: "alpha", Idx: "10", Socket: rt.SocketPath(), Record: rec})
		synced(rt, a)

		Expect(rt.RunPod(bg(), testruntime.NewPod("pod0"))).To(Succeed())
		lines, err := record.Read(rec)
		Expect(err).NotTo(HaveOccurred())
		runs := record.Filter(lines, func(l record.Line) bool { return l.Ev == "RunPodSandbox" })
		Expect(runs).To(HaveLen(2))
		Expect([]string{runs[0].Name, runs[1].Name}).To(Equal([]string{"alpha", "zulu"}))
	})
})

var _ = Describe("Concurrent registration", func() {
	BeforeEach(func() {
		checkLeaks()
		withTimeouts(adaptationRegistrationTimeout, requestTimeout)
	})

	It("registers many plugins connecting at once and orders them by index", func() {
		rt := startRuntime()
		rec := recordFile("shared")
		idxs := []string{"70", "15", "40", "05", "99", "25", "60", "33"}
		var ps []*harness.Plugin
		for _, idx := range idxs {
			ps = append(ps, startPlugin(harness.PluginSpec{Name: "p" + idx, Idx: idx, Socket: rt.SocketPath(), Record: rec}))
		}
		synced(rt, ps...)

		Expect(rt.RunPod(bg(), testruntime.NewPod("pod0"))).To(Succeed())
		lines, err := record.Read(rec)
		Expect(err).NotTo(HaveOccurred())
		var order []string
		for _, l := range record.Filter(lines, func(l record.Line) bool { return l.Ev == "RunPodSandbox" }) {
			order = append(order, l.Idx)
		}
		Expect(order).To(Equal([]string{"05", "15", "25", "33", "40", "60", "70", "99"}))
	})
})
