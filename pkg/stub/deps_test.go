package stub

import (
	"os/exec"
	"strings"
	"testing"
)

// Linking upstream's API registrations next to ours panics at start-up
// (duplicate protobuf names), so the stub may use upstream's transport
// packages only.
func TestNoUpstreamAPIInDependencies(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go tool not in PATH")
	}
	out, err := exec.Command(goTool, "list", "-deps", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	allowed := map[string]bool{
		"github.com/containerd/nri/pkg/net":           true,
		"github.com/containerd/nri/pkg/net/multiplex": true,
	}
	for _, pkg := range strings.Fields(string(out)) {
		if strings.HasPrefix(pkg, "github.com/containerd/nri/") && !allowed[pkg] {
			t.Errorf("pkg/stub links upstream package %s", pkg)
		}
	}
}
