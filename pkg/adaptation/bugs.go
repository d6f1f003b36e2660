//go:build !nribugs

package adaptation

// Issue 30's and issue 39's findings, each with its fix reverted, for the exploration to
// prove it finds them (explore_bugs_test.go, built with -tags nribugs).
// Here they are constants: every revert compiles away.
const (
	bugNonUrgentHolds        = false // hold.go: enqueueUrgent queues an ordinary hold
	bugHoldAfterSyncFn       = false // join.go: a join under the gate holds after SyncFn returned
	bugEventsIgnoreHold      = false // hold.go: lockDispatch does not wait for holds
	bugGenerationVsCandidate = false // admission.go: at a switch, the generation rule counts the pending candidate
	bugStaleReactivation     = false // standby.go: a reactivation runs whatever happened since it was queued
	bugUpdatesDeferred       = false // hold.go: UpdateContainers during a hold is deferred, answered at once, applied unchecked
	bugStaleSwitchTicket     = false // lifecycle.go: a candidate that left keeps its switch's ticket for a loss to urge
	bugGroupKeepsOptedIn     = false // switch.go: a workload group's switch leaves the opted-in instance it turns handover off for
	bugWorkloadByLabels      = false // resolver.go: a pod's workload is its labels, so a chart upgrade is another workload
)
