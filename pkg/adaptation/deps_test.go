package adaptation

import (
	"os/exec"
	"strings"
	"testing"
)

// Linking upstream's API registrations next to ours panics at init (same
// protobuf names), and inside a Go workspace that stands our module in for
// github.com/containerd/nri every upstream import path resolves to the
// stand-in, which is built on this package: so no upstream package at all.
func TestNoUpstreamAPIDependency(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go tool not available")
	}
	out, err := exec.Command(goTool, "list", "-deps", ".", "./builtin").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	for _, pkg := range strings.Fields(string(out)) {
		if pkg == "github.com/containerd/nri" || strings.HasPrefix(pkg, "github.com/containerd/nri/") {
			t.Errorf("pkg/adaptation links upstream package %s", pkg)
		}
	}
}
