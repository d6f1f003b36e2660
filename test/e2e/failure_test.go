package e2e

import (
	"crypto/rand"
	"errors"
	"io"
	"net"
	"syscall"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/nri-handover/nri/pkg/adaptation"

	"github.com/nri-handover/nri/test/e2e/harness"
	"github.com/nri-handover/nri/test/plugins/record"
	testruntime "github.com/nri-handover/nri/test/runtime"
)

// dialRaw connects to the runtime's socket without speaking NRI; the
// connection is closed at cleanup.
func dialRaw(socket string) net.Conn {
	conn, err := net.Dial("unix", socket)
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(conn.Close)
	return conn
}

var _ = Describe("Plugin failures", func() {
	BeforeEach(checkLeaks)

	It("closes a plugin that times out and lets the request continue without it", func() {
		withTimeouts(adaptationRegistrationTimeout, requestTimeout)
		rt := startRuntime()
		slow := startPlugin(harness.PluginSpec{
			Name: "slow", Idx: "10", Socket: rt.SocketPath(), Record: recordFile("slow"),
			HangAt: "CreateContainer",
		})
		fine := startPlugin(harness.PluginSpec{
			Name: "fine", Idx: "20", Socket: rt.SocketPath(), Record: recordFile("fine"),
			Annotate: map[string]string{"fine.example/seen": "yes"},
		})
		synced(rt, slow, fine)
		Expect(rt.RunPod(bg(), testruntime.NewPod("pod0"))).To(Succeed())
		// Timeouts apply per request. Upstream's default: quick, yet long
		// enough for the healthy plugin on a loaded machine. The hung plugin
		// blocks until its request is cancelled, so only the timeout ends it.
		adaptation.SetPluginRequestTimeout(adaptation.DefaultPluginRequestTimeout)

		adjust, err := rt.CreateContainer(bg(), testruntime.NewContainer("pod0", "ctr0"))
		Expect(err).NotTo(HaveOccurred())
		Expect(adjust.GetAnnotations()).To(HaveKeyWithValue("fine.example/seen", "yes"))
		Expect(slow.Count(record.Hang)).To(Equal(1))

		By("the timed-out plugin is disconnected and gets nothing more")
		Eventually(slow.Done()).Should(BeClosed(), "the closed connection ends the plugin's Run")
		Expect(rt.StartContainer(bg(), "ctr0")).To(Succeed())
		Expect(fine.Events()).To(ContainElement("StartContainer:ctr0"))
		Expect(slow.Events()).NotTo(ContainElement("StartContainer:ctr0"))
	})

	It("does not let a connection hung in registration delay another plugin", func() {
		// A registration timeout far beyond the Eventually below: if
		// registrations were handled one at a time, the good plugin would
		// wait for it.
		withTimeouts(5*time.Minute, requestTimeout)
		rt := startRuntime()
		dialRaw(rt.SocketPath())
		hung := startPlugin(harness.PluginSpec{
			Name: "hung", Idx: "05", Socket: rt.SocketPath(), Record: recordFile("hung"),
			HangAt: "register",
		})
		Eventually(func() int { return hung.Count(record.Connected) }).Should(Equal(1))

		good := startPlugin(harness.PluginSpec{
			Name: "good", Idx: "10", Socket: rt.SocketPath(), Record: recordFile("good"),
		})
		Eventually(good.Synchronized).WithTimeout(time.Minute).Should(BeTrue())
		rt.Barrier()
		Expect(rt.Lifecycle(bg(), "pod0", "ctr0")).To(Succeed())
		Expect(good.Events()).To(HaveLen(13))
	})

	It("does not let a plugin hung in Configure delay another plugin", func() {
		withTimeouts(adaptationRegistrationTimeout, 5*time.Minute)
		rt := startRuntime()
		hung := startPlugin(harness.PluginSpec{
			Name: "dawdler", Idx: "05", Socket: rt.SocketPath(), Record: recordFile("dawdler"),
			HangAt: "configure",
		})
		Eventually(func() int { return hung.Count(record.Hang) }).Should(Equal(1))

		good := startPlugin(harness.PluginSpec{
			Name: "good", Idx: "10", Socket: rt.SocketPath(), Record: recordFile("good"),
		})
		Eventually(good.Synchronized).WithTimeout(time.Minute).Should(BeTrue())
		rt.Barrier()
		Expect(rt.RunPod(bg(), testruntime.NewPod("pod0"))).To(Succeed())
		Expect(good.Events()).To(Equal([]string{"RunPodSandbox:pod0"}))
		Expect(hung.Events()).To(BeEmpty())
	})

	It("keeps serving other plugins when garbage arrives on the socket", func() {
		withTimeouts(adaptationRegistrationTimeout, requestTimeout)
		rt := startRuntime()
		before := startPlugin(harness.PluginSpec{
			Name: "before", Idx: "10", Socket: rt.SocketPath(), Record: recordFile("before"),
		})
		synced(rt, before)

		garbage := make([]byte, 64<<10)
		_, err := rand.Read(garbage)
		Expect(err).NotTo(HaveOccurred())
		var garbled []net.Conn
		for _, chunk := range [][]byte{
			garbage,
			// A frame header announcing a huge payload that never comes.
			{0, 0, 0, 1, 0x7f, 0xff, 0xff, 0xff},
			[]byte("GET / HTTP/1.1\r\nHost: nri\r\n\r\n"),
		} {
			conn := dialRaw(rt.SocketPath())
			_, err := conn.Write(chunk)
			Expect(err).NotTo(HaveOccurred(), "the garbage must reach the runtime")
			garbled = append(garbled, conn)
		}
		// The runtime read the garbage and gave up on the connection (a
		// frame over the maximum, or no registration in time): the peer
		// sees it closed, so the runtime has dealt with it by now.
		for i, conn := range garbled {
			Expect(conn.SetReadDeadline(time.Now().Add(time.Minute))).To(Succeed())
			_, err := io.Copy(io.Discard, conn)
			if errors.Is(err, syscall.ECONNRESET) {
				err = nil // closed with garbage left unread
			}
			Expect(err).NotTo(HaveOccurred(), "garbage connection %d was not closed by the runtime", i)
		}

		after := startPlugin(harness.PluginSpec{
			Name: "after", Idx: "20", Socket: rt.SocketPath(), Record: recordFile("after"),
		})
		synced(rt, after)
		Expect(rt.Lifecycle(bg(), "pod0", "ctr0")).To(Succeed())
		Expect(before.Events()).To(HaveLen(13))
		Expect(after.Events()).To(HaveLen(13))
	})
})

