package version

import (
	"slices"
	"testing"
)

func TestCompare(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want int
	}{
		{"v0.12.5", "v0.12.5", 0},
		{"v0.12.5", "v0.12.10", -1},
		{"v2", "v2.0.0", 0},
		{"v2.1", "v2.0.9", 1},
		{"v1.0.0-rc.1", "v1.0.0", -1},
		{"v1.0.0+meta", "v1.0.0", 0},
		{"v1.0.0-rc.1+x.y", "v1.0.0-rc.1", 0},
		{"v1.0.0-rc.9", "v1.0.0-rc.11", -1},
		{"v1.0.0-rc", "v1.0.0-rc.0", -1},
		{"v1.0.0-7", "v1.0.0-seven", -1},
		{"v1.0.0-b", "v1.0.0-a.z", 1},
		{"v123456789012345678901234567890.0.0", "v9.9.9", 1},
		// Invalid versions order first and equal each other.
		{"0.1.0", "v0.0.0", -1},
		{"v0.0.0", "junk", 1},
		{"junk", "v1.0-rc", 0},
		{"v01.0.0", "v1.0.0", -1},
		{"v1.0.0-01", "v1.0.0-1", -1},
		{"v1.0.0-", "v1.0.0", -1},
		{"v1.0.0-a..b", "v1.0.0-a", -1},
		{"v1.0.0+", "v1.0.0", -1},
		{"v1.0.0+a+b", "v1.0.0", -1},
		{"v1.0.0-ü", "v1.0.0", -1},
		{"v1.2.3.4", "v0", -1},
		{"v1+meta", "v0", -1},
		{"v1.", "v0", -1},
	} {
		if got := compare(c.a, c.b); got != c.want {
			t.Errorf("compare(%q, %q) = %d, want %d", c.a, c.b, got, c.want)
		}
		if got := compare(c.b, c.a); got != -c.want {
			t.Errorf("compare(%q, %q) = %d, want %d", c.b, c.a, got, -c.want)
		}
	}
}

func TestStripGitSuffix(t *testing.T) {
	for v, want := range map[string]string{
		"":                             "",
		"v0.12.5":                      "v0.12.5",
		"v0.12":                        "v0.12",
		"v0.12.5-rc.1":                 "v0.12.5-rc.1",
		"v0.12.5-3-gdeadbeef":          "v0.12.5",
		"v0.12.5-3-gdeadbeef.m":        "v0.12.5",
		"v0.12.5-3-g":                  "v0.12.5-3-g",
		"v0.12.5-3-gxyz":               "v0.12.5-3-gxyz",
		"v0.12.5-x-gabc":               "v0.12.5-x-gabc",
		"v0.12.5-3":                    "v0.12.5-3",
		"v0.12.5-3-gabc+build":         "v0.12.5-3-gabc+build",         // not canonical
		"v0.12.5-3-g123456789abcdef01": "v0.12.5-3-g123456789abcdef01", // more than 64 bits
	} {
		if got := stripGitSuffix(v); got != want {
			t.Errorf("stripGitSuffix(%q) = %q, want %q", v, got, want)
		}
	}
}

func TestFindClosestMatch(t *testing.T) {
	known := []string{"v2.1", "v0.3.0", "v1", "v1.7.14", "v0.10.0", "v2.0.0-rc.1", "v1.7.2"}
	for _, c := range []struct {
		v, want string
		among   []string
	}{
		{"v1.7.2", "v1.7.2", known},
		{"v1.7.13", "v1.7.2", known},
		{"v1.7.20", "v1.7.14", known},
		{"v1.0.5", "v1", known},
		{"v2.0.0", "v2.0.0-rc.1", known},
		{"v2.0.0-beta", "v1.7.14", known},
		{"v3", "v2.1", known},
		{"v0.1.0", "", known},
		{"v1.7.14-12-g0abc123", "v1.7.14", known}, // a build after v1.7.14
		{"v1.7.15-rc.0", "v1.7.14", known},
		{"v1.0.0", "", nil},
		// An invalid candidate sorts first, so it matches when no valid one does.
		{"v0.0.1", "junk", []string{"v1", "junk"}},
	} {
		among := slices.Clone(c.among)
		if got := FindClosestMatch(c.v, among); got != c.want {
			t.Errorf("FindClosestMatch(%q, %v) = %q, want %q", c.v, c.among, got, c.want)
		}
	}
}

func TestFindClosestMatchSortsInPlace(t *testing.T) {
	vs := []string{"v3", "v1", "v2"}
	FindClosestMatch("v2", vs)
	if !slices.Equal(vs, []string{"v1", "v2", "v3"}) {
		t.Fatalf("candidates after FindClosestMatch: %v, want them sorted as upstream leaves them", vs)
	}
}

func TestGetFromBuildInfoInATest(t *testing.T) {
	// A test binary of this module depends on no github.com/containerd/nri.
	if got := GetFromBuildInfo(); got != UnknownVersion {
		t.Fatalf("GetFromBuildInfo() = %q, want %q", got, UnknownVersion)
	}
}
