package e2e

import (
	"net"
	"path/filepath"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/nri-handover/nri/pkg/adaptation"
	validator "github.com/nri-handover/nri/plugins/default-validator/builtin"
	"github.com/nri-handover/nri/test/e2e/harness"
	"github.com/nri-handover/nri/test/plugins/record"
	testruntime "github.com/nri-handover/nri/test/runtime"
)

var _ = Describe("Validation", func() {
	BeforeEach(func() {
		checkLeaks()
		withTimeouts(adaptationRegistrationTimeout, requestTimeout)
	})

	It("lets a validator plugin see the participants and reject an adjustment", func() {
		rt := startRuntime()
		guard := startPlugin(harness.PluginSpec{
			Name: "guard", Idx: "90", Socket: rt.SocketPath(), Record: recordFile("guard"),
			Events: "ValidateContainerAdjustment", Validate: true, RejectAnnotation: "forbidden.example/key",
		})
		tagger := startPlugin(harness.PluginSpec{
			Name: "tagger", Idx: "10", Socket: rt.SocketPath(), Record: recordFile("tagger"),
			Annotate: map[string]string{"allowed.example/key": "v"},
		})
		synced(rt, guard, tagger)
		Expect(rt.RunPod(bg(), testruntime.NewPod("pod0"))).To(Succeed())

		_, err := rt.CreateContainer(bg(), testruntime.NewContainer("pod0", "ctr0"))
		Expect(err).NotTo(HaveOccurred())
		Expect(guard.Lines()).To(ContainElement(And(
			HaveField("Ev", "ValidateContainerAdjustment"), HaveField("Ctr", "ctr0"),
			HaveField("Detail", ContainSubstring("10-tagger")))))

		rogue := startPlugin(harness.PluginSpec{
			Name: "rogue", Idx: "20", Socket: rt.SocketPath(), Record: recordFile("rogue"),
			Annotate: map[string]string{"forbidden.example/key": "v"},
		})
		synced(rt, rogue)
		_, err = rt.CreateContainer(bg(), testruntime.NewContainer("pod0", "ctr1"))
		Expect(err).To(MatchError(ContainSubstring("forbidden.example/key")))
		Expect(rt.Container("ctr1")).To(BeNil())
		Expect(guard.Events()).NotTo(ContainElement(HavePrefix("CreateContainer")), "a validator gets validation only")
	})

	It("refuses containers until the plugins the default validator requires take part", func() {
		rt := startRuntime(testruntime.WithAdaptationOptions(adaptation.WithDefaultValidator(
			&validator.DefaultValidatorConfig{Enable: true, RequiredPlugins: []string{"must"}})))
		Expect(rt.RunPod(bg(), testruntime.NewPod("pod0"))).To(Succeed())

		_, err := rt.CreateContainer(bg(), testruntime.NewContainer("pod0", "early"))
		Expect(err).To(MatchError(ContainSubstring("must")))

		must := startPlugin(harness.PluginSpec{Name: "must", Idx: "10", Socket: rt.SocketPath(), Record: recordFile("must")})
		synced(rt, must)
		_, err = rt.CreateContainer(bg(), testruntime.NewContainer("pod0", "late"))
		Expect(err).NotTo(HaveOccurred())
		Expect(must.Count("CreateContainer")).To(Equal(1))
	})
})

var _ = Describe("Runtime restarts", func() {
	BeforeEach(func() {
		checkLeaks()
		withTimeouts(adaptationRegistrationTimeout, requestTimeout)
	})

	It("lets a restartable stub register again with the next runtime on the same socket", func() {
		dir := shortDir()
		first := newRuntime(testruntime.WithDir(dir))
		Expect(first.Start()).To(Succeed())
		DeferCleanup(first.Stop)
		// Opted in: Stop closes its connection as a runtime's exit would
		// (one that did not opt in stays connected to a stopped adaptation,
		// as on upstream's).
		p := startPlugin(harness.PluginSpec{
			Name: "phoenix", Idx: "10", Socket: first.SocketPath(), Record: recordFile("phoenix"), Reconnect: true,
			Handover: true,
		})
		synced(first, p)
		first.Stop()
		Eventually(func() int { return p.Count(record.Exit) }).Should(BeNumerically(">=", 1))

		second := newRuntime(testruntime.WithDir(dir))
		Expect(second.Start()).To(Succeed())
		DeferCleanup(second.Stop)
		Eventually(func() int { return p.Count(record.Synchronize) }).Should(Equal(2))
		second.Barrier()
		Expect(second.RunPod(bg(), testruntime.NewPod("pod0"))).To(Succeed())
		Expect(p.Events()).To(Equal([]string{"RunPodSandbox:pod0"}))
	})

	It("replaces a stale socket left by an earlier runtime", func() {
		dir := shortDir()
		socket := filepath.Join(dir, "nri.sock")
		l, err := net.ListenUnix("unix", &net.UnixAddr{Name: socket, Net: "unix"})
		Expect(err).NotTo(HaveOccurred())
		l.SetUnlinkOnClose(false)
		Expect(l.Close()).To(Succeed())
		Expect(socket).To(BeAnExistingFile(), "a socket nobody listens on")

		rt := newRuntime(testruntime.WithDir(dir))
		Expect(rt.Start()).To(Succeed())
		DeferCleanup(rt.Stop)
		p := startPlugin(harness.PluginSpec{Name: "late", Idx: "10", Socket: rt.SocketPath(), Record: recordFile("late")})
		synced(rt, p)
	})
})
