package thirdparty

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestSamplePluginUnitTests runs the sample plugins' own unit tests,
// unchanged, built on this module through the stand-in.
func TestSamplePluginUnitTests(t *testing.T) {
	e := setup(t)
	for _, c := range e.samplePlugins(t) {
		t.Run(c.name, func(t *testing.T) {
			tests, _ := filepath.Glob(filepath.Join(c.module, "*_test.go"))
			if len(tests) == 0 {
				t.Skip("it has no tests")
			}
			if c.skip != "" {
				t.Skip(c.skip)
			}
			mod := e.modfile(t, "unit-"+c.name, c.module, Ours, "", nil)
			buildSem <- struct{}{}
			defer func() { <-buildSem }()
			cmd := exec.Command("go", "test", "-modfile="+mod, "./...")
			cmd.Dir = c.module
			cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod")
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("go test in %s: %v\n%s", c.module, err, out)
			}
			t.Logf("%s", out)
		})
	}
}
