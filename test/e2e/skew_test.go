package e2e

import (
	"path/filepath"
	"syscall"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"golang.org/x/mod/semver"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/nri-handover/nri/api"
	"github.com/nri-handover/nri/test/e2e/harness"
	"github.com/nri-handover/nri/test/plugins/record"
	testruntime "github.com/nri-handover/nri/test/runtime"
)

// The version-skew matrix: the NRI releases runtimes ship, as their go.mod
// files say (docs/runtime-integration.md, "Which NRI each runtime ships"):
// v0.8.0 in containerd v1.7.27+ (1.7's newest patches), v2.0 and v2.1; v0.9.0,
// the release before the pseudo-version CRI-O v1.34.0 requires
// (v0.9.1-0.20250219030224-e597e7849f24); v0.10.0, which upstream's version
// table gives CRI-O v1.34.x; v0.11.0 in containerd v2.2; v0.12.3 in
// containerd v2.4 and moby v2.0.0-beta.24; v0.12.5 the newest. v0.12.0
// (containerd v2.3) is bracketed by v0.11.0 and v0.12.3. Each is run against
// our stub and our runtime, every cell a spec. The peers are upstream's own
// packages at that release, in processes of their own (harness.BuildSkew).
var _ = Describe("Version skew", func() {
	BeforeEach(func() {
		checkLeaks()
		withTimeouts(adaptationRegistrationTimeout, requestTimeout)
	})

	peers := func() []harness.SkewPeer {
		return append([]harness.SkewPeer{{Version: "v0.12.5", Plugin: bins.UpstreamPlugin, Runtime: bins.UpstreamRuntime}}, bins.Skew...)
	}
	peer := func(v string) harness.SkewPeer {
		for _, p := range peers() {
			if p.Version == v {
				return p
			}
		}
		Fail("no skew peer built for " + v)
		return harness.SkewPeer{}
	}
	versions := append([]string{"v0.12.5"}, harness.SkewVersions...)

	// Our stub, opted into handover, against upstream's adaptation at v: it
	// registers, is synchronized, adjusts containers, sees exactly the events
	// of a plain plugin, and is ready once synchronized (handover is not
	// offered, and nothing of it reaches the runtime).
	//
	// Before v0.10.0 upstream knows no UpdatePodSandbox/PostUpdatePodSandbox
	// (v0.8.0's Event_LAST is 12): its configure refuses a plugin that
	// subscribes to them ("invalid plugin events: 0x1800") and drops it.
	// Upstream's own stub at v0.12.5 subscribes a plugin to every event it
	// implements, with no regard to the runtime's release, so it is refused
	// the same way; the test plugin, which implements every event, then
	// subscribes to the events the release knows, as a plugin written for
	// containerd v2.1 (v0.8.0) must.
	ourStubEntries := []TableEntry{}
	for _, v := range versions {
		ourStubEntries = append(ourStubEntries, Entry("our stub on upstream's adaptation "+v, v))
	}
	DescribeTable("our stub, opted in, on upstream's runtime",
		func(v string) {
			dir := shortDir()
			socket := filepath.Join(dir, "nri.sock")
			up, err := bins.UpstreamAt(peer(v)).StartUpstreamRuntime(socket, 2, 2, GinkgoWriter)
			Expect(err).NotTo(HaveOccurred())
			DeferCleanup(func() { Expect(up.Quit()).To(Succeed()) })

			ready := filepath.Join(dir, "ready")
			events := "" // all
			if semver.Compare(v, "v0.10.0") < 0 {
				events = eventsBeforeV010
			}
			p := startPlugin(harness.PluginSpec{
				Name: "modern", Idx: "10", Socket: socket, Record: recordFile("modern"), Events: events,
				Version: "2.0.0", Instance: "modern-a", Generation: 3, Handover: true, ReadyFile: ready,
				Annotate:    map[string]string{"modern.example/seen": v},
				MemoryLimit: 48 << 20,
			})
			Eventually(p.Lines).Should(ContainElement(And(
				HaveField("Ev", record.Synchronize), HaveField("Pods", 2), HaveField("Ctrs", 4))))
			Eventually(ready).Should(BeAnExistingFile(), "an opted-in stub on a runtime without handover is ready once synchronized")

			_, err = up.Do("run-pod", "pod0")
			Expect(err).NotTo(HaveOccurred())
			reply, err := up.Do("create", "pod0", "ctr0")
			Expect(err).NotTo(HaveOccurred())
			adjust := &api.ContainerAdjustment{}
			Expect(protojson.UnmarshalOptions{DiscardUnknown: true}.Unmarshal(reply.Adjust, adjust)).To(Succeed())
			Expect(adjust.GetAnnotations()).To(HaveKeyWithValue("modern.example/seen", v))
			Expect(adjust.GetLinux().GetResources().GetMemory().GetLimit().GetValue()).To(Equal(int64(48 << 20)))
			_, err = up.Do("start", "ctr0")
			Expect(err).NotTo(HaveOccurred())
			Expect(p.Events()).To(Equal([]string{"RunPodSandbox:pod0", "CreateContainer:ctr0", "StartContainer:ctr0"}))
		},
		ourStubEntries)

	// A plugin on upstream's stub at v against our adaptation: registered,
	// synchronized, its adjustment merged as upstream merges it, and, once
	// it is gone, container creation goes on without it.
	upstreamStubEntries := []TableEntry{}
	for _, v := range versions {
		upstreamStubEntries = append(upstreamStubEntries, Entry("upstream's stub "+v+" on our adaptation", v))
	}
	DescribeTable("upstream's stub on our runtime",
		func(v string) {
			rt := startRuntime()
			pods, ctrs := seed(2, 2, 0)
			rt.Seed(pods, ctrs)
			rec := recordFile("legacy")
			p, err := harness.StartProc("upstream plugin "+v, peer(v).Plugin, []string{
				"-socket", rt.SocketPath(), "-name", "legacy", "-idx", "50", "-record", rec,
				"-annotate", "legacy.example/seen=" + v, "-memory-limit", "96000000",
			}, GinkgoWriter)
			Expect(err).NotTo(HaveOccurred())
			DeferCleanup(reap, p)
			lines := recordOf(rec)
			Eventually(lines).Should(ContainElement(And(
				HaveField("Ev", record.Synchronize), HaveField("Pods", 2), HaveField("Ctrs", 4))))
			rt.Barrier() // synchronized under the block means registered

			Expect(rt.RunPod(bg(), testruntime.NewPod("pod0"))).To(Succeed())
			adjust, err := rt.CreateContainer(bg(), testruntime.NewContainer("pod0", "ctr0"))
			Expect(err).NotTo(HaveOccurred())
			Expect(adjust.GetAnnotations()).To(HaveKeyWithValue("legacy.example/seen", v))
			Expect(rt.MemoryLimit("ctr0")).To(Equal(int64(96000000)))
			Expect(rt.StartContainer(bg(), "ctr0")).To(Succeed())
			Expect(lines()).To(ContainElements(
				And(HaveField("Ev", "RunPodSandbox"), HaveField("Pod", "pod0")),
				And(HaveField("Ev", "CreateContainer"), HaveField("Ctr", "ctr0")),
				And(HaveField("Ev", "StartContainer"), HaveField("Ctr", "ctr0")),
			))

			// Gone without a word (as a crash): the runtime drops it and goes on.
			Expect(p.Signal(syscall.SIGKILL)).To(Succeed())
			<-p.Done()
			Eventually(func() error {
				_, err := rt.CreateContainer(bg(), testruntime.NewContainer("pod0", "ctr-after"))
				if err == nil {
					Expect(rt.Container("ctr-after").Annotations).NotTo(HaveKey("legacy.example/seen"))
				}
				return err
			}).Should(Succeed())
		},
		upstreamStubEntries)
})

// eventsBeforeV010 are the events upstream NRI knew before v0.10.0 added the
// pod sandbox updates (v0.8.0's and v0.9.0's ValidEvents).
const eventsBeforeV010 = "RunPodSandbox,StopPodSandbox,RemovePodSandbox,CreateContainer,PostCreateContainer," +
	"StartContainer,PostStartContainer,UpdateContainer,PostUpdateContainer,StopContainer,RemoveContainer"
