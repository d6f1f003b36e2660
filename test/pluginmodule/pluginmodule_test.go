// Package pluginmodule builds plugins in modules of their own, outside this
// repository, the way README.md's "For plugin authors" section says, and
// runs them against this module's runtime over real sockets.
package pluginmodule

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	testruntime "github.com/nri-handover/nri/test/runtime"
)

// waitTimeout bounds every wait so that a bug fails the test instead of
// hanging it; nothing is timed.
const waitTimeout = 60 * time.Second

// placeholder is the checkout's path in README.md's go.mod lines.
const placeholder = "/path/to/nri-handover"

func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// readmeGoMod returns the go.mod lines of README.md's section for plugin
// authors (the fenced block after its plugin-go.mod marker), with the
// checkout's path put in.
func readmeGoMod(t *testing.T, root string) string {
	t.Helper()
	buf, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, after, ok := strings.Cut(string(buf), "<!-- plugin-go.mod")
	if !ok {
		t.Fatal("README.md has no plugin-go.mod block")
	}
	_, after, _ = strings.Cut(after, "```\n")
	block, _, ok := strings.Cut(after, "```")
	if !ok || !strings.Contains(block, placeholder) {
		t.Fatalf("README.md's plugin-go.mod block is not a fenced block naming %s: %q", placeholder, block)
	}
	return strings.ReplaceAll(block, placeholder, root)
}

// newModule lays out a module in a temporary directory outside the
// repository: go.mod from module and lines, its Go files from testdata/src.
func newModule(t *testing.T, module, lines, src string) string {
	t.Helper()
	dir := t.TempDir()
	files, err := filepath.Glob(filepath.Join("testdata", src, "*.go"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no Go files in testdata/%s: %v", src, err)
	}
	for _, f := range files {
		buf, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, filepath.Base(f)), buf, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	gomod := "module " + module + "\n\ngo 1.24.0\n\n" + lines
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte(gomod), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// goIn runs the go command in dir, outside any workspace, as the author
// would; the module cache serves what the module needs.
func goIn(dir string, args ...string) (stdout, stderr string, err error) {
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod")
	var o, e strings.Builder
	cmd.Stdout, cmd.Stderr = &o, &e
	err = cmd.Run()
	return o.String(), e.String(), err
}

func mustGo(t *testing.T, dir string, args ...string) string {
	t.Helper()
	out, errOut, err := goIn(dir, args...)
	if err != nil {
		t.Fatalf("go %s: %v\n%s%s", strings.Join(args, " "), err, out, errOut)
	}
	return out
}

// TestPluginModuleHandover: a plugin importing github.com/containerd/nri/...
// with README.md's go.mod lines builds, passes nri-depcheck, and hands over
// from v1 to v2 against this module's runtime.
func TestPluginModuleHandover(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a module")
	}
	root := repoRoot(t)
	dir := newModule(t, "example.com/myplugin", readmeGoMod(t, root), "plugin")
	mustGo(t, dir, "mod", "tidy")
	mustGo(t, dir, "build", "-o", "myplugin", ".")
	if out := mustGo(t, dir, "run", "github.com/nri-handover/nri/cmd/nri-depcheck", "./..."); !strings.Contains(out, "ok") {
		t.Errorf("nri-depcheck: %q", out)
	}
	// README.md's "Try a handover before deploying": the author's own test.
	mustGo(t, dir, "test", "-count=1", "./...")
	// deploy/README.md's image recipe: vendored, the module builds alone.
	mustGo(t, dir, "mod", "vendor")
	mustGo(t, dir, "build", "-mod=vendor", "-o", "myplugin", ".")
	bin := filepath.Join(dir, "myplugin")

	rt, err := testruntime.New()
	if err != nil {
		t.Fatal(err)
	}
	if err := rt.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(rt.Stop)
	ctx := context.Background()
	if err := rt.RunPod(ctx, testruntime.NewPod("pod0")); err != nil {
		t.Fatal(err)
	}
	handledBy := func(id string) string {
		t.Helper()
		adj, err := rt.CreateContainer(ctx, testruntime.NewContainer("pod0", id))
		if err != nil {
			t.Fatalf("creating %s: %v", id, err)
		}
		return adj.GetAnnotations()["handled-by"]
	}

	// As deploy/daemonset.yaml runs it: the stub answers the readinessProbe
	// on $NRI_PLUGIN_READYZ_ADDR, with no code in the plugin for it.
	readyz := freeAddr(t)
	v1 := start(t, []string{"NRI_PLUGIN_READYZ_ADDR=" + readyz}, bin, "-socket", rt.SocketPath(), "-version", "v1", "-instance", "pod-a", "-generation", "1")
	v1.await(t, "role PLUGIN_ROLE_ACTIVE")
	awaitReadyz(t, readyz, "ok: active") // the stub turns ready right after the plugin's RoleChange returned
	if got := handledBy("c1"); got != "v1" {
		t.Fatalf("c1 handled by %q, want v1", got)
	}

	v2 := start(t, nil, bin, "-socket", rt.SocketPath(), "-version", "v2", "-instance", "pod-b", "-generation", "2")
	v1.await(t, "shutdown SHUTDOWN_REASON_SUPERSEDED")
	v2.await(t, "role PLUGIN_ROLE_ACTIVE")
	if got := handledBy("c2"); got != "v2" {
		t.Fatalf("c2 handled by %q after the handover, want v2", got)
	}

	v1.stop(t)
	v1.await(t, "exit: superseded by v2")
	v2.stop(t)
	v2.await(t, "exit")
}

// TestMixedAPIsFailClearly: this module's pkg/stub next to upstream's
// pkg/api builds, then stops at start with what to do (not protobuf's
// registration panic), and nri-depcheck says the same before it runs.
func TestMixedAPIsFailClearly(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a module")
	}
	root := repoRoot(t)
	lines := "require github.com/containerd/nri v0.12.5\n\nreplace github.com/nri-handover/nri => " + root + "\n"
	dir := newModule(t, "example.com/mixed", lines, "mixed")
	mustGo(t, dir, "mod", "tidy")
	mustGo(t, dir, "build", "-o", "mixed", ".")

	cmd := exec.Command(filepath.Join(dir, "mixed"))
	var stderr strings.Builder
	cmd.Stderr = &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 2 {
		t.Errorf("the mixed binary: %v, want exit code 2", err)
	}
	msg := stderr.String()
	for _, want := range []string{"links two NRI APIs", "replace github.com/containerd/nri => /path/to/nri-handover/containerd-nri", "nri-depcheck"} {
		if !strings.Contains(msg, want) {
			t.Errorf("the mixed binary's message does not say %q:\n%s", want, msg)
		}
	}
	for _, not := range []string{"panic", "name conflict"} {
		if strings.Contains(msg, not) {
			t.Errorf("the mixed binary's message has %q:\n%s", not, msg)
		}
	}

	out, errOut, err := goIn(dir, "run", "github.com/nri-handover/nri/cmd/nri-depcheck", "./...")
	if !errors.As(err, &exit) || exit.ExitCode() != 1 {
		t.Fatalf("nri-depcheck on the mixed module: %v, want exit code 1\n%s%s", err, out, errOut)
	}
	for _, want := range []string{"imported by: example.com/mixed", "example.com/mixed (github.com/nri-handover/nri/pkg/stub)", "replace github.com/containerd/nri =>"} {
		if !strings.Contains(errOut, want) {
			t.Errorf("nri-depcheck does not say %q:\n%s", want, errOut)
		}
	}
}

