// Package bench compares our adaptation with upstream containerd/nri
// v0.12.5 in `go test -bench` benchmarks (they only run with -bench; `make
// bench` runs them and prints tables through ./benchtable):
//
//   - BenchmarkRegistrationStall: how long runtime operations wait while a
//     plugin registers. Upstream blocks every BlockPluginSync holder for the
//     plugin's whole Synchronize; our handover path synchronizes first and
//     blocks operations only for the commit's delta round.
//   - BenchmarkHandoverDuration: registration to RoleChange(ACTIVE) when an
//     instance takes over from its predecessor.
//   - BenchmarkCreateContainer: cost of one CreateContainer with 1 and 3
//     plugins.
//   - BenchmarkSyncedMemory: the runtime's heap and RSS with 5000 containers
//     synchronized to a plugin.
//
// Upstream runs only in its own binary (test/upstream/benchruntime): its API
// package registers the same protobuf names as ours. Both binaries measure
// with the standard-library-only loadgen package.
package bench
