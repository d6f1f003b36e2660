package e2e

import (
	"fmt"
	"strings"
	"syscall"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/nri-handover/nri/api"
	"github.com/nri-handover/nri/test/e2e/harness"
	"github.com/nri-handover/nri/test/plugins/record"
	testruntime "github.com/nri-handover/nri/test/runtime"
)

// seed builds pods*perPod containers; pad bytes of annotation per container
// make the snapshot as large as a spec needs.
func seed(pods, perPod, pad int) ([]*api.PodSandbox, []*api.Container) {
	var ps []*api.PodSandbox
	var cs []*api.Container
	filler := strings.Repeat("x", pad)
	for i := 0; i < pods; i++ {
		pod := testruntime.NewPod(fmt.Sprintf("seed-pod-%04d", i))
		ps = append(ps, pod)
		for j := 0; j < perPod; j++ {
			c := testruntime.NewContainer(pod.Id, fmt.Sprintf("seed-ctr-%04d-%02d", i, j))
			c.State = api.ContainerState_CONTAINER_RUNNING
			if pad > 0 {
				c.Annotations["pad.example/filler"] = filler
			}
			cs = append(cs, c)
		}
	}
	return ps, cs
}

var _ = Describe("Synchronization and unsolicited updates", func() {
	BeforeEach(func() {
		checkLeaks()
		withTimeouts(adaptationRegistrationTimeout, requestTimeout)
	})

	It("applies unsolicited updates a plugin sends after an event", func() {
		rt := startRuntime()
		p := startPlugin(harness.PluginSpec{
			Name: "updater", Idx: "10", Socket: rt.SocketPath(), Record: recordFile("updater"),
			UnsolicitedOn: "StartContainer", UnsolicitedMemory: 64 << 20,
		})
		synced(rt, p)
		Expect(rt.RunPod(bg(), testruntime.NewPod("pod0"))).To(Succeed())
		_, err := rt.CreateContainer(bg(), testruntime.NewContainer("pod0", "ctr0"))
		Expect(err).NotTo(HaveOccurred())
		Expect(rt.StartContainer(bg(), "ctr0")).To(Succeed())

		Eventually(func() int64 { return rt.MemoryLimit("ctr0") }).Should(Equal(int64(64 << 20)))
		Eventually(func() int { return p.Count(record.Unsolicited) }).Should(Equal(1))
		Expect(p.Lines()).To(ContainElement(HaveField("Detail", "sent=1 failed=0")))
		Expect(rt.Unsolicited()).To(HaveLen(1))
	})

	It("applies unsolicited updates for containers learnt at synchronization", func() {
		rt := startRuntime()
		pods, ctrs := seed(2, 3, 0)
		rt.Seed(pods, ctrs)
		p := startPlugin(harness.PluginSpec{
			Name: "updater", Idx: "10", Socket: rt.SocketPath(), Record: recordFile("updater"),
			UnsolicitedOn: "signal", UnsolicitedMemory: 32 << 20,
		})
		synced(rt, p)
		Expect(p.Signal(syscall.SIGUSR1)).To(Succeed())

		for _, c := range ctrs {
			Eventually(func() int64 { return rt.MemoryLimit(c.Id) }).Should(Equal(int64(32<<20)), c.Id)
		}
	})

	It("applies the update a plugin returns for UpdateContainer instead of the requested one", func() {
		rt := startRuntime()
		p := startPlugin(harness.PluginSpec{
			Name: "resizer", Idx: "10", Socket: rt.SocketPath(), Record: recordFile("resizer"),
			UpdateMemory: 300 << 20,
		})
		synced(rt, p)
		Expect(rt.RunPod(bg(), testruntime.NewPod("pod0"))).To(Succeed())
		_, err := rt.CreateContainer(bg(), testruntime.NewContainer("pod0", "ctr0"))
		Expect(err).NotTo(HaveOccurred())

		Expect(rt.UpdateContainer(bg(), "ctr0", testruntime.MemoryResources(100<<20))).To(Succeed())
		Expect(rt.MemoryLimit("ctr0")).To(Equal(int64(300 << 20)))
	})

	It("returns the updates it could not apply to the plugin", func() {
		rt := startRuntime()
		p := startPlugin(harness.PluginSpec{
			Name: "late", Idx: "10", Socket: rt.SocketPath(), Record: recordFile("late"),
			UnsolicitedOn: "RemoveContainer", UnsolicitedMemory: 16 << 20,
		})
		synced(rt, p)
		Expect(rt.RunPod(bg(), testruntime.NewPod("pod0"))).To(Succeed())
		_, err := rt.CreateContainer(bg(), testruntime.NewContainer("pod0", "ctr0"))
		Expect(err).NotTo(HaveOccurred())
		Expect(rt.StopContainer(bg(), "ctr0")).To(Succeed())
		Expect(rt.RemoveContainer(bg(), "ctr0")).To(Succeed())

		Eventually(func() int { return p.Count(record.Unsolicited) }).Should(Equal(1))
		Expect(p.Lines()).To(ContainElement(And(
			HaveField("Ev", record.Unsolicited), HaveField("Detail", "sent=1 failed=1"), HaveField("Err", ""))))
	})

	It("synchronizes a snapshot larger than one message, split and reassembled", func() {
		// 4000 containers with 1.5 KiB of annotation each: about 6 MiB, over
		// ttrpc's 4 MiB message limit.
		rt := startRuntime()
		pods, ctrs := seed(100, 40, 1536)
		rt.Seed(pods, ctrs)
		p := startPlugin(harness.PluginSpec{
			Name: "big", Idx: "10", Socket: rt.SocketPath(), Record: recordFile("big"),
			Annotate: map[string]string{"big.example/seen": "yes"},
		})
		synced(rt, p)

		syncs := record.Filter(p.Lines(), func(l record.Line) bool { return l.Ev == record.Synchronize })
		Expect(syncs).To(HaveLen(1), "the handler sees one reassembled snapshot")
		Expect(syncs[0].Pods).To(Equal(100))
		Expect(syncs[0].Ctrs).To(Equal(4000))

		By("the plugin stays connected and handles events afterwards")
		Expect(rt.RunPod(bg(), testruntime.NewPod("pod-new"))).To(Succeed())
		adjust, err := rt.CreateContainer(bg(), testruntime.NewContainer("pod-new", "ctr-new"))
		Expect(err).NotTo(HaveOccurred())
		Expect(adjust.GetAnnotations()).To(HaveKeyWithValue("big.example/seen", "yes"))
	})
})
