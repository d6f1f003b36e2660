// Package version finds the NRI version a binary was built with and matches
// versions against a list, as upstream containerd/nri's pkg/version does:
// the stand-in module forwards upstream's package of that name here, so
// runtimes and plugins that call it build and behave the same on ours.
//
// Versions are semantic versions with a leading "v"; like
// golang.org/x/mod/semver, "vMAJOR" and "vMAJOR.MINOR" are shorthands for
// ".0", build metadata is checked and ignored, and an invalid version orders
// before every valid one.
package version

import (
	"fmt"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
)

const (
	// UnknownVersion is what GetFromBuildInfo reports when it cannot tell.
	UnknownVersion = "0.0.0-unknown"
	// DevelVersion is the version the Go toolchain records for a module
	// built from a working tree (a workspace, or the main module).
	DevelVersion = "(devel)"

	// modulePath is the module whose version GetFromBuildInfo reports:
	// upstream's, the path runtimes and plugins require (and our stand-in
	// declares).
	modulePath = "github.com/containerd/nri"
)

// GetFromBuildInfo reports the version of github.com/containerd/nri this
// binary was built with, from the Go build information: a replacement's
// version wins over the required one. A working-tree build reports
// UnknownVersion: upstream then falls back to a git description embedded at
// its own release builds, which a module-cache copy (and ours) does not have.
func GetFromBuildInfo() string {
	v := UnknownVersion
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, m := range bi.Deps {
			if m.Path != modulePath {
				continue
			}
			// As upstream: a directory replacement (no version) yields "".
			if m.Replace != nil && m.Replace.Version != DevelVersion {
				v = m.Replace.Version
			} else {
				v = m.Version
			}
		}
	}
	if v == DevelVersion {
		return UnknownVersion
	}
	return v
}

// FindClosestMatch returns the greatest of versions that is not greater than
// v, or "" if there is none. A git-described suffix of v ("-N-gSHA[.m]") is
// ignored, so that a development build matches the release it follows
// rather than ordering before it as a pre-release would. Like upstream's, it
// sorts versions in place.
func FindClosestMatch(v string, versions []string) string {
	v = stripGitSuffix(v)
	slices.SortFunc(versions, compare)
	match := ""
	for _, c := range versions {
		if compare(c, v) > 0 {
			break
		}
		match = c
	}
	return match
}

// semver is a parsed version; numbers stay decimal strings so that any
// length compares correctly.
type semver struct {
	major, minor, patch, pre string
}

func (s semver) core() string { return "v" + s.major + "." + s.minor + "." + s.patch }

func (s semver) String() string {
	if s.pre == "" {
		return s.core()
	}
	return s.core() + "-" + s.pre
}

// parse reads "vX[.Y[.Z[-PRE]]][+BUILD]", where PRE and BUILD need all three
// numbers.
func parse(s string) (semver, error) {
	rest, ok := strings.CutPrefix(s, "v")
	if !ok {
		return semver{}, fmt.Errorf("version %q does not start with 'v'", s)
	}
	rest, build, hasBuild := strings.Cut(rest, "+")
	if hasBuild {
		if err := checkIdentifiers(build, false); err != nil {
			return semver{}, fmt.Errorf("version %q: build metadata: %w", s, err)
		}
	}
	rest, pre, hasPre := strings.Cut(rest, "-")
	if hasPre {
		if err := checkIdentifiers(pre, true); err != nil {
			return semver{}, fmt.Errorf("version %q: pre-release: %w", s, err)
		}
	}
	nums := strings.Split(rest, ".")
	switch {
	case len(nums) > 3:
		return semver{}, fmt.Errorf("version %q has more than three numbers", s)
	case len(nums) < 3 && (hasPre || hasBuild):
		return semver{}, fmt.Errorf("version %q: a pre-release or build needs major.minor.patch", s)
	}
	for _, n := range nums {
		if !numeric(n) || (len(n) > 1 && n[0] == '0') {
			return semver{}, fmt.Errorf("version %q: %q is not a number without leading zeros", s, n)
		}
	}
	nums = append(nums, "0", "0")
	return semver{major: nums[0], minor: nums[1], patch: nums[2], pre: pre}, nil
}

// checkIdentifiers checks a dot-separated pre-release or build list: no
// empty identifier, only [0-9A-Za-z-], and (pre-release) no numeric one with
// a leading zero.
func checkIdentifiers(list string, pre bool) error {
	for _, id := range strings.Split(list, ".") {
		if id == "" {
			return fmt.Errorf("empty identifier in %q", list)
		}
		if i := strings.IndexFunc(id, func(r rune) bool {
			return !('0' <= r && r <= '9' || 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || r == '-')
		}); i >= 0 {
			return fmt.Errorf("identifier %q has an invalid character", id)
		}
		if pre && numeric(id) && len(id) > 1 && id[0] == '0' {
			return fmt.Errorf("numeric identifier %q has a leading zero", id)
		}
	}
	return nil
}

func numeric(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// compare orders a and b (-1, 0, +1) by semantic version precedence;
// invalid versions come first and are equal to each other.
func compare(a, b string) int {
	va, errA := parse(a)
	vb, errB := parse(b)
	switch {
	case errA != nil && errB != nil:
		return 0
	case errA != nil:
		return -1
	case errB != nil:
		return 1
	}
	for _, p := range [][2]string{{va.major, vb.major}, {va.minor, vb.minor}, {va.patch, vb.patch}} {
		if c := compareNumbers(p[0], p[1]); c != 0 {
			return c
		}
	}
	return comparePre(va.pre, vb.pre)
}

// compareNumbers orders decimal strings without leading zeros.
func compareNumbers(a, b string) int {
	if c := len(a) - len(b); c != 0 {
		return sign(c)
	}
	return strings.Compare(a, b)
}

func sign(n int) int {
	switch {
	case n < 0:
		return -1
	case n > 0:
		return 1
	}
	return 0
}

// comparePre orders pre-releases: none is greatest; identifiers compare in
// turn, numeric below alphanumeric, numbers by value; a list that is a
// prefix of the other is smaller.
func comparePre(a, b string) int {
	switch {
	case a == b:
		return 0
	case a == "":
		return 1
	case b == "":
		return -1
	}
	as, bs := strings.Split(a, "."), strings.Split(b, ".")
	for i := 0; i < len(as) && i < len(bs); i++ {
		x, y := as[i], bs[i]
		if x == y {
			continue
		}
		nx, ny := numeric(x), numeric(y)
		switch {
		case nx && ny:
			return compareNumbers(x, y)
		case nx:
			return -1
		case ny:
			return 1
		}
		return strings.Compare(x, y)
	}
	return sign(len(as) - len(bs))
}

// stripGitSuffix turns a git-described "vX.Y.Z-N-gHEX[.suffix]" into
// "vX.Y.Z" and returns anything else unchanged.
func stripGitSuffix(v string) string {
	s, err := parse(v)
	if err != nil || s.String() != v || s.pre == "" {
		return v
	}
	commits, rest, ok := strings.Cut(s.pre, "-")
	if !ok || !strings.HasPrefix(rest, "g") {
		return v
	}
	hash, _, _ := strings.Cut(rest[1:], ".")
	if _, err := strconv.ParseUint(commits, 10, 64); err != nil {
		return v
	}
	if _, err := strconv.ParseUint(hash, 16, 64); err != nil {
		return v
	}
	return s.core()
}
