//go:build nribugs

package adaptation

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/nri-handover/nri/pkg/adaptation/internal/ledger"
)

// revertedFixes are the fixes bugs_nribugs.go can revert. NRI_BUGS=<key>,...
// reverts them for any test of the package (a schedule's replay, say:
// NRI_BUGS=i39-f4 NRI_EXPLORE_ID=... go test -tags nribugs -run '^TestExplore$').
var revertedFixes = []struct {
	key    string // its line in docs/results/explore-power.txt
	name   string
	revert *bool
}{
	{"i30-urgent-holds", "urgent holds made ordinary", &bugNonUrgentHolds},
	{"i30-hold-after-syncfn", "join under the gate holds after SyncFn", &bugHoldAfterSyncFn},
	{"i30-events-ignore-hold", "events do not wait for the hold", &bugEventsIgnoreHold},
	{"i30-generation-vs-candidate", "generation rule counts the pending candidate at a switch", &bugGenerationVsCandidate},
	{"i39-f1", "a workload group's switch leaves the opted-in instance (finding 1)", &bugGroupKeepsOptedIn},
	{"i39-f2", "a candidate that left keeps its switch ticket (finding 2)", &bugStaleSwitchTicket},
	{"i39-f3", "the ledger misses what UpdateFn and replies applied (finding 3)", &ledger.BugMissesUpdates},
	{"i39-f4", "a listing brings back a relayed removal (finding 4)", &ledger.BugBringsBack},
	{"i39-f5", "a reactivation runs whatever happened since it was queued (finding 5)", &bugStaleReactivation},
	{"i39-f6", "UpdateContainers during a hold deferred and answered at once (finding 6)", &bugUpdatesDeferred},
	{"i39-f7", "a chart upgrade is another workload (finding 7)", &bugWorkloadByLabels},
}

func init() {
	for _, key := range strings.Split(os.Getenv("NRI_BUGS"), ",") {
		for _, tc := range revertedFixes {
			if tc.key == key {
				*tc.revert = true
			}
		}
	}
}

// TestExploreFindsRevertedFixes proves the exploration's power: with each of
// issue 30's and 39's fixes reverted (bugs_nribugs.go) it finds a schedule that fails,
// and passes with the fix in place.
// go test -tags nribugs -run TestExploreFindsRevertedFixes ./pkg/adaptation
// With NRI_EXPLORE_POWER_OUT set (make explore-power) it writes how many
// schedules each took there (docs/results/explore-power.txt).
func TestExploreFindsRevertedFixes(t *testing.T) {
	// Replays of a failing schedule with the fix in place: a schedule the
	// code takes only sometimes must pass each of them to count.
	const fixedReplays = 20
	depth, budget := envInt("NRI_EXPLORE_DEPTH", 2), envInt("NRI_EXPLORE_BUDGET", 200)
	var results []string
	defer func() {
		out := os.Getenv("NRI_EXPLORE_POWER_OUT")
		if out == "" {
			return
		}
		head := fmt.Sprintf("# make explore-power: rewritten by every run, read by hack/figures; do not edit\ncommit %s\ndepth %d\nbudget-per-configuration %d\n",
			os.Getenv("NRI_EXPLORE_COMMIT"), depth, budget)
		if err := os.WriteFile(out, []byte(head+strings.Join(results, "")), 0o644); err != nil {
			t.Error(err)
		}
	}()
	for _, tc := range revertedFixes {
		t.Run(tc.name, func(t *testing.T) {
			*tc.revert = true
			defer func() { *tc.revert = false }()
			total := 0
			var others []string
			// A schedule that fails with the fix in place too is another
			// finding's, not this revert's; so is one that fails rarely
			// whatever is reverted (a race of its own that passed the
			// replays with the fix by chance): it must fail again with
			// the revert.
			revertsFinding := func(cfg exploreConfig, sched []choice) bool {
				again := false
				for range fixedReplays {
					if again = len(runSchedule(t, cfg, sched).failures) > 0; again {
						break
					}
				}
				if !again {
					others = append(others, scheduleID(cfg, sched)+" (did not fail again)")
					return false
				}
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
				if filter := os.Getenv("NRI_EXPLORE_CONFIG"); filter != "" && !strings.Contains(cfg.String(), filter) {
					continue
				}
				n, failed, failures := explore(t, cfg, depth, budget, revertsFinding)
				total += n
				if failed != "" {
					t.Logf("found after %d schedules: %s\n%s", total, failed, strings.Join(failures, "\n"))
					results = append(results, fmt.Sprintf("%s.schedules %d\n%s.schedule %s\n", tc.key, total, tc.key, failed))
					return
				}
			}
			t.Errorf("not found in %d schedules", total)
			results = append(results, fmt.Sprintf("%s.schedules not-found-in-%d\n", tc.key, total))
		})
	}
}
