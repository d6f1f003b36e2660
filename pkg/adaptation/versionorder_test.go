package adaptation

import "testing"

func TestVersionLess(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want bool
	}{
		{"v1.2.3", "v1.10.0", true},
		{"1.10", "1.9", false},
		{"v2.0.0-rc1", "v2.0.0", false}, // pre-releases compare by their release
		{"v1", "v1.0.1", true},
		{"main", "v1", false},
		{"", "v1", false},
	} {
		if got := versionLess(tc.a, tc.b); got != tc.want {
			t.Errorf("versionLess(%q, %q) = %v, want %v", tc.a, tc.b, got, tc.want)
		}
	}
}
