//go:build nribugs

package adaptation

// With -tags nribugs the reverts of issue 30's fixes are variables a test
// sets (explore_bugs_test.go); see bugs.go.
var (
	bugNonUrgentHolds        bool
	bugHoldAfterSyncFn       bool
	bugEventsIgnoreHold      bool
	bugGenerationVsCandidate bool
	bugStaleReactivation     bool
	bugUpdatesDeferred       bool
	bugStaleSwitchTicket     bool
	bugGroupKeepsOptedIn     bool
	bugWorkloadByLabels      bool
)
