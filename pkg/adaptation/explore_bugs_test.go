//go:build nribugs

package adaptation

import (
	"strings"
	"testing"
)

// TestExploreFindsRevertedFixes proves the exploration's power: with each of
// issue 30's and 39's fixes reverted (bugs_nribugs.go) it finds a schedule that fails,
// and passes with the fix in place.
// go test -tags nribugs -run TestExploreFindsRevertedFixes ./pkg/adaptation
func TestExploreFindsRevertedFixes(t *testing.T) {
	// Replays of a failing schedule with the fix in place: a schedule the
	// code takes only sometimes must pass each of them to count.
	const fixedReplays = 20
	for _, tc := range []struct {
		name   string
		revert *bool
	}{
		{"urgent holds made ordinary", &bugNonUrgentHolds},
		{"join under the gate holds after SyncFn", &bugHoldAfterSyncFn},
		{"events do not wait for the hold", &bugEventsIgnoreHold},
		{"generation rule counts the pending candidate at a switch", &bugGenerationVsCandidate},
		{"a reactivation runs whatever happened since it was queued", &bugStaleReactivation},
		{"UpdateContainers during a hold deferred and answered at once", &bugUpdatesDeferred},
		{"the ledger misses what UpdateFn and replies applied (finding 3)", &bugLedgerMissesUpdates},
		{"a listing brings back a relayed removal (finding 4)", &bugLedgerBringsBack},
		{"a candidate that left keeps its switch ticket (finding 2)", &bugStaleSwitchTicket},
		{"a workload group's switch leaves the opted-in instance (finding 1)", &bugGroupKeepsOptedIn},
		{"a chart upgrade is another workload (finding 7)", &bugWorkloadByLabels},
	} {
		t.Run(tc.name, func(t *testing.T) {
			*tc.revert = true
			defer func() { *tc.revert = false }()
			depth, budget := envInt("NRI_EXPLORE_DEPTH", 2), envInt("NRI_EXPLORE_BUDGET", 200)
			total := 0
			var others []string
			// A schedule that fails with the fix in place too is another
			// finding's, not this revert's.
			revertsFinding := func(cfg exploreConfig, sched []choice) bool {
				*tc.revert = false
				defer func() { *tc.revert = true }()
				for range fixedReplays {
					if len(runSchedule(t, cfg, sched).failures) > 0 {
						others = append(others, scheduleID(cfg, sched))
						return false
					}
				}
				return true
			}
			defer func() {
				if len(others) > 0 {
					t.Logf("%d schedules failed with the fix in place too, e.g. %s", len(others), others[0])
				}
			}()
			for _, cfg := range exploreConfigs() {
				n, failed, failures := explore(t, cfg, depth, budget, revertsFinding)
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
