package wire

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"go.uber.org/goleak"
)

// peerPath is the wirepeer binary built for this run.
var peerPath string

func TestWire(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "Wire compatibility with upstream NRI v0.12.5")
}

// Every spec runs the upstream peer as a process; none may leave a
// goroutine (exec's output copiers) behind.
var _ = BeforeEach(func() {
	ignore := goleak.IgnoreCurrent()
	DeferCleanup(func() {
		Eventually(func() error { return goleak.Find(ignore) }).Should(Succeed())
	})
})

var _ = BeforeSuite(func() {
	dir, err := os.MkdirTemp("", "nri-wirepeer-")
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(os.RemoveAll, dir)

	peerPath = filepath.Join(dir, "wirepeer")
	build := exec.Command("go", "build", "-o", peerPath, "github.com/nri-handover/nri/test/upstream/wirepeer")
	out, err := build.CombinedOutput()
	Expect(err).NotTo(HaveOccurred(), "building the upstream wire peer:\n%s", out)
})
