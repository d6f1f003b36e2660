package e2e

import (
	"fmt"
	"strings"
	"syscall"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/nri-handover/nri/api"
	"github.com/nri-handover/nri/test/e2e/harness"
	"github.com/nri-handover/nri/test/plugins/record"
	testruntime "github.com/nri-handover/nri/test/runtime"
)

// A plugin process whose reader stopped (-stop-reading-after) lets the socket
// buffers fill up: a large enough write to it blocks in the kernel, where no
// context reaches it. Every request must still be bounded by the request
// timeout, and the plugin disconnected.
var _ = Describe("A plugin that stops reading", func() {
	BeforeEach(checkLeaks)

	// The request timeout of these specs bounds the stalls; the Eventually
	// limits only say "it returns".
	const (
		stallTimeout = time.Second
		returns      = time.Minute
	)

	// seedLarge gives the runtime a snapshot whose Synchronize message (about
	// 2 MiB) is far larger than the socket buffers.
	seedLarge := func(rt *testruntime.Runtime) {
		var pods []*api.PodSandbox
		for i := range 512 {
			pod := testruntime.NewPod(fmt.Sprintf("pod%04d", i))
			pod.Annotations = map[string]string{"filler": strings.Repeat("x", 4096)}
			pods = append(pods, pod)
		}
		rt.Seed(pods, nil)
	}

	stalledPlugin := func(rt *testruntime.Runtime, after string) *harness.Plugin {
		return startPlugin(harness.PluginSpec{
			Name: "stalled", Idx: "10", Socket: rt.SocketPath(), Record: recordFile("stalled"),
			StopReadingAfter: after,
		})
	}

	// disconnected lets the plugin read again: it then finds its connection
	// closed by the runtime, and exits.
	disconnected := func(p *harness.Plugin) {
		Expect(p.Signal(syscall.SIGUSR2)).To(Succeed())
		Eventually(p.Done()).WithTimeout(returns).Should(BeClosed(), "the plugin's connection is still open")
	}

	It("cannot hold runtime operations behind its synchronization", func() {
		withTimeouts(adaptationRegistrationTimeout, stallTimeout)
		rt := startRuntime()
		seedLarge(rt)

		// Hold the plugin's synchronization back until its reader stopped.
		blk := rt.Adaptation().BlockPluginSync()
		p := stalledPlugin(rt, "configure")
		Eventually(p.StoppedReading).Should(BeTrue())
		blk.Unblock()
		Eventually(p.Unread).Should(BeTrue(), "the synchronization started")

		By("a runtime operation gets in once the synchronization gave up")
		blocked := make(chan struct{})
		go func() {
			defer close(blocked)
			rt.Adaptation().BlockPluginSync().Unblock()
		}()
		Eventually(blocked).WithTimeout(returns).Should(BeClosed(), "BlockPluginSync waits for a write to a plugin that does not read")
		disconnected(p)
		Expect(p.Count(record.Synchronize)).To(BeZero())
	})

	It("cannot hold Stop, even SIGSTOPped", func() {
		withTimeouts(adaptationRegistrationTimeout, stallTimeout)
		rt := newRuntime()
		Expect(rt.Start()).To(Succeed())
		DeferCleanup(rt.Stop)
		seedLarge(rt)

		p := stalledPlugin(rt, "configure")
		DeferCleanup(p.Signal, syscall.SIGCONT) // before it is reaped
		Eventually(p.Unread).Should(BeTrue(), "the synchronization started")
		Expect(p.Signal(syscall.SIGSTOP)).To(Succeed())
		Eventually(func() string { return harness.ProcessState(p.Pid()) }).Should(Equal("T"))

		stopped := make(chan struct{})
		go func() {
			defer close(stopped)
			rt.Stop()
		}()
		Eventually(stopped).WithTimeout(returns).Should(BeClosed(), "Stop waits for a write to a stopped plugin")
		Expect(p.Signal(syscall.SIGCONT)).To(Succeed())
		disconnected(p)
	})

	It("cannot hold an event past the request timeout", func() {
		withTimeouts(adaptationRegistrationTimeout, stallTimeout)
		rt := startRuntime()
		p := stalledPlugin(rt, "RunPodSandbox")
		Eventually(p.Synchronized).Should(BeTrue())
		rt.Barrier()
		Expect(rt.RunPod(bg(), testruntime.NewPod("pod0"))).To(Succeed())
		Expect(p.StoppedReading()).To(BeTrue())

		ctr := testruntime.NewContainer("pod0", "ctr0")
		ctr.Annotations["filler"] = strings.Repeat("x", 2<<20)
		created := make(chan error, 1)
		go func() {
			_, err := rt.CreateContainer(bg(), ctr)
			created <- err
		}()
		Eventually(created).WithTimeout(returns).Should(Receive(Not(HaveOccurred())),
			"CreateContainer waits for a write to a plugin that does not read")
		disconnected(p)
		Expect(p.Events()).NotTo(ContainElement("CreateContainer:ctr0"))
	})
})
