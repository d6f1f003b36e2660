// Package annotator is the sample NRI plugin that is safe to roll out with
// maxSurge (deploy/daemonset.yaml runs it; ../main.go is its command). It
// stamps every container it sees created with the version and instance that
// handled it (the annotation HandledBy, or with -stamp-env the environment
// variable HandledByEnv, for runtimes that take no annotation adjustment,
// such as Docker Engine), and uses what a surging plugin needs from
// pkg/stub:
//
//   - opt-in to handover (stub.WithHandover);
//   - identity and rollout generation from the environment, which a
//     DaemonSet fills from the downward API ($NRI_PLUGIN_INSTANCE_ID,
//     $NRI_PLUGIN_GENERATION), flags for running it by hand;
//   - readiness that means "the runtime made this instance active": an HTTP
//     endpoint for an httpGet readinessProbe (-readyz-addr) or a ready file
//     (-ready-file);
//   - a delta-aware synchronization that skips containers a predecessor
//     already stamped (plugin.go);
//   - with -leave-stamped, on a runtime without handover (upstream NRI),
//     where two instances connected at once both get every creation, the
//     second leaves a container the first stamped: upstream refuses a
//     container two plugins set one annotation on (plugin.go);
//   - typed shutdown reasons mapped to exit codes (exit.go);
//   - optionally a state file on the host, written only while this instance
//     is the active one and handed over in the runtime's order (state.go);
//   - one structured log line (log/slog, stderr) per fact an operator looks
//     for: the identity it starts with, each synchronization round and what
//     it skipped, each container it stamps, each change of the state file's
//     owner, and why it stopped.
//
// The logic lives in this package, not in package main, so that the
// real-containerd test (test/realcontainerd/surge.sh) runs this very code:
// its harness, test/realcontainerd/annotator, calls Main with one handler
// overridden to pause a synchronization round, where the test kills an
// instance. A plugin author copies both directories and drops the options.
package annotator
