//go:build nribugs

package adaptation

import (
	"strings"
	"testing"
)

// TestExploreFindsRevertedFixes proves the exploration's power: with each of
// issue 30's fixes reverted (bugs_nribugs.go) it finds a failing schedule.
// go test -tags nribugs -run TestExploreFindsRevertedFixes ./pkg/adaptation
func TestExploreFindsRevertedFixes(t *testing.T) {
	for _, tc := range []struct {
		name   string
		revert *bool
	}{
		{"urgent holds made ordinary", &bugNonUrgentHolds},
		{"join under the gate holds after SyncFn", &bugHoldAfterSyncFn},
		{"events do not wait for the hold", &bugEventsIgnoreHold},
		{"generation rule counts the pending candidate at a switch", &bugGenerationVsCandidate},
	} {
		t.Run(tc.name, func(t *testing.T) {
			*tc.revert = true
			defer func() { *tc.revert = false }()
			depth, budget := envInt("NRI_EXPLORE_DEPTH", 2), envInt("NRI_EXPLORE_BUDGET", 200)
			total := 0
			for _, cfg := range exploreConfigs() {
				n, failed, failures := explore(t, cfg, depth, budget)
				total += n
				if failed != "" {
					t.Logf("found after %d schedules: %s\n%s", total, failed, strings.Join(failures, "\n"))
					return
				}
			}
			t.Errorf("not found in %d schedules", total)
		})
	}
}
