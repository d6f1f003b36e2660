package thirdparty

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// Upstream is the NRI release this module keeps the API of (go.mod's pin).
const upstreamModule = "github.com/containerd/nri"

// genprotoPin: without it the third-party module graphs, merged with ours,
// hit "ambiguous import ... googleapis/rpc/status" (../shared/third_party's
// README).
const genprotoPin = "google.golang.org/genproto=google.golang.org/genproto@v0.0.0-20241021214115-324edc3d5d38"

// env is what the harness found: the repository root, the third-party tree
// and upstream's module directories.
type env struct {
	root       string // this repository
	thirdParty string // ../shared/third_party
	upstream   string // the module cache's github.com/containerd/nri@v0.12.5
	work       string // a go.work of this module and the stand-in
	dir        string // where binaries and module files go
}

var (
	envOnce sync.Once
	theEnv  *env
	envErr  error
	envSkip string
)

func TestMain(m *testing.M) {
	code := m.Run()
	if theEnv != nil {
		os.RemoveAll(theEnv.dir)
	}
	os.Exit(code)
}

// setup finds everything once per test binary; tests skip with its
// message when the third-party tree is absent.
func setup(t *testing.T) *env {
	t.Helper()
	envOnce.Do(func() { theEnv, envSkip, envErr = findEnv() })
	if envErr != nil {
		t.Fatal(envErr)
	}
	if envSkip != "" {
		t.Skip(envSkip)
	}
	return theEnv
}

func findEnv() (*env, string, error) {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return nil, "", fmt.Errorf("go env GOMOD: %w", err)
	}
	e := &env{root: filepath.Dir(strings.TrimSpace(string(out)))}
	// ../shared/third_party from the repository root; from a git worktree
	// elsewhere, from the main checkout's root; NRI_THIRD_PARTY overrides.
	candidates := []string{filepath.Join(e.root, "..", "shared", "third_party")}
	if common, err := goOutCmd(e.root, "git", "rev-parse", "--path-format=absolute", "--git-common-dir"); err == nil {
		candidates = append(candidates, filepath.Join(filepath.Dir(common), "..", "shared", "third_party"))
	}
	if env := os.Getenv("NRI_THIRD_PARTY"); env != "" {
		candidates = []string{env}
	}
	for _, c := range candidates {
		if _, err := os.Stat(filepath.Join(c, "containerd-nri-plugins", "plugins")); err == nil {
			e.thirdParty = filepath.Clean(c)
			break
		}
	}
	if e.thirdParty == "" {
		return nil, fmt.Sprintf("no third-party tree (../shared/third_party from the repository root, or NRI_THIRD_PARTY) at %v", candidates), nil
	}
	if e.upstream, err = goOut(e.root, nil, "list", "-m", "-f", "{{.Dir}}", upstreamModule); err != nil || e.upstream == "" {
		if _, err := goOut(e.root, nil, "mod", "download", upstreamModule); err != nil {
			return nil, "", err
		}
		if e.upstream, err = goOut(e.root, nil, "list", "-m", "-f", "{{.Dir}}", upstreamModule); err != nil {
			return nil, "", err
		}
	}
	// One directory per test binary run; Go's build cache makes the
	// builds in it quick once warm.
	if e.dir, err = os.MkdirTemp("", "nri-thirdparty-"); err != nil {
		return nil, "", err
	}
	e.work = filepath.Join(e.dir, "go.work")
	work := fmt.Sprintf("go 1.24.0\n\nuse (\n\t%s\n\t%s\n)\n", e.root, filepath.Join(e.root, "containerd-nri"))
	if err := os.WriteFile(e.work, []byte(work), 0o644); err != nil {
		return nil, "", err
	}
	return e, "", nil
}

func goOutCmd(dir, name string, args ...string) (string, error) {
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(out)), nil
}

func goOut(dir string, extraEnv []string, args ...string) (string, error) {
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), extraEnv...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("(cd %s && go %s): %w\n%s", dir, strings.Join(args, " "), err, stderr.String())
	}
	return strings.TrimSpace(string(out)), nil
}

// Side is which NRI a binary links.
type Side string

const (
	Upstream Side = "upstream"
	Ours     Side = "ours"
)

