package api

import (
	"os"
	"testing"

	"golang.org/x/mod/modfile"
	"golang.org/x/mod/semver"
)

// UpstreamVersion names the release our wire gate and compatibility tests
// check against: the version of github.com/containerd/nri that go.mod pins.
func TestUpstreamVersionIsThePinnedSpecification(t *testing.T) {
	data, err := os.ReadFile("../go.mod")
	if err != nil {
		t.Fatal(err)
	}
	mf, err := modfile.ParseLax("go.mod", data, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range mf.Require {
		if r.Mod.Path == "github.com/containerd/nri" {
			if r.Mod.Version != UpstreamVersion {
				t.Fatalf("go.mod pins upstream %s, UpstreamVersion is %s", r.Mod.Version, UpstreamVersion)
			}
			return
		}
	}
	t.Fatal("go.mod does not require github.com/containerd/nri")
}

func TestUpstreamVersionIsARelease(t *testing.T) {
	if !semver.IsValid(UpstreamVersion) || semver.Prerelease(UpstreamVersion) != "" || semver.Build(UpstreamVersion) != "" {
		t.Fatalf("UpstreamVersion %q is not a plain release", UpstreamVersion)
	}
}
