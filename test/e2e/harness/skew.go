package harness

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
)

// SkewVersions are the upstream NRI releases the runtimes in the field
// embed, the version-skew matrix runs against (which runtime ships which:
// docs/runtime-integration.md, "Which NRI each runtime ships"): v0.8.0
// (containerd v1.7.27 and later, v2.0, v2.1), v0.9.0 (the release before
// CRI-O v1.34.0's pseudo-version), v0.10.0, v0.11.0 (containerd v2.2),
// v0.12.3 (containerd v2.4, moby v2). The newest, the one go.mod pins, is
// built by Build from this module; the others by BuildSkew.
var SkewVersions = []string{"v0.8.0", "v0.9.0", "v0.10.0", "v0.11.0", "v0.12.3"}

// SkewPeer is test/upstream/plugin and test/upstream/runtime built against
// one upstream release.
type SkewPeer struct {
	Version string `json:"version"`
	Plugin  string `json:"plugin"`
	Runtime string `json:"runtime"`
}

// BuildSkew builds the upstream peers against each of versions, in modules
// of their own under dir: the same sources as for v0.12.5 (they use only
// API every release since v0.8.0 has), with the dependency-free record
// package copied in, so that nothing of this module, and not its pin of
// upstream NRI, enters their module graph. It needs the module proxy (or a
// module cache that has the versions).
func BuildSkew(ctx context.Context, dir string, versions []string) ([]SkewPeer, error) {
	return buildSkew(ctx, dir, versions, "./plugin", "./runtime")
}

// BuildSkewPlugins builds only the upstream plugin against each of versions
// (Runtime is left empty), for suites that run it against our runtime.
func BuildSkewPlugins(ctx context.Context, dir string, versions []string) ([]SkewPeer, error) {
	return buildSkew(ctx, dir, versions, "./plugin")
}

// buildSkew builds pkgs of the skew module (./plugin, ./runtime) against
// each of versions.
func buildSkew(ctx context.Context, dir string, versions []string, pkgs ...string) ([]SkewPeer, error) {
	root, err := moduleRoot(ctx)
	if err != nil {
		return nil, err
	}
	var peers []SkewPeer
	for _, v := range versions {
		mod := filepath.Join(dir, "skew-"+v)
		if err := writeSkewModule(root, mod, v); err != nil {
			return nil, fmt.Errorf("skew %s: %w", v, err)
		}
		for _, args := range [][]string{
			{"mod", "tidy"},
			append([]string{"build", "-o", filepath.Join(mod, "bin") + string(filepath.Separator)}, pkgs...),
		} {
			cmd := exec.CommandContext(ctx, "go", args...)
			cmd.Dir = mod
			cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod")
			if out, err := cmd.CombinedOutput(); err != nil {
				return nil, fmt.Errorf("skew %s: go %s: %w\n%s", v, strings.Join(args, " "), err, out)
			}
		}
		// The binary must link the release asked for, not one the module
		// graph selected instead.
		plugin := filepath.Join(mod, "bin", "plugin")
		out, err := exec.CommandContext(ctx, "go", "version", "-m", plugin).Output()
		if err != nil {
			return nil, fmt.Errorf("skew %s: go version -m: %w", v, err)
		}
		if !strings.Contains(string(out), "\tgithub.com/containerd/nri\t"+v+"\t") {
			return nil, fmt.Errorf("skew %s: the plugin does not link github.com/containerd/nri %s:\n%s", v, v, out)
		}
		peer := SkewPeer{Version: v, Plugin: plugin}
		if slices.Contains(pkgs, "./runtime") {
			peer.Runtime = filepath.Join(mod, "bin", "runtime")
		}
		peers = append(peers, peer)
	}
	return peers, nil
}

// writeSkewModule lays out module skewpeer requiring upstream NRI at v.
func writeSkewModule(root, mod, v string) error {
	const recordPkg = "github.com/nri-handover/nri/test/plugins/record"
	files := map[string]string{ // destination -> source, relative
		"plugin/main.go":   "test/upstream/plugin/main.go",
		"runtime/main.go":  "test/upstream/runtime/main.go",
		"record/record.go": "test/plugins/record/record.go",
	}
	for dst, src := range files {
		buf, err := os.ReadFile(filepath.Join(root, src))
		if err != nil {
			return err
		}
		out := strings.ReplaceAll(string(buf), recordPkg, "skewpeer/record")
		if err := os.MkdirAll(filepath.Dir(filepath.Join(mod, dst)), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(mod, dst), []byte(out), 0o644); err != nil {
			return err
		}
	}
	gomod := fmt.Sprintf("module skewpeer\n\ngo 1.24.0\n\nrequire github.com/containerd/nri %s\n", v)
	return os.WriteFile(filepath.Join(mod, "go.mod"), []byte(gomod), 0o644)
}

// UpstreamAt returns a copy of b whose upstream runtime and plugin
// are the skew peer's (the StartUpstreamRuntime helpers then start that one).
func (b *Binaries) UpstreamAt(p SkewPeer) *Binaries {
	c := *b
	c.UpstreamPlugin, c.UpstreamRuntime = p.Plugin, p.Runtime
	return &c
}
