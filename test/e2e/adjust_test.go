package e2e

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/nri-handover/nri/test/e2e/harness"
	testruntime "github.com/nri-handover/nri/test/runtime"
)

var _ = Describe("Container adjustments", func() {
	var rt *testruntime.Runtime

	BeforeEach(func() {
		checkLeaks()
		withTimeouts(adaptationRegistrationTimeout, requestTimeout)
		rt = startRuntime()
		Expect(rt.RunPod(bg(), testruntime.NewPod("pod0"))).To(Succeed())
	})

	It("merges the adjustments of two plugins and the runtime applies them", func() {
		a := startPlugin(harness.PluginSpec{
			Name: "alpha", Idx: "10", Socket: rt.SocketPath(), Record: recordFile("alpha"),
			Annotate: map[string]string{"alpha.example/owner": "alpha"},
			Env:      map[string]string{"ALPHA": "1"},
		})
		b := startPlugin(harness.PluginSpec{
			Name: "bravo", Idx: "20", Socket: rt.SocketPath(), Record: recordFile("bravo"),
			Annotate:    map[string]string{"bravo.example/owner": "bravo"},
			MemoryLimit: 128 << 20,
		})
		synced(rt, a, b)

		adjust, err := rt.CreateContainer(bg(), testruntime.NewContainer("pod0", "ctr0"))
		Expect(err).NotTo(HaveOccurred())
		Expect(adjust.GetAnnotations()).To(HaveKeyWithValue("alpha.example/owner", "alpha"))
		Expect(adjust.GetAnnotations()).To(HaveKeyWithValue("bravo.example/owner", "bravo"))

		ctr := rt.Container("ctr0")
		Expect(ctr).NotTo(BeNil())
		Expect(ctr.Annotations).To(HaveKeyWithValue("alpha.example/owner", "alpha"))
		Expect(ctr.Annotations).To(HaveKeyWithValue("bravo.example/owner", "bravo"))
		Expect(ctr.Env).To(ContainElement("ALPHA=1"))
		Expect(rt.MemoryLimit("ctr0")).To(Equal(int64(128 << 20)))
	})

	It("fails the request when two plugins set the same field, naming both", func() {
		a := startPlugin(harness.PluginSpec{
			Name: "alpha", Idx: "10", Socket: rt.SocketPath(), Record: recordFile("alpha"),
			MemoryLimit: 100 << 20,
		})
		b := startPlugin(harness.PluginSpec{
			Name: "bravo", Idx: "20", Socket: rt.SocketPath(), Record: recordFile("bravo"),
			MemoryLimit: 200 << 20,
		})
		synced(rt, a, b)

		_, err := rt.CreateContainer(bg(), testruntime.NewContainer("pod0", "ctr0"))
		Expect(err).To(HaveOccurred())
		Expect(err.Error()).To(And(ContainSubstring("alpha"), ContainSubstring("bravo")))
		Expect(rt.Container("ctr0")).To(BeNil(), "a failed creation leaves no container")

		By("both plugins stay connected: the conflict is not their failure")
		Expect(rt.RunPod(bg(), testruntime.NewPod("pod1"))).To(Succeed())
		Expect(a.Events()).To(ContainElement("RunPodSandbox:pod1"))
		Expect(b.Events()).To(ContainElement("RunPodSandbox:pod1"))
	})

	It("reports conflicting annotations naming both plugins", func() {
		a := startPlugin(harness.PluginSpec{
			Name: "alpha", Idx: "10", Socket: rt.SocketPath(), Record: recordFile("alpha"),
			Annotate: map[string]string{"shared.example/key": "a"},
		})
		b := startPlugin(harness.PluginSpec{
			Name: "bravo", Idx: "20", Socket: rt.SocketPath(), Record: recordFile("bravo"),
			Annotate: map[string]string{"shared.example/key": "b"},
		})
		synced(rt, a, b)

		_, err := rt.CreateContainer(bg(), testruntime.NewContainer("pod0", "ctr0"))
		Expect(err).To(HaveOccurred())
		Expect(err.Error()).To(And(ContainSubstring("alpha"), ContainSubstring("bravo"), ContainSubstring("shared.example/key")))
	})
})
