package adaptation

import (
	"os/exec"
	"strings"
	"testing"
)

// Linking upstream's API registrations next to ours panics at init (same
// protobuf names), so only upstream's transport packages may be imported.
func TestNoUpstreamAPIDependency(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go tool not available")
	}
	out, err := exec.Command(goTool, "list", "-deps", ".", "./builtin").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	allowed := map[string]bool{
		"github.com/containerd/nri/pkg/net":           true,
		"github.com/containerd/nri/pkg/net/multiplex": true,
	}
	for _, pkg := range strings.Fields(string(out)) {
		if strings.HasPrefix(pkg, "github.com/containerd/nri/") && !allowed[pkg] {
			t.Errorf("pkg/adaptation links upstream package %s", pkg)
		}
	}
}
