package api

import (
	"strings"
	"testing"

	"golang.org/x/mod/semver"
)

func TestInferVersionFromRuntime(t *testing.T) {
	for _, tc := range []struct {
		runtime, version string
		want             string
		errPart          string
	}{
		{runtime: "containerd", version: "v1.7.0", want: "v0.3.0"},
		{runtime: "containerd", version: "v1.7.6", want: "v0.3.0"},
		{runtime: "containerd", version: "v1.7.7", want: "v0.4.0"},
		{runtime: "containerd", version: "v1.7.15", want: "v0.6.0"},
		{runtime: "containerd", version: "v1.7.30", want: "v0.8.0"},
		{runtime: "containerd", version: "v2.0.0", want: "v0.8.0"},
		{runtime: "containerd", version: "v2.1.6", want: "v0.8.0"},
		{runtime: "containerd", version: "v2.2.0", want: "v0.10.0"},
		{runtime: "containerd", version: "v2.2.1", want: "v0.11.0"},
		{runtime: "containerd", version: "v3.0.0", want: "v0.11.0"},
		{runtime: "containerd", version: "v2.2.0-rc.1", want: "v0.8.0"},
		{runtime: "containerd", version: "v2.2.0-225-ge9dc15b7a.m", want: "v0.10.0"},
		{runtime: "containerd", version: "v2.2.1-3-gabc123", want: "v0.11.0"},
		{runtime: "cri-o", version: "v1.26.1", want: "v0.2.0"},
		{runtime: "cri-o", version: "v1.26.4", want: "v0.3.1-0.20230504231226-94185418e253"},
		{runtime: "cri-o", version: "v1.27.0", want: "v0.3.0"},
		{runtime: "cri-o", version: "v1.28.11", want: "v0.3.1-0.20230504231226-94185418e253"},
		{runtime: "cri-o", version: "v1.33.8", want: "v0.9.1-0.20250219030224-e597e7849f24"},
		{runtime: "cri-o", version: "v1.35.0", want: "v0.11.0"},
		{runtime: "containerd", version: "v1.6.20", errPart: "v1.6.20"},
		{runtime: "containerd", version: "1.7.0", errPart: `"1.7.0"`},
		{runtime: "containerd", version: "", errPart: `""`},
		{runtime: "podman", version: "v5.0.0", errPart: `"podman"`},
	} {
		got, err := InferVersionFromRuntime(tc.runtime, tc.version)
		if tc.errPart != "" {
			if err == nil || !strings.Contains(err.Error(), tc.errPart) || got != UnknownVersion {
				t.Errorf("%s %s: got %q, %v; want UnknownVersion and an error containing %s", tc.runtime, tc.version, got, err, tc.errPart)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%s %s: got %q, %v; want %q", tc.runtime, tc.version, got, err, tc.want)
		}
	}
}

func TestStripGitDescribe(t *testing.T) {
	for in, want := range map[string]string{
		"v2.2.0":                   "v2.2.0",
		"v2.2.0-rc.1":              "v2.2.0-rc.1",
		"v2.2.0-225-ge9dc15b7a":    "v2.2.0",
		"v2.2.0-225-ge9dc15b7a.m":  "v2.2.0",
		"v2.2.0-1-gdeadbeef.dirty": "v2.2.0",
		"v2.2.0-1-gdeadbeef-dirty": "v2.2.0-1-gdeadbeef-dirty",
		"v1.0.0-beta-gx":           "v1.0.0-beta-gx",
	} {
		if got := stripGitDescribe(in); got != want {
			t.Errorf("stripGitDescribe(%q) = %q, want %q", in, got, want)
		}
	}
}

// The table must stay sorted, or the lookup silently picks wrong entries.
func TestNRISinceSorted(t *testing.T) {
	for rt, table := range nriSince {
		for i := 1; i < len(table); i++ {
			if semver.Compare(table[i-1].runtime, table[i].runtime) >= 0 {
				t.Errorf("%s: %s listed before %s", rt, table[i-1].runtime, table[i].runtime)
			}
		}
	}
}
