package adaptation

import (
	"slices"
	"strconv"
	"strings"
)

// versionLess compares dotted numeric versions ("v1.2.3", "1.10"); versions
// that do not parse never count as lower, so policy never blocks on a guess.
// It is used only by WithRefuseDowngrades: versions never pick a winner.
func versionLess(a, b string) bool {
	pa, oka := parseVersion(a)
	pb, okb := parseVersion(b)
	if !oka || !okb {
		return false
	}
	return slices.Compare(pa, pb) < 0
}

func parseVersion(v string) ([]int, bool) {
	v = strings.TrimPrefix(v, "v")
	if i := strings.IndexAny(v, "-+"); i >= 0 {
		v = v[:i]
	}
	if v == "" {
		return nil, false
	}
	var out []int
	for _, f := range strings.Split(v, ".") {
		n, err := strconv.Atoi(f)
		if err != nil {
			return nil, false
		}
		out = append(out, n)
	}
	return out, true
}
