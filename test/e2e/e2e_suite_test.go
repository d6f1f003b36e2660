package e2e

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"go.uber.org/goleak"

	"github.com/nri-handover/nri/pkg/adaptation"
	"github.com/nri-handover/nri/test/e2e/harness"
	testruntime "github.com/nri-handover/nri/test/runtime"
)

func TestE2E(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "NRI cross-process integration")
}

var bins *harness.Binaries

var _ = SynchronizedBeforeSuite(func(ctx SpecContext) []byte {
	dir, err := os.MkdirTemp("", "nri-e2e-bin")
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(os.RemoveAll, dir)
	b, err := harness.Build(ctx, dir)
	Expect(err).NotTo(HaveOccurred())
	b.Skew, err = harness.BuildSkew(ctx, dir, harness.SkewVersions)
	Expect(err).NotTo(HaveOccurred())
	return b.Marshal()
}, func(buf []byte) {
	var err error
	bins, err = harness.UnmarshalBinaries(buf)
	Expect(err).NotTo(HaveOccurred())
	SetDefaultEventuallyTimeout(30 * time.Second)
	SetDefaultEventuallyPollingInterval(10 * time.Millisecond)
}, NodeTimeout(5*time.Minute))

// The timeouts specs use unless they test them: generous, so a loaded CI
// machine never trips them.
const (
	adaptationRegistrationTimeout = 20 * time.Second
	requestTimeout                = 20 * time.Second
)

// checkLeaks registers, as the last cleanup to run, a check that the spec
// left no goroutines behind (everything else is cleaned up before it).
func checkLeaks() {
	ignore := goleak.IgnoreCurrent()
	DeferCleanup(func() {
		Eventually(func() error { return goleak.Find(ignore) }).WithTimeout(10 * time.Second).Should(Succeed())
	})
}

// withTimeouts sets the adaptation's global timeouts for one spec.
func withTimeouts(registration, request time.Duration) {
	adaptation.SetPluginRegistrationTimeout(registration)
	adaptation.SetPluginRequestTimeout(request)
	DeferCleanup(func() {
		adaptation.SetPluginRegistrationTimeout(adaptation.DefaultPluginRegistrationTimeout)
		adaptation.SetPluginRequestTimeout(adaptation.DefaultPluginRequestTimeout)
	})
}

// quietLogs sends the adaptation's logs to GinkgoWriter: shown for failed
// specs only.
func quietLogs() testruntime.Option {
	l := slog.New(slog.NewTextHandler(GinkgoWriter, &slog.HandlerOptions{Level: slog.LevelDebug}))
	return testruntime.WithAdaptationOptions(adaptation.WithLogger(adaptation.NewSlogLogger(l)))
}

// newRuntime creates a test runtime logging to GinkgoWriter.
func newRuntime(opts ...testruntime.Option) *testruntime.Runtime {
	rt, err := testruntime.New(append([]testruntime.Option{quietLogs()}, opts...)...)
	Expect(err).NotTo(HaveOccurred())
	return rt
}

// startRuntime creates and starts a test runtime, stopped at cleanup.
func startRuntime(opts ...testruntime.Option) *testruntime.Runtime {
	rt := newRuntime(opts...)
	Expect(rt.Start()).To(Succeed())
	DeferCleanup(rt.Stop)
	return rt
}

// recordFile returns a fresh record path for the spec.
func recordFile(name string) string {
	return filepath.Join(GinkgoT().TempDir(), name+".rec")
}

// startPlugin runs an nriplugin process; at cleanup it is asked to stop and
// reaped (killed if it does not stop).
func startPlugin(spec harness.PluginSpec) *harness.Plugin {
	p, err := bins.StartPlugin(spec, GinkgoWriter)
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(reap, p.Proc)
	return p
}

// reap stops a process and waits for it.
func reap(p *harness.Proc) {
	_ = p.Signal(syscall.SIGTERM)
	select {
	case <-p.Done():
	case <-time.After(10 * time.Second):
		_ = p.Kill()
		<-p.Done()
	}
}

// synced waits until the runtime has committed every plugin, relying on
// upstream's guarantee: once a plugin's Synchronize returned, the next
// BlockPluginSync waits until it is registered.
func synced(rt *testruntime.Runtime, ps ...*harness.Plugin) {
	for _, p := range ps {
		Eventually(p.Synchronized).Should(BeTrue(), "plugin %s never synchronized", p.Name)
	}
	rt.Barrier()
}

func bg() context.Context { return context.Background() }

// shortDir returns a fresh directory short enough for unix socket paths
// (GinkgoT().TempDir() can exceed the 108-byte limit), removed at cleanup.
func shortDir() string {
	dir, err := os.MkdirTemp("/tmp", "nrie2e")
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(os.RemoveAll, dir)
	return dir
}
