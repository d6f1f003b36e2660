package handover_test

import (
	"os"
	"path/filepath"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/nri-handover/nri/pkg/adaptation"
	"github.com/nri-handover/nri/test/plugins/record"
)

// nobody is the user the foreign successors run as.
const nobody = 65534

// shareWith lets plugin processes of another user use the env: run the
// plugin binary, connect to the socket, and write their record and ready
// files in the env's directory. Needs root.
func (e *env) shareWith() {
	if os.Geteuid() != 0 {
		Skip("running plugins as another user needs root")
	}
	Expect(os.Chmod(filepath.Dir(bins.Plugin), 0o755)).To(Succeed())
	Expect(os.Chmod(e.dir, 0o777)).To(Succeed())
	Expect(os.Chmod(e.rt.SocketPath(), 0o666)).To(Succeed())
}

var _ = Describe("Who may supersede whom", Label("handover", "supersede"), func() {
	It("runs, by default, an instance of another user beside the active one, in a lineage of its own: neither takes over", func() {
		e := newEnv()
		e.shareWith()
		a := e.start(instSpec{Instance: "a", Generation: 1})
		e.confirmActive(a, 1)
		Expect(e.rt.Lifecycle(bg(), "pod0", "ctr0")).To(Succeed())

		By("b may not evict a, so it neither takes a's place nor is refused for a's sake (a squatter keeps nobody out)")
		b := e.start(instSpec{Instance: "b", Generation: 2, UID: nobody})
		e.confirmActive(b, 1)

		mark := e.rt.LastSeq()
		Expect(e.rt.Lifecycle(bg(), "pod1", "ctr1")).To(Succeed())
		Expect(a.seqs()).To(ContainElements(seqsAfter(e.rt, mark)), "a loses nothing")
		Expect(b.seqs()).To(ContainElements(seqsAfter(e.rt, mark)), "b runs beside a, as under upstream NRI")
		Expect(a.isActive()).To(BeTrue())
		Expect(a.count(record.Shutdown)).To(BeZero())

		By("a's own successor still takes over from a")
		c := e.start(instSpec{Instance: "c", Generation: 3})
		e.confirmActive(c, 1)
		Eventually(a.has(record.Shutdown, superseded, "succ=c")).Should(BeTrue())
		Expect(b.isActive()).To(BeTrue())
		Expect(b.count(record.Shutdown)).To(BeZero())
	})

	It("lets a successor running as another user take over with SupersedeAnyPeer", func() {
		e := newEnv(adaptation.WithSupersedePolicy(adaptation.SupersedeAnyPeer))
		e.shareWith()
		a := e.start(instSpec{Instance: "a", Generation: 1})
		e.confirmActive(a, 1)
		Expect(e.rt.Lifecycle(bg(), "pod0", "ctr0")).To(Succeed())

		b := e.start(instSpec{Instance: "b", Generation: 2, UID: nobody})
		e.confirmActive(b, 1)
		Eventually(a.has(record.Shutdown, superseded, "succ=b")).Should(BeTrue())
		Expect(e.rt.Lifecycle(bg(), "pod1", "ctr1")).To(Succeed())
		Expect(b.seqs()).To(ContainElements(seqsAfter(e.rt, b.activeBy[0])))
		v := expectExactlyOnce(e.collect(collectOpts{inOrder: true}))
		Expect(v.Switches).To(Equal(1))
	})

	It("lets a successor of the same user take over by default, whichever user it is", func() {
		e := newEnv()
		e.shareWith()
		a := e.start(instSpec{Instance: "a", Generation: 1, UID: nobody})
		e.confirmActive(a, 1)
		b := e.start(instSpec{Instance: "b", Generation: 2, UID: nobody})
		e.confirmActive(b, 1)
		Eventually(a.has(record.Shutdown, superseded, "succ=b")).Should(BeTrue())

		By("and runs root's instance beside nobody's: neither may take over from the other")
		c := e.start(instSpec{Instance: "c", Generation: 3})
		e.confirmActive(c, 1)
		Expect(b.isActive()).To(BeTrue())
		Expect(b.count(record.Shutdown)).To(BeZero())
	})
})
