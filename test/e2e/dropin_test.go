package e2e

import (
	"path/filepath"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/nri-handover/nri/pkg/adaptation"
	validator "github.com/nri-handover/nri/plugins/default-validator/builtin"
	"github.com/nri-handover/nri/test/e2e/harness"
	"github.com/nri-handover/nri/test/plugins/record"
	testruntime "github.com/nri-handover/nri/test/runtime"
)

// Drop-in: plugins that did not opt into handover get exactly what upstream
// NRI gives them; opted-in plugins never displace other kinds.
var _ = Describe("Drop-in membership", func() {
	BeforeEach(func() {
		checkLeaks()
		withTimeouts(adaptationRegistrationTimeout, requestTimeout)
	})

	plugin := func(rt *testruntime.Runtime, name, idx string, mod ...func(*harness.PluginSpec)) *harness.Plugin {
		spec := harness.PluginSpec{Name: name, Idx: idx, Socket: rt.SocketPath(), Record: recordFile(idx + "-" + name)}
		for _, m := range mod {
			m(&spec)
		}
		return startPlugin(spec)
	}
	optIn := func(instance string, gen uint64) func(*harness.PluginSpec) {
		return func(s *harness.PluginSpec) { s.Handover, s.Instance, s.Generation = true, instance, gen }
	}
	exitErr := func(p *harness.Plugin) func() string {
		return func() string {
			for _, l := range p.Lines() {
				if l.Ev == record.Exit {
					return l.Err
				}
			}
			return ""
		}
	}

	It("runs one plugin deployed at two indices side by side", func() {
		rt := startRuntime()
		a, b := plugin(rt, "logger", "10"), plugin(rt, "logger", "90")
		synced(rt, a, b)
		Expect(rt.RunPod(bg(), testruntime.NewPod("pod0"))).To(Succeed())
		Expect(a.Events()).To(Equal([]string{"RunPodSandbox:pod0"}))
		Expect(b.Events()).To(Equal([]string{"RunPodSandbox:pod0"}))
	})

	It("runs two connections with the same name and index side by side, as upstream", func() {
		rt := startRuntime()
		a, b := plugin(rt, "dup", "10"), plugin(rt, "dup", "10")
		synced(rt, a, b)
		Expect(rt.RunPod(bg(), testruntime.NewPod("pod0"))).To(Succeed())
		Expect(a.Events()).To(Equal([]string{"RunPodSandbox:pod0"}))
		Expect(b.Events()).To(Equal([]string{"RunPodSandbox:pod0"}))
		Expect(a.Count(record.Shutdown) + b.Count(record.Shutdown)).To(BeZero())
	})

	It("gives a plugin written for upstream one full Synchronize, and the next operation after it", func() {
		rt := newRuntime()
		pods, ctrs := seed(3, 2, 0)
		rt.Seed(pods, ctrs)
		Expect(rt.Start()).To(Succeed())
		DeferCleanup(rt.Stop)
		p := plugin(rt, "plain", "10")
		Eventually(p.Synchronized).Should(BeTrue())
		// Upstream's guarantee: once Synchronize returned, the next
		// operation that takes BlockPluginSync reaches the plugin.
		Expect(rt.RunPod(bg(), testruntime.NewPod("pod0"))).To(Succeed())
		Expect(p.Events()).To(Equal([]string{"RunPodSandbox:pod0"}))
		syncs := record.Filter(p.Lines(), func(l record.Line) bool { return l.Ev == record.Synchronize })
		Expect(syncs).To(HaveLen(1))
		Expect(syncs[0].Pods).To(Equal(3))
		Expect(syncs[0].Ctrs).To(Equal(6))
		Expect(p.Count(record.RoleChange)).To(BeZero())
	})

	It("runs a pre-installed plugin next to an external plugin of the same name", func() {
		dir := GinkgoT().TempDir()
		pluginDir, confDir := filepath.Join(dir, "plugins"), filepath.Join(dir, "conf")
		pre := recordFile("pre")
		_, err := bins.PreinstalledPlugin(pluginDir, confDir, harness.PluginSpec{Name: "foo", Idx: "10", Record: pre}, "")
		Expect(err).NotTo(HaveOccurred())
		rt := startRuntime(testruntime.WithPluginPath(pluginDir), testruntime.WithPluginConfigPath(confDir))

		ext := plugin(rt, "foo", "20")
		synced(rt, ext)
		Expect(rt.RunPod(bg(), testruntime.NewPod("pod0"))).To(Succeed())
		Expect(ext.Events()).To(Equal([]string{"RunPodSandbox:pod0"}))
		lines, err := record.Read(pre)
		Expect(err).NotTo(HaveOccurred())
		Expect(record.Filter(lines, func(l record.Line) bool { return l.Ev == "RunPodSandbox" })).To(HaveLen(1))

		By("an opted-in external instance of its name is refused, naming both")
		taker := plugin(rt, "foo", "10", optIn("taker", 1))
		Eventually(exitErr(taker)).Should(And(ContainSubstring("10-foo"), ContainSubstring("pre-connected")))
		Expect(rt.RunPod(bg(), testruntime.NewPod("pod1"))).To(Succeed())
		lines, err = record.Read(pre)
		Expect(err).NotTo(HaveOccurred())
		Expect(record.Filter(lines, func(l record.Line) bool { return l.Ev == "RunPodSandbox" })).To(HaveLen(2))
		Expect(taker.Events()).To(BeEmpty())
	})

	It("never lets an external plugin take over the builtin default validator", func() {
		rt := startRuntime(testruntime.WithAdaptationOptions(adaptation.WithDefaultValidator(
			&validator.DefaultValidatorConfig{Enable: true, RejectOCIHookAdjustment: true})))
		v := plugin(rt, "default-validator", "00", optIn("evil", 99))
		Eventually(exitErr(v)).Should(And(ContainSubstring("default-validator"), ContainSubstring("builtin")))
		Expect(v.Events()).To(BeEmpty())
	})

	It("lets an opted-in instance take over a plugin written for upstream with its name and index, and refuses it back", func() {
		rt := startRuntime()
		old := plugin(rt, "up", "10")
		synced(rt, old)
		succ := plugin(rt, "up", "10", optIn("succ", 2))
		Eventually(succ.Active).Should(BeTrue())
		Eventually(func() int { return old.Count(record.Exit) }).Should(Equal(1), "the superseded plugin is disconnected")
		Expect(old.Count(record.Shutdown)).To(BeZero(), "as upstream's adaptation, nothing tells a plugin that did not opt in why")
		Expect(rt.RunPod(bg(), testruntime.NewPod("pod0"))).To(Succeed())
		Expect(succ.Events()).To(Equal([]string{"RunPodSandbox:pod0"}))
		Expect(old.Events()).To(BeEmpty())
		syncs := record.Filter(succ.Lines(), func(l record.Line) bool { return l.Ev == record.Synchronize })
		Expect(syncs).To(HaveLen(1), "an opted-in plugin without delta rounds gets one full Synchronize")

		By("the superseded plugin, restarted, is refused while its successor holds the name")
		again := plugin(rt, "up", "10")
		Eventually(exitErr(again)).Should(ContainSubstring("does not support handover"))
		Expect(rt.RunPod(bg(), testruntime.NewPod("pod1"))).To(Succeed())
		Expect(succ.Events()).To(Equal([]string{"RunPodSandbox:pod0", "RunPodSandbox:pod1"}))
		Expect(again.Events()).To(BeEmpty())
	})
})
