package api

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"golang.org/x/mod/semver"
)

const (
	// UnknownVersion is reported when a version cannot be determined.
	UnknownVersion = "0.0.0-unknown"
	// DevelVersion is what Go build info reports for a module built from its
	// own source tree rather than as a dependency.
	DevelVersion = "(devel)"
	// UpstreamVersion is the containerd/nri release whose API and protocol
	// this module implements. Runtime and stub report it as NRI_version:
	// upstream peers take that field for an upstream release number and gate
	// features on it, so it must be in upstream's version space, not this
	// module's own version.
	UpstreamVersion = "v0.12.5"
)

// nriSince records, per runtime, the first release that shipped a given NRI
// version; every later release up to the next entry uses the same one. Plugins
// use this to guess the runtime's NRI version when an old runtime does not
// report it at registration. Keep each list sorted by runtime release.
var nriSince = map[string][]struct{ runtime, nri string }{
	"containerd": {
		{"v1.7.0", "v0.3.0"},
		{"v1.7.7", "v0.4.0"},
		{"v1.7.14", "v0.6.0"},
		{"v1.7.16", "v0.6.1"},
		{"v1.7.26", "v0.8.0"},
		{"v2.2.0", "v0.10.0"},
		{"v2.2.1", "v0.11.0"},
	},
	"cri-o": {
		{"v1.26.0", "v0.2.0"},
		{"v1.26.2", "v0.3.0"},
		{"v1.26.4", "v0.3.1-0.20230504231226-94185418e253"},
		{"v1.27.0", "v0.3.0"},
		{"v1.27.1", "v0.3.1-0.20230504231226-94185418e253"},
		{"v1.29.0", "v0.5.0"},
		{"v1.29.2", "v0.6.0"},
		{"v1.31.0", "v0.6.1"},
		{"v1.32.0", "v0.9.0"},
		{"v1.33.0", "v0.9.1-0.20250219030224-e597e7849f24"},
		{"v1.34.0", "v0.10.0"},
		{"v1.35.0", "v0.11.0"},
	},
}

// InferVersionFromRuntime guesses the NRI version built into release
// runtimeVersion of runtime ("containerd" or "cri-o"): the NRI version of the
// newest known release not newer than runtimeVersion. A git-describe suffix
// ("-N-gHASH", as in development builds) is ignored, since semver would
// otherwise order such a build before the release it is based on.
func InferVersionFromRuntime(runtime, runtimeVersion string) (string, error) {
	table, ok := nriSince[runtime]
	if !ok {
		return UnknownVersion, fmt.Errorf("can't infer NRI version for unknown runtime %q", runtime)
	}
	v := stripGitDescribe(runtimeVersion)
	if !semver.IsValid(v) {
		return UnknownVersion, fmt.Errorf("can't infer NRI version for %s: invalid version %q", runtime, runtimeVersion)
	}
	i := slices.IndexFunc(table, func(e struct{ runtime, nri string }) bool {
		return semver.Compare(e.runtime, v) > 0
	})
	switch i {
	case 0:
		return UnknownVersion, fmt.Errorf("can't infer NRI version for %s %q: older than any known release", runtime, runtimeVersion)
	case -1:
		i = len(table)
	}
	return table[i-1].nri, nil
}

// gitDescribe matches the suffix git describe appends, -<commits>-g<hash>,
// optionally followed by dot-separated markers such as ".m" for a modified tree.
var gitDescribe = regexp.MustCompile(`-[0-9]+-g[0-9a-fA-F]{1,16}(\.[0-9A-Za-z-]+)*$`)

func stripGitDescribe(v string) string {
	if !strings.HasPrefix(v, "v") {
		return v
	}
	return gitDescribe.ReplaceAllString(v, "")
}
