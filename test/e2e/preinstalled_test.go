package e2e

import (
	"os"
	"path/filepath"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/nri-handover/nri/test/e2e/harness"
	"github.com/nri-handover/nri/test/plugins/record"
	testruntime "github.com/nri-handover/nri/test/runtime"
)

var _ = Describe("Pre-installed plugins", func() {
	BeforeEach(func() {
		checkLeaks()
		withTimeouts(adaptationRegistrationTimeout, requestTimeout)
	})

	It("are launched, configured, synchronized, receive events and are stopped with the runtime", func() {
		dir := GinkgoT().TempDir()
		pluginDir, confDir := filepath.Join(dir, "plugins"), filepath.Join(dir, "conf")
		rec := recordFile("pre")
		for _, p := range []struct{ idx, name, config string }{
			{"20", "late", ""},
			{"05", "early", "answer: 42\n"},
		} {
			_, err := bins.PreinstalledPlugin(pluginDir, confDir, harness.PluginSpec{
				Name: p.name, Idx: p.idx, Record: rec,
				Annotate: map[string]string{p.name + ".example/seen": "yes"},
			}, p.config)
			Expect(err).NotTo(HaveOccurred())
		}
		// The drop-in without index applies when there is none with it.
		Expect(os.WriteFile(filepath.Join(confDir, "late.conf"), []byte("by name\n"), 0o644)).To(Succeed())
		// A plugin that dies at once must not keep the others from starting.
		_, err := harness.Preinstall(pluginDir, confDir, "10-broken", "/bin/false", nil, "")
		Expect(err).NotTo(HaveOccurred())

		rt := newRuntime(testruntime.WithPluginPath(pluginDir), testruntime.WithPluginConfigPath(confDir))
		pods, ctrs := seed(2, 3, 0)
		rt.Seed(pods, ctrs)
		Expect(rt.Start()).To(Succeed())
		DeferCleanup(rt.Stop)

		By("Start returns with both plugins configured and synchronized")
		lines, err := record.Read(rec)
		Expect(err).NotTo(HaveOccurred())
		byPlugin := func(name string) []record.Line {
			return record.Filter(lines, func(l record.Line) bool { return l.Name == name })
		}
		for _, name := range []string{"early", "late"} {
			Expect(byPlugin(name)).To(ContainElement(HaveField("Ev", record.Configure)), name)
			Expect(byPlugin(name)).To(ContainElement(And(
				HaveField("Ev", record.Synchronize), HaveField("Pods", 2), HaveField("Ctrs", 6))), name)
		}
		Expect(byPlugin("early")).To(ContainElement(And(
			HaveField("Ev", record.Configure), HaveField("Config", "answer: 42\n"), HaveField("Idx", "05"))))
		Expect(byPlugin("late")).To(ContainElement(And(
			HaveField("Ev", record.Configure), HaveField("Config", "by name\n"), HaveField("Idx", "20"))))

		By("events reach them in index order")
		Expect(rt.RunPod(bg(), testruntime.NewPod("pod0"))).To(Succeed())
		adjust, err := rt.CreateContainer(bg(), testruntime.NewContainer("pod0", "ctr0"))
		Expect(err).NotTo(HaveOccurred())
		Expect(adjust.GetAnnotations()).To(HaveKeyWithValue("early.example/seen", "yes"))
		Expect(adjust.GetAnnotations()).To(HaveKeyWithValue("late.example/seen", "yes"))
		lines, err = record.Read(rec)
		Expect(err).NotTo(HaveOccurred())
		creates := record.Filter(lines, func(l record.Line) bool { return l.Ev == "CreateContainer" })
		Expect(creates).To(HaveLen(2))
		Expect(creates[0].Name).To(Equal("early"))
		Expect(creates[1].Name).To(Equal("late"))

		By("Stop ends the plugin processes")
		pids := map[string]int{}
		for _, l := range lines {
			pids[l.Name] = l.Pid
		}
		rt.Stop()
		for name, pid := range pids {
			Eventually(func() bool { return harness.ProcessGone(pid) }).Should(BeTrue(),
				"plugin %s (pid %d, state %q) still exists after Stop", name, pid, harness.ProcessState(pid))
		}
	})

	It("still run when external connections are disabled", func() {
		dir := GinkgoT().TempDir()
		pluginDir := filepath.Join(dir, "plugins")
		rec := recordFile("solo")
		_, err := bins.PreinstalledPlugin(pluginDir, "", harness.PluginSpec{Name: "solo", Idx: "10", Record: rec}, "")
		Expect(err).NotTo(HaveOccurred())

		rt := newRuntime(testruntime.WithPluginPath(pluginDir), testruntime.WithoutListener())
		Expect(rt.Start()).To(Succeed())
		DeferCleanup(rt.Stop)
		Expect(rt.SocketPath()).NotTo(BeAnExistingFile(), "no socket when external connections are disabled")

		Expect(rt.RunPod(bg(), testruntime.NewPod("pod0"))).To(Succeed())
		lines, err := record.Read(rec)
		Expect(err).NotTo(HaveOccurred())
		Expect(lines).To(ContainElement(And(HaveField("Ev", "RunPodSandbox"), HaveField("Pod", "pod0"))))
	})
})
