package api

import (
	"testing"
	"time"
)

// The defaults are part of observable runtime behaviour shared with upstream.
func TestDefaultTimeouts(t *testing.T) {
	for _, tc := range []struct {
		name      string
		got, want time.Duration
	}{
		{"registration", DefaultPluginRegistrationTimeout, 5 * time.Second},
		{"request", DefaultPluginRequestTimeout, 2 * time.Second},
	} {
		if tc.got != tc.want {
			t.Errorf("%s timeout = %v, want %v", tc.name, tc.got, tc.want)
		}
	}
}
