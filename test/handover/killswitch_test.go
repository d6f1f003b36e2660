package handover_test

import (
	"fmt"
	"slices"
	"sync"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/nri-handover/nri/pkg/stub"
	"github.com/nri-handover/nri/test/plugins/record"
	testruntime "github.com/nri-handover/nri/test/runtime"
)

// creator creates a pod and a container after another until stopped, as a
// node's pod load does during a rollout.
type creator struct {
	mu      sync.Mutex
	created []string
	stop    chan struct{}
	done    chan error
}

func startCreating(e *env) *creator {
	c := &creator{stop: make(chan struct{}), done: make(chan error, 1)}
	go func() {
		for i := 0; ; i++ {
			select {
			case <-c.stop:
				c.done <- nil
				return
			default:
			}
			pod, ctr := fmt.Sprintf("load-pod-%d", i), fmt.Sprintf("load-ctr-%d", i)
			if err := e.rt.RunPod(bg(), testruntime.NewPod(pod)); err != nil {
				c.done <- fmt.Errorf("creating pod %s: %w", pod, err)
				return
			}
			if _, err := e.rt.CreateContainer(bg(), testruntime.NewContainer(pod, ctr)); err != nil {
				c.done <- fmt.Errorf("creating container %s: %w", ctr, err)
				return
			}
			c.mu.Lock()
			c.created = append(c.created, ctr)
			c.mu.Unlock()
		}
	}()
	return c
}

func (c *creator) containers() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.created)
}

// end stops the load and returns its error, if a creation failed.
func (c *creator) end() error {
	close(c.stop)
	return <-c.done
}

// creations counts the CreateContainer events of ctr an instance handled.
func (in *instance) creations(ctr string) int {
	return len(record.Filter(in.lines(), func(l record.Line) bool { return l.Ev == "CreateContainer" && l.Ctr == ctr }))
}

var _ = Describe("The kill switch rolled out with surge", Label("handover"), func() {
	BeforeEach(func() {
		checkLeaks()
		withTimeouts(requestTimeout, requestTimeout)
	})

	It("the new instance with $NRI_PLUGIN_HANDOVER=off takes over the opted-in one and serves as a plugin written for upstream", func() {
		e := newEnv()
		a := e.start(instSpec{Instance: "a", Version: "1.0.0", Generation: 1})
		e.confirmActive(a, 1)
		load := startCreating(e)
		Eventually(func() int { return len(load.containers()) }).Should(BeNumerically(">=", 3))

		b := e.start(instSpec{Instance: "b", Version: "2.0.0", Generation: 2, Env: []string{stub.HandoverEnvVar + "=off"}})

		By("the old instance is told it was superseded, naming the new one, and disconnected")
		Eventually(a.has(record.Shutdown, superseded, "succ=b", "succver=2.0.0", "succgen=2")).Should(BeTrue(), records("superseded", a, b))
		Eventually(a.has(Closed)).Should(BeTrue())
		Expect(a.exited()).To(BeFalse(), "a superseded instance stays up until stopped")

		By("the new instance is ready once synchronized, as a plugin written for upstream, and alone receives events")
		Eventually(b.readyFile).Should(BeAnExistingFile())
		Expect(b.find(record.RoleChange)).To(BeEmpty(), "no role notice to a plugin that did not opt in")
		Eventually(e.metrics.PluginCount).Should(Equal(1))
		n := len(load.containers())
		Eventually(func() int { return len(load.containers()) }).Should(BeNumerically(">=", n+3))
		Expect(load.end()).To(Succeed(), "no creation failed")

		By("every container created was acted on by exactly one instance, the last ones by the new one")
		created := load.containers()
		for _, ctr := range created {
			Expect(a.creations(ctr)+b.creations(ctr)).To(Equal(1), records("CreateContainer of "+ctr, a, b))
		}
		Expect(b.creations(created[len(created)-1])).To(Equal(1))
		Expect(e.logs.Lines()).NotTo(ContainElement(ContainSubstring("rejecting")))
		Expect(b.exited()).To(BeFalse())
	})
})
