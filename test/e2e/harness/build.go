package harness

import (
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
)

// Binaries are the executables the suites run.
type Binaries struct {
	// Plugin is test/plugins/nriplugin, on our pkg/stub.
	Plugin string `json:"plugin"`
	// UpstreamPlugin is test/upstream/plugin, on upstream v0.12.5's stub.
	UpstreamPlugin string `json:"upstreamPlugin"`
	// UpstreamRuntime is test/upstream/runtime, on upstream's adaptation.
	UpstreamRuntime string `json:"upstreamRuntime"`
	// Skew are the upstream peers built against older releases (BuildSkew).
	Skew []SkewPeer `json:"skew,omitempty"`
}

// targets maps each binary to its package, relative to the module root.
var targets = []struct {
	pkg string
	set func(*Binaries, string)
}{
	{"./test/plugins/nriplugin", func(b *Binaries, p string) { b.Plugin = p }},
	{"./test/upstream/plugin", func(b *Binaries, p string) { b.UpstreamPlugin = p }},
	{"./test/upstream/runtime", func(b *Binaries, p string) { b.UpstreamRuntime = p }},
}

// Build compiles every binary into dir with one go build invocation.
func Build(ctx context.Context, dir string) (*Binaries, error) {
	root, err := moduleRoot(ctx)
	if err != nil {
		return nil, err
	}
	args := []string{"build", "-o", dir + string(filepath.Separator)}
	for _, t := range targets {
		args = append(args, t.pkg)
	}
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("go %s: %w\n%s", strings.Join(args, " "), err, out)
	}
	b := &Binaries{}
	for _, t := range targets {
		t.set(b, filepath.Join(dir, filepath.Base(t.pkg)))
	}
	return b, nil
}

func moduleRoot(ctx context.Context) (string, error) {
	out, err := exec.CommandContext(ctx, "go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOMOD: %w", err)
	}
	mod := strings.TrimSpace(string(out))
	if mod == "" || mod == "/dev/null" {
		return "", fmt.Errorf("not inside a module")
	}
	return filepath.Dir(mod), nil
}

// Marshal encodes b for SynchronizedBeforeSuite.
func (b *Binaries) Marshal() []byte {
	buf, _ := json.Marshal(b)
	return buf
}

// UnmarshalBinaries decodes what Marshal produced.
func UnmarshalBinaries(buf []byte) (*Binaries, error) {
	b := &Binaries{}
	if err := json.Unmarshal(buf, b); err != nil {
		return nil, fmt.Errorf("decode binaries: %w", err)
	}
	return b, nil
}
