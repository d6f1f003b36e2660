package e2e

import (
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/nri-handover/nri/test/e2e/harness"
	"github.com/nri-handover/nri/test/plugins/record"
	testruntime "github.com/nri-handover/nri/test/runtime"
)

// containerd holds its internal/nri mutex around Stop() and takes the same
// mutex in its SyncFn and UpdateFn. A plugin joining while containerd stops
// has its SyncFn wait for that mutex: Stop must not wait for the join.
var _ = Describe("Stop in a runtime with containerd's locking", func() {
	BeforeEach(checkLeaks)

	DescribeTable("returns while a plugin joins, and the plugin is not synchronized after it",
		func(extra ...string) {
			withTimeouts(adaptationRegistrationTimeout, requestTimeout)
			rt := newRuntime(testruntime.WithContainerdLocking())
			Expect(rt.Start()).To(Succeed())
			DeferCleanup(rt.Stop)

			// The runtime's lock, released once Stop returned (or at
			// cleanup, so that a failing spec does not hang the suite).
			var once sync.Once
			unlock := rt.LockNRI()
			release := func() { once.Do(unlock) }
			DeferCleanup(release)

			p := startPlugin(harness.PluginSpec{
				Name: "joining", Idx: "10", Socket: rt.SocketPath(), Record: recordFile("joining"),
				Extra: extra,
			})
			Eventually(func() int { n, _ := rt.SyncFnCalls(); return n }).Should(Equal(2),
				"the plugin's join calls the SyncFn (Start called it first, as upstream's), which waits for the runtime's lock")

			stopped := make(chan struct{})
			go func() {
				defer close(stopped)
				defer release()
				rt.StopLocked()
			}()
			Eventually(stopped).WithTimeout(time.Minute).Should(BeClosed(),
				"Stop waits for a SyncFn that waits for the lock held around Stop")

			By("the SyncFn, let in after Stop, synchronizes nobody")
			Eventually(func() int { _, n := rt.SyncFnCalls(); return n }).Should(Equal(2))
			Expect(rt.Syncs()).To(Equal(1), "Start's call only")
			Eventually(p.Done()).Should(BeClosed())
			Expect(p.Count(record.Synchronize)).To(BeZero())
		},
		Entry("a plugin without handover"),
		Entry("a plugin with handover", "-handover"),
	)
})
