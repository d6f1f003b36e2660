// Package handover_test proves the plugin handover of issue 4 with real
// plugin processes (test/plugins/handover-plugin, upstream v0.12.5 binaries)
// and the test runtime (test/runtime): one spec per row of the issue's
// table, and the exactly-once suite, which checks from every plugin
// process's own record and from the runtime's side of the wire that every
// event went to exactly one instance, the active one.
package handover_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"go.uber.org/goleak"

	"github.com/nri-handover/nri/pkg/adaptation"
)

func TestHandover(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "NRI plugin handover")
}

// binaries are the executables the specs run.
type binaries struct {
	Plugin          string `json:"plugin"`          // test/plugins/handover-plugin
	UpstreamPlugin  string `json:"upstreamPlugin"`  // test/upstream/plugin
	UpstreamRuntime string `json:"upstreamRuntime"` // test/upstream/runtime
}

var bins binaries

var _ = SynchronizedBeforeSuite(func(ctx SpecContext) []byte {
	dir, err := os.MkdirTemp("", "nri-handover-bin")
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(os.RemoveAll, dir)
	b, err := build(ctx, dir)
	Expect(err).NotTo(HaveOccurred())
	buf, err := json.Marshal(b)
	Expect(err).NotTo(HaveOccurred())
	return buf
}, func(buf []byte) {
	Expect(json.Unmarshal(buf, &bins)).To(Succeed())
	SetDefaultEventuallyTimeout(30 * time.Second)
	SetDefaultEventuallyPollingInterval(5 * time.Millisecond)
}, NodeTimeout(5*time.Minute))

// build compiles the plugin and the upstream binaries with one go build.
func build(ctx context.Context, dir string) (*binaries, error) {
	out, err := exec.CommandContext(ctx, "go", "env", "GOMOD").Output()
	if err != nil {
		return nil, fmt.Errorf("go env GOMOD: %w", err)
	}
	root := filepath.Dir(strings.TrimSpace(string(out)))
	pkgs := []string{"./test/plugins/handover-plugin", "./test/upstream/plugin", "./test/upstream/runtime"}
	args := append([]string{"build", "-o", dir + string(filepath.Separator)}, pkgs...)
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("go %s: %w\n%s", strings.Join(args, " "), err, out)
	}
	return &binaries{
		Plugin:          filepath.Join(dir, "handover-plugin"),
		UpstreamPlugin:  filepath.Join(dir, "plugin"),
		UpstreamRuntime: filepath.Join(dir, "runtime"),
	}, nil
}

// requestTimeout is generous so that a loaded CI machine never trips it;
// specs about timeouts lower it for themselves.
const requestTimeout = 20 * time.Second

// checkLeaks registers, as the last cleanup to run, a check that the spec
// left no goroutines behind.
func checkLeaks() {
	ignore := goleak.IgnoreCurrent()
	DeferCleanup(func() {
		Eventually(func() error { return goleak.Find(ignore) }).Should(Succeed())
	})
}

// withTimeouts sets the adaptation's process-wide timeouts for one spec.
func withTimeouts(registration, request time.Duration) {
	adaptation.SetPluginRegistrationTimeout(registration)
	adaptation.SetPluginRequestTimeout(request)
	DeferCleanup(func() {
		adaptation.SetPluginRegistrationTimeout(adaptation.DefaultPluginRegistrationTimeout)
		adaptation.SetPluginRequestTimeout(adaptation.DefaultPluginRequestTimeout)
	})
}

// shortDir is a fresh directory short enough for unix socket paths.
func shortDir() string {
	dir, err := os.MkdirTemp("/tmp", "nriho")
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(os.RemoveAll, dir)
	return dir
}

func bg() context.Context { return context.Background() }