// modfile writes a copy of the module's go.mod (and go.sum) with
// github.com/containerd/nri replaced: by nriDir (the module cache's upstream
// release) for Upstream, or not at all when nriDir is empty (the module's own
// requirement); by the stand-in for Ours. extra ("old[@v]=new[@v]", as go mod
// edit -replace takes them) are added to both. The module's own files stay
// untouched: builds use the copy through go -modfile.
func (e *env) modfile(t *testing.T, name, modDir string, side Side, nriDir string, extra []string) string {
	t.Helper()
	buf, err := os.ReadFile(filepath.Join(modDir, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	mod := filepath.Join(e.dir, "mod", string(side)+"-"+name+".mod")
	if err := os.MkdirAll(filepath.Dir(mod), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(mod, buf, 0o644); err != nil {
		t.Fatal(err)
	}
	sum, err := os.ReadFile(filepath.Join(modDir, "go.sum"))
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	if err := os.WriteFile(strings.TrimSuffix(mod, ".mod")+".sum", sum, 0o644); err != nil {
		t.Fatal(err)
	}
	// The module's own replace of NRI (the sample plugins' ../..) goes.
	args := []string{"mod", "edit", "-dropreplace=" + upstreamModule}
	for _, r := range extra {
		args = append(args, "-replace="+r)
	}
	switch side {
	case Upstream:
		if nriDir != "" {
			args = append(args, "-replace="+upstreamModule+"="+nriDir)
		}
	case Ours:
		args = append(args,
			"-replace="+upstreamModule+"="+filepath.Join(e.root, "containerd-nri"),
			"-replace=github.com/nri-handover/nri="+e.root,
			"-replace="+genprotoPin)
	}
	if _, err := goOut(e.dir, []string{"GOWORK=off"}, append(args, mod)...); err != nil {
		t.Fatal(err)
	}
	return mod
}

// buildSem keeps builds to two at a time (CI's two cores).
var buildSem = make(chan struct{}, 2)

// build runs go build in dir with modfile (outside any workspace) and
// checks that the binary links the NRI it should: wantNRI is a substring of
// its github.com/containerd/nri dependency lines (go version -m).
func build(ctx context.Context, dir, modfile, out, pkg, wantNRI string) error {
	buildSem <- struct{}{}
	defer func() { <-buildSem }()
	cmd := exec.CommandContext(ctx, "go", "build", "-modfile="+modfile, "-o", out, pkg)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod")
	if o, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("(cd %s && go build -modfile=%s %s): %w\n%s", dir, modfile, pkg, err, o)
	}
	return checkLinks(ctx, out, wantNRI)
}

func checkLinks(ctx context.Context, bin, want string) error {
	o, err := exec.CommandContext(ctx, "go", "version", "-m", bin).Output()
	if err != nil {
		return fmt.Errorf("go version -m %s: %w", bin, err)
	}
	var nri []string
	lines := strings.Split(string(o), "\n")
	for i, l := range lines {
		if f := strings.Fields(l); len(f) >= 2 && f[0] == "dep" && f[1] == upstreamModule {
			nri = append(nri, l)
			if i+1 < len(lines) && strings.HasPrefix(strings.TrimSpace(lines[i+1]), "=>") {
				nri = append(nri, lines[i+1])
			}
		}
	}
	if !strings.Contains(strings.Join(nri, "\n"), want) {
		return fmt.Errorf("%s does not link %s as expected (%q):\n%s", bin, upstreamModule, want, o)
	}
	return nil
}

// runtimes builds test/thirdparty/runtime twice: in this module (upstream
// v0.12.5, go.mod's pin) and in a workspace with the stand-in (ours).
func (e *env) runtimes(ctx context.Context) (map[Side]string, error) {
	rt := map[Side]string{
		Upstream: filepath.Join(e.dir, "bin", "runtime-upstream"),
		Ours:     filepath.Join(e.dir, "bin", "runtime-ours"),
	}
	for side, work := range map[Side]string{Upstream: "off", Ours: e.work} {
		cmd := exec.CommandContext(ctx, "go", "build", "-o", rt[side], "./test/thirdparty/runtime")
		cmd.Dir = e.root
		cmd.Env = append(os.Environ(), "GOWORK="+work)
		if o, err := cmd.CombinedOutput(); err != nil {
			return nil, fmt.Errorf("build runtime (%s): %w\n%s", side, err, o)
		}
	}
	if err := checkLinks(ctx, rt[Upstream], "v0.12.5"); err != nil {
		return nil, err
	}
	if err := checkLinks(ctx, rt[Ours], "(devel)"); err != nil {
		return nil, err
	}
	return rt, nil
}