// proc is a plugin process whose stdout lines the test waits for.
type proc struct {
	cmd   *exec.Cmd
	lines chan string
	done  chan struct{}
	mu    sync.Mutex
	seen  []string
}

// freeAddr is a loopback address with a port nothing listens on.
func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// awaitReadyz asks a plugin's /readyz, as a readinessProbe does, until it
// answers 200 with a body saying want.
func awaitReadyz(t *testing.T, addr, want string) {
	t.Helper()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	timeout := time.After(waitTimeout)
	var last string
	for {
		rsp, err := http.Get("http://" + addr + "/readyz")
		if err == nil {
			body, _ := io.ReadAll(rsp.Body)
			rsp.Body.Close()
			last = fmt.Sprintf("%d %q", rsp.StatusCode, body)
			if rsp.StatusCode == http.StatusOK && strings.Contains(string(body), want) {
				return
			}
		} else {
			last = err.Error()
		}
		select {
		case <-tick.C:
		case <-timeout:
			t.Fatalf("/readyz on %s: %s, want 200 saying %q", addr, last, want)
		}
	}
}

// start runs a plugin binary with env added to this process's environment.
func start(t *testing.T, env []string, bin string, args ...string) *proc {
	t.Helper()
	p := &proc{cmd: exec.Command(bin, args...), lines: make(chan string, 64), done: make(chan struct{})}
	p.cmd.Env = append(os.Environ(), env...)
	out, err := p.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	p.cmd.Stderr = &testWriter{t: t, prefix: args[3] + ": "}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		defer close(p.lines)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			p.lines <- sc.Text()
		}
	}()
	go func() { _ = p.cmd.Wait(); close(p.done) }()
	t.Cleanup(func() {
		_ = p.cmd.Process.Kill()
		<-p.done
	})
	return p
}

// await waits for a line equal to want among those not yet consumed.
func (p *proc) await(t *testing.T, want string) {
	t.Helper()
	timeout := time.NewTimer(waitTimeout)
	defer timeout.Stop()
	for {
		select {
		case l, ok := <-p.lines:
			if !ok {
				t.Fatalf("%s exited before saying %q; it said %q", p.cmd.Args[0], want, p.seen)
			}
			p.mu.Lock()
			p.seen = append(p.seen, l)
			p.mu.Unlock()
			if l == want {
				return
			}
		case <-timeout.C:
			t.Fatalf("%s did not say %q; it said %q", p.cmd.Args[0], want, p.seen)
		}
	}
}

func (p *proc) stop(t *testing.T) {
	t.Helper()
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
}

// testWriter passes a plugin's log to the test's log.
type testWriter struct {
	t      *testing.T
	prefix string
}

func (w *testWriter) Write(b []byte) (int, error) {
	w.t.Log(w.prefix + strings.TrimRight(string(b), "\n"))
	return len(b), nil
}
