// Package generate applies an NRI ContainerAdjustment to an OCI runtime spec.
//
// A runtime wraps its own spec generator (runtime-tools' generate.Generator,
// or any type with the UnderlyingGenerator methods, like containerd's) with
// SpecGenerator and calls Adjust with the adjustment the NRI plugins returned
// for a container. The exported API and the results are those of upstream
// containerd/nri's pkg/runtime-tools/generate, so a runtime switches by
// changing the import path; a table test applies the same adjustments through
// upstream's package (in a separate binary) and compares the specs.
//
// Where upstream's result depends on Go's random map order (a key both
// marked for removal and set, in annotations, sysctls or net devices), ours
// is deterministic: removals first, then additions, which is what the
// adaptation's merging means (a later plugin re-adding a key another plugin
// removed). Where upstream dereferences nil (no Linux or Process section, a
// nil list entry), ours creates the section or skips the entry: a plugin's
// input must never panic the runtime.
package generate
