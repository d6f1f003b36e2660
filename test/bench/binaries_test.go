package bench

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"go.uber.org/goleak"
)

// binaries are built once per test binary, on first use.
type binaries struct {
	ours, upstream, plugin string // runtimes and our plugin
}

var (
	buildOnce sync.Once
	built     *binaries
	buildErr  error
	buildDir  string
)

// TestMain removes the binaries built for the run and fails it if a
// benchmark left a goroutine behind (they start runtimes, plugins and
// adaptations and stop them).
func TestMain(m *testing.M) {
	code := m.Run()
	if buildDir != "" {
		os.RemoveAll(buildDir)
	}
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintf(os.Stderr, "goleak: %v\n", err)
			code = 1
		}
	}
	os.Exit(code)
}

// bins builds the benchmark runtimes and plugin or fails b.
func bins(b *testing.B) *binaries {
	b.Helper()
	buildOnce.Do(func() { built, buildErr = build() })
	if buildErr != nil {
		b.Fatal(buildErr)
	}
	return built
}

func build() (*binaries, error) {
	dir, err := os.MkdirTemp("", "nribench-bin")
	if err != nil {
		return nil, err
	}
	buildDir = dir
	out := &binaries{
		ours:     filepath.Join(dir, "ours-runtime"),
		upstream: filepath.Join(dir, "upstream-runtime"),
		plugin:   filepath.Join(dir, "benchplugin"),
	}
	for _, t := range []struct{ out, pkg string }{
		{out.ours, "../../test/bench/benchruntime"},
		{out.upstream, "../../test/upstream/benchruntime"},
		{out.plugin, "./benchplugin"},
	} {
		cmd := exec.Command("go", "build", "-o", t.out, t.pkg)
		if b, err := cmd.CombinedOutput(); err != nil {
			return nil, fmt.Errorf("go build %s: %w\n%s", t.pkg, err, b)
		}
	}
	return out, nil
}

// upstreamPlugin is the command line of the plugin on upstream's stub.
func (x *binaries) upstreamPlugin() string { return x.upstream + " plugin" }

// runtime returns the runtime binary for impl ("ours" or "upstream").
func (x *binaries) runtime(impl string) string {
	if impl == "upstream" {
		return x.upstream
	}
	return x.ours
}

// pluginCmd returns the plugin command line for stub ("ours" or "upstream"),
// with extra flags.
func (x *binaries) pluginCmd(stub string, extra ...string) string {
	cmd := x.plugin
	if stub == "upstream" {
		cmd = x.upstreamPlugin()
	}
	return strings.Join(append([]string{cmd}, extra...), " ")
}
