package e2e

import (
	"path/filepath"
	"sync"
	"syscall"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/nri-handover/nri/api"
	"github.com/nri-handover/nri/test/e2e/harness"
	"github.com/nri-handover/nri/test/plugins/record"
	testruntime "github.com/nri-handover/nri/test/runtime"
)

// recordOf reads a record file for Eventually and Expect; a record that
// does not parse fails the spec instead of reading as empty.
func recordOf(path string) func() []record.Line {
	return func() []record.Line {
		lines, err := record.Read(path)
		ExpectWithOffset(1, err).NotTo(HaveOccurred(), "record %s", path)
		return lines
	}
}

var _ = Describe("Compatibility with upstream containerd/nri v0.12.5", func() {
	BeforeEach(func() {
		checkLeaks()
		withTimeouts(adaptationRegistrationTimeout, requestTimeout)
	})

	It("serves a plugin built on upstream's stub", func() {
		rt := startRuntime()
		pods, ctrs := seed(2, 2, 0)
		rt.Seed(pods, ctrs)
		rec := recordFile("upstream")
		p, err := harness.StartProc("upstream plugin", bins.UpstreamPlugin, []string{
			"-socket", rt.SocketPath(), "-name", "legacy", "-idx", "50", "-record", rec,
			"-annotate", "legacy.example/seen=yes", "-memory-limit", "96000000",
		}, GinkgoWriter)
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(reap, p)
		lines := recordOf(rec)

		Eventually(lines).Should(ContainElement(And(
			HaveField("Ev", record.Synchronize), HaveField("Pods", 2), HaveField("Ctrs", 4))))

		Expect(rt.RunPod(bg(), testruntime.NewPod("pod0"))).To(Succeed())
		adjust, err := rt.CreateContainer(bg(), testruntime.NewContainer("pod0", "ctr0"))
		Expect(err).NotTo(HaveOccurred())
		Expect(adjust.GetAnnotations()).To(HaveKeyWithValue("legacy.example/seen", "yes"))
		Expect(rt.Container("ctr0").Annotations).To(HaveKeyWithValue("legacy.example/seen", "yes"))
		Expect(rt.MemoryLimit("ctr0")).To(Equal(int64(96000000)))
		Expect(rt.StartContainer(bg(), "ctr0")).To(Succeed())

		Expect(lines()).To(ContainElements(
			And(HaveField("Ev", "RunPodSandbox"), HaveField("Pod", "pod0")),
			And(HaveField("Ev", "CreateContainer"), HaveField("Ctr", "ctr0")),
			And(HaveField("Ev", "StartContainer"), HaveField("Ctr", "ctr0")),
		))
	})

	It("works as a plain plugin against a runtime on upstream's adaptation", func() {
		dir := shortDir()
		socket := filepath.Join(dir, "nri.sock")
		up, err := bins.StartUpstreamRuntime(socket, 2, 2, GinkgoWriter)
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(func() {
			Expect(up.Quit()).To(Succeed())
		})

		p := startPlugin(harness.PluginSpec{
			Name: "modern", Idx: "10", Socket: socket, Record: recordFile("modern"),
			Version: "2.0.0", Instance: "modern-a", Generation: 3,
			Annotate:    map[string]string{"modern.example/seen": "yes"},
			MemoryLimit: 48 << 20,
		})
		Eventually(p.Lines).Should(ContainElement(And(
			HaveField("Ev", record.Synchronize), HaveField("Pods", 2), HaveField("Ctrs", 4))))

		_, err = up.Do("run-pod", "pod0")
		Expect(err).NotTo(HaveOccurred())
		reply, err := up.Do("create", "pod0", "ctr0")
		Expect(err).NotTo(HaveOccurred())
		adjust := &api.ContainerAdjustment{}
		Expect(protojson.UnmarshalOptions{DiscardUnknown: true}.Unmarshal(reply.Adjust, adjust)).To(Succeed())
		Expect(adjust.GetAnnotations()).To(HaveKeyWithValue("modern.example/seen", "yes"))
		Expect(adjust.GetLinux().GetResources().GetMemory().GetLimit().GetValue()).To(Equal(int64(48 << 20)))
		_, err = up.Do("start", "ctr0")
		Expect(err).NotTo(HaveOccurred())

		Expect(p.Events()).To(Equal([]string{"RunPodSandbox:pod0", "CreateContainer:ctr0", "StartContainer:ctr0"}))
	})

	// Differential: the same plugin, which did not opt into handover, is
	// disconnected for the same cause by a runtime on upstream's adaptation
	// and by one on ours, and must hear as many Shutdown requests from
	// either (upstream's adaptation never sends one).
	DescribeTable("disconnects a plugin that did not opt in as upstream's adaptation does, Shutdown or not",
		func(spec harness.PluginSpec, requestTimeout time.Duration, cause func(p *harness.Plugin, run func(string) error, stop func())) {
			withTimeouts(adaptationRegistrationTimeout, requestTimeout)
			shutdowns := func(on string) int {
				dir := shortDir()
				spec := spec
				spec.Name, spec.Idx, spec.Record = "plain", "10", recordFile(on)
				var run func(string) error
				var stop func()
				var stopped *harness.Proc
				if on == "upstream" {
					up, err := bins.StartUpstreamRuntimeWith(harness.UpstreamRuntimeSpec{
						Socket: filepath.Join(dir, "nri.sock"), Pods: 1, CtrsPerPod: 1, RequestTimeout: requestTimeout,
					}, GinkgoWriter)
					Expect(err).NotTo(HaveOccurred())
					quit := sync.OnceValue(up.Quit)
					DeferCleanup(func() { Expect(quit()).To(Succeed()) })
					spec.Socket = up.Socket
					run = func(pod string) error { _, err := up.Do("run-pod", pod); return err }
					stop = func() { Expect(quit()).To(Succeed()) }
				} else {
					rt := startRuntime(testruntime.WithDir(dir))
					spec.Socket = rt.SocketPath()
					run = func(pod string) error { return rt.RunPod(bg(), testruntime.NewPod(pod)) }
					// Upstream's Stop leaves such a plugin connected, and so
					// does ours; upstream's runtime then exits, which closes
					// the connection. Ours runs in this process: the plugin
					// is stopped instead, after Stop returned (Stop waits
					// for every Shutdown it sends).
					stop = func() { rt.Stop(); Expect(stopped.Signal(syscall.SIGTERM)).To(Succeed()) }
				}
				p := startPlugin(spec)
				stopped = p.Proc
				cause(p, run, stop)
				Eventually(func() int { return p.Count(record.Exit) }).Should(Equal(1), "the %s runtime disconnects the plugin", on)
				return p.Count(record.Shutdown)
			}
			Expect(shutdowns("ours")).To(Equal(shutdowns("upstream")))
		},
		Entry("runtime stop", harness.PluginSpec{}, requestTimeout, func(p *harness.Plugin, run func(string) error, stop func()) {
			Eventually(p.Synchronized).Should(BeTrue())
			Expect(run("pod0")).To(Succeed()) // waits until the plugin is registered, then reaches it
			Expect(p.Events()).To(Equal([]string{"RunPodSandbox:pod0"}))
			stop()
		}),
		Entry("request timeout", harness.PluginSpec{HangAt: "RunPodSandbox"}, 2*time.Second,
			func(p *harness.Plugin, run func(string) error, _ func()) {
				Eventually(p.Synchronized).Should(BeTrue())
				Expect(run("pod0")).To(Succeed()) // the default policy proceeds without the plugin
			}),
		Entry("failed synchronization", harness.PluginSpec{FailAt: "synchronize"}, requestTimeout,
			func(*harness.Plugin, func(string) error, func()) {}),
		Entry("failed configuration", harness.PluginSpec{FailAt: "configure"}, requestTimeout,
			func(*harness.Plugin, func(string) error, func()) {}),
	)

	Context("with a snapshot larger than one message", func() {
		It("splits synchronization for a plugin on upstream's stub", func() {
			rt := startRuntime()
			pods, ctrs := seed(100, 40, 1536)
			rt.Seed(pods, ctrs)
			rec := recordFile("upstream")
			p, err := harness.StartProc("upstream plugin", bins.UpstreamPlugin, []string{
				"-socket", rt.SocketPath(), "-name", "legacy", "-idx", "50", "-record", rec,
				"-annotate", "legacy.example/seen=yes",
			}, GinkgoWriter)
			Expect(err).NotTo(HaveOccurred())
			DeferCleanup(reap, p)

			lines := recordOf(rec)
			Eventually(lines).Should(ContainElement(And(
				HaveField("Ev", record.Synchronize), HaveField("Pods", 100), HaveField("Ctrs", 4000))))
			Expect(rt.RunPod(bg(), testruntime.NewPod("pod0"))).To(Succeed())
			adjust, err := rt.CreateContainer(bg(), testruntime.NewContainer("pod0", "ctr0"))
			Expect(err).NotTo(HaveOccurred())
			Expect(adjust.GetAnnotations()).To(HaveKeyWithValue("legacy.example/seen", "yes"))
		})

		It("reassembles upstream's split synchronization in our stub", func() {
			socket := filepath.Join(shortDir(), "nri.sock")
			up, err := bins.StartUpstreamRuntimeWith(harness.UpstreamRuntimeSpec{
				Socket: socket, Pods: 100, CtrsPerPod: 40, Pad: 1536,
			}, GinkgoWriter)
			Expect(err).NotTo(HaveOccurred())
			DeferCleanup(func() { Expect(up.Quit()).To(Succeed()) })

			p := startPlugin(harness.PluginSpec{
				Name: "modern", Idx: "10", Socket: socket, Record: recordFile("modern"),
				Annotate: map[string]string{"modern.example/seen": "yes"},
			})
			Eventually(p.Lines).Should(ContainElement(And(
				HaveField("Ev", record.Synchronize), HaveField("Pods", 100), HaveField("Ctrs", 4000))))
			Expect(record.Filter(p.Lines(), func(l record.Line) bool { return l.Ev == record.Synchronize })).To(HaveLen(1))

			_, err = up.Do("run-pod", "pod0")
			Expect(err).NotTo(HaveOccurred())
			reply, err := up.Do("create", "pod0", "ctr0")
			Expect(err).NotTo(HaveOccurred())
			Expect(string(reply.Adjust)).To(ContainSubstring("modern.example/seen"))
		})
	})

	Context("as pre-installed plugins", func() {
		It("launches a plugin on upstream's stub from the plugin directory", func() {
			dir := GinkgoT().TempDir()
			pluginDir, confDir := filepath.Join(dir, "plugins"), filepath.Join(dir, "conf")
			rec := recordFile("upstream")
			_, err := harness.Preinstall(pluginDir, confDir, "40-legacy", bins.UpstreamPlugin,
				[]string{"-record", rec, "-annotate", "legacy.example/seen=yes"}, "")
			Expect(err).NotTo(HaveOccurred())

			rt := newRuntime(testruntime.WithPluginPath(pluginDir), testruntime.WithPluginConfigPath(confDir))
			pods, ctrs := seed(1, 2, 0)
			rt.Seed(pods, ctrs)
			Expect(rt.Start()).To(Succeed())
			DeferCleanup(rt.Stop)

			lines := recordOf(rec)
			Expect(lines()).To(ContainElement(And(
				HaveField("Ev", record.Synchronize), HaveField("Name", "legacy"), HaveField("Idx", "40"),
				HaveField("Ctrs", 2))))
			Expect(rt.RunPod(bg(), testruntime.NewPod("pod0"))).To(Succeed())
			adjust, err := rt.CreateContainer(bg(), testruntime.NewContainer("pod0", "ctr0"))
			Expect(err).NotTo(HaveOccurred())
			Expect(adjust.GetAnnotations()).To(HaveKeyWithValue("legacy.example/seen", "yes"))

			pid := lines()[0].Pid
			rt.Stop()
			Eventually(func() bool { return harness.ProcessGone(pid) }).Should(BeTrue())
			Expect(lines()).NotTo(ContainElement(HaveField("Ev", record.Shutdown)),
				"a pre-installed plugin never opts into handover, and upstream's adaptation sends no Shutdown")
		})

		It("is launched by upstream's adaptation from its plugin directory", func() {
			dir := shortDir()
			pluginDir, confDir := filepath.Join(dir, "plugins"), filepath.Join(dir, "conf")
			rec := recordFile("modern")
			_, err := bins.PreinstalledPlugin(pluginDir, confDir, harness.PluginSpec{
				Name: "modern", Idx: "30", Record: rec,
				Annotate: map[string]string{"modern.example/seen": "yes"},
			}, "mode: preinstalled\n")
			Expect(err).NotTo(HaveOccurred())

			up, err := bins.StartUpstreamRuntimeWith(harness.UpstreamRuntimeSpec{
				Socket: filepath.Join(dir, "nri.sock"), Pods: 1, CtrsPerPod: 2,
				PluginDir: pluginDir, ConfDir: confDir,
			}, GinkgoWriter)
			Expect(err).NotTo(HaveOccurred())
			quit := func() { Expect(up.Quit()).To(Succeed()) }
			DeferCleanup(quit)

			lines := recordOf(rec)
			Expect(lines()).To(ContainElements(
				And(HaveField("Ev", record.Configure), HaveField("Name", "modern"), HaveField("Idx", "30"),
					HaveField("Config", "mode: preinstalled\n")),
				And(HaveField("Ev", record.Synchronize), HaveField("Pods", 1), HaveField("Ctrs", 2)),
			))
			_, err = up.Do("run-pod", "pod0")
			Expect(err).NotTo(HaveOccurred())
			reply, err := up.Do("create", "pod0", "ctr0")
			Expect(err).NotTo(HaveOccurred())
			Expect(string(reply.Adjust)).To(ContainSubstring("modern.example/seen"))
		})
	})
})