var _ = Describe("Plugin errors and crashes", func() {
	var rt *testruntime.Runtime

	BeforeEach(func() {
		checkLeaks()
		withTimeouts(adaptationRegistrationTimeout, requestTimeout)
		rt = startRuntime()
	})

	It("fails the request when a plugin returns an error, naming the plugin, and keeps it connected", func() {
		picky := startPlugin(harness.PluginSpec{
			Name: "picky", Idx: "10", Socket: rt.SocketPath(), Record: recordFile("picky"),
			FailAt: "CreateContainer", OnlyContainer: "bad",
		})
		synced(rt, picky)
		Expect(rt.RunPod(bg(), testruntime.NewPod("pod0"))).To(Succeed())

		_, err := rt.CreateContainer(bg(), testruntime.NewContainer("pod0", "bad"))
		Expect(err).To(HaveOccurred())
		Expect(err.Error()).To(ContainSubstring("picky"))
		Expect(rt.Container("bad")).To(BeNil())

		_, err = rt.CreateContainer(bg(), testruntime.NewContainer("pod0", "good"))
		Expect(err).NotTo(HaveOccurred())
		Expect(picky.Events()).To(ContainElements("CreateContainer:bad", "CreateContainer:good"))
	})

	It("disconnects a plugin whose synchronization fails, without affecting others", func() {
		ok := startPlugin(harness.PluginSpec{Name: "ok", Idx: "20", Socket: rt.SocketPath(), Record: recordFile("ok")})
		synced(rt, ok)
		broken := startPlugin(harness.PluginSpec{
			Name: "broken", Idx: "10", Socket: rt.SocketPath(), Record: recordFile("broken"),
			FailAt: "synchronize",
		})
		Eventually(broken.Done()).Should(BeClosed())

		Expect(rt.Lifecycle(bg(), "pod0", "ctr0")).To(Succeed())
		Expect(ok.Events()).To(HaveLen(13))
		Expect(broken.Events()).To(BeEmpty())
	})

	It("drops a plugin killed with SIGKILL and keeps relaying events to the others", func() {
		rec := recordFile("shared")
		victim := startPlugin(harness.PluginSpec{Name: "victim", Idx: "10", Socket: rt.SocketPath(), Record: rec})
		other := startPlugin(harness.PluginSpec{Name: "other", Idx: "20", Socket: rt.SocketPath(), Record: rec})
		synced(rt, victim, other)
		Expect(rt.RunPod(bg(), testruntime.NewPod("pod0"))).To(Succeed())

		Expect(victim.Kill()).To(Succeed())
		Eventually(victim.Done()).Should(BeClosed())

		_, err := rt.CreateContainer(bg(), testruntime.NewContainer("pod0", "ctr0"))
		Expect(err).NotTo(HaveOccurred())
		Expect(rt.StartContainer(bg(), "ctr0")).To(Succeed())
		Expect(other.Events()).To(Equal([]string{"RunPodSandbox:pod0", "CreateContainer:ctr0",
			"PostCreateContainer:ctr0", "StartContainer:ctr0", "PostStartContainer:ctr0"}))
		Expect(victim.Events()).To(Equal([]string{"RunPodSandbox:pod0"}))
	})

	It("lets a request proceed at once when its plugin dies in the middle of it", func() {
		// A request timeout far beyond the Eventually below: the request
		// must end because the connection broke, not because it timed out.
		adaptation.SetPluginRequestTimeout(5 * time.Minute)
		doomed := startPlugin(harness.PluginSpec{
			Name: "doomed", Idx: "10", Socket: rt.SocketPath(), Record: recordFile("doomed"), HangAt: "CreateContainer",
		})
		other := startPlugin(harness.PluginSpec{
			Name: "other", Idx: "20", Socket: rt.SocketPath(), Record: recordFile("other"),
			Annotate: map[string]string{"other.example/seen": "yes"},
		})
		synced(rt, doomed, other)
		Expect(rt.RunPod(bg(), testruntime.NewPod("pod0"))).To(Succeed())

		done := make(chan error, 1)
		go func() {
			_, err := rt.CreateContainer(bg(), testruntime.NewContainer("pod0", "ctr0"))
			done <- err
		}()
		Eventually(func() int { return doomed.Count(record.Hang) }).Should(Equal(1))
		Expect(doomed.Kill()).To(Succeed())

		var err error
		Eventually(done).WithTimeout(time.Minute).Should(Receive(&err))
		Expect(err).NotTo(HaveOccurred())
		Expect(rt.Container("ctr0").GetAnnotations()).To(HaveKeyWithValue("other.example/seen", "yes"))
	})

	It("releases the synchronization lock when a plugin dies while synchronizing", func() {
		adaptation.SetPluginRequestTimeout(5 * time.Minute)
		doomed := startPlugin(harness.PluginSpec{
			Name: "doomed", Idx: "10", Socket: rt.SocketPath(), Record: recordFile("doomed"), HangAt: "synchronize",
		})
		Eventually(func() int { return doomed.Count(record.Hang) }).Should(Equal(1))
		Expect(doomed.Kill()).To(Succeed())

		done := make(chan error, 1)
		go func() { done <- rt.RunPod(bg(), testruntime.NewPod("pod0")) }()
		Eventually(done).WithTimeout(time.Minute).Should(Receive(BeNil()))

		late := startPlugin(harness.PluginSpec{Name: "late", Idx: "20", Socket: rt.SocketPath(), Record: recordFile("late")})
		synced(rt, late)
		Expect(late.Lines()).To(ContainElement(And(HaveField("Ev", record.Synchronize), HaveField("Pods", 1))))
	})

	Context("with a failure policy", func() {
		// hangOnce starts a plugin that hangs in its first CreateContainer
		// only, and lowers the request timeout once everything is synced.
		hangOnce := func(spec harness.PluginSpec) *harness.Plugin {
			spec.Socket, spec.Record = rt.SocketPath(), recordFile(spec.Name)
			spec.HangAt, spec.HangCount = "CreateContainer", 1
			p := startPlugin(spec)
			synced(rt, p)
			Expect(rt.RunPod(bg(), testruntime.NewPod("pod0"))).To(Succeed())
			adaptation.SetPluginRequestTimeout(adaptation.DefaultPluginRequestTimeout)
			return p
		}

		It("fails the request when the plugin asked for it, naming the plugin", func() {
			p := hangOnce(harness.PluginSpec{Name: "strict", Idx: "10", FailRequest: true})
			_, err := rt.CreateContainer(bg(), testruntime.NewContainer("pod0", "ctr0"))
			Expect(err).To(MatchError(ContainSubstring("strict")))
			Expect(rt.Container("ctr0")).To(BeNil())
			Expect(p.Count(record.Hang)).To(Equal(1))
		})

		It("keeps a plugin that asked to stay connected after a timeout", func() {
			p := hangOnce(harness.PluginSpec{Name: "sticky", Idx: "10", KeepConnected: true})
			_, err := rt.CreateContainer(bg(), testruntime.NewContainer("pod0", "ctr0"))
			Expect(err).NotTo(HaveOccurred(), "the request proceeds without it")

			_, err = rt.CreateContainer(bg(), testruntime.NewContainer("pod0", "ctr1"))
			Expect(err).NotTo(HaveOccurred())
			Expect(p.Exited()).To(BeFalse())
			Expect(p.Events()).To(ContainElement("CreateContainer:ctr1"))
		})
	})

	It("rejects a registration with an invalid index, naming it, without affecting others", func() {
		good := startPlugin(harness.PluginSpec{Name: "good", Idx: "10", Socket: rt.SocketPath(), Record: recordFile("good")})
		synced(rt, good)
		// Upstream's stub sends whatever index it is given: the runtime must
		// check it.
		rec := recordFile("bad")
		bad, err := harness.StartProc("upstream plugin", bins.UpstreamPlugin, []string{
			"-socket", rt.SocketPath(), "-name", "bad", "-idx", "1x", "-record", rec,
		}, GinkgoWriter)
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(reap, bad)

		Eventually(bad.Done()).Should(BeClosed())
		lines, err := record.Read(rec)
		Expect(err).NotTo(HaveOccurred())
		Expect(lines).To(ContainElement(And(HaveField("Ev", record.Exit), HaveField("Err", ContainSubstring("1x")))))
		Expect(rt.Lifecycle(bg(), "pod0", "ctr0")).To(Succeed())
		Expect(good.Events()).To(HaveLen(13))
	})
})
