// Package harness runs the integration suites' real processes: it builds the
// test plugin and the upstream v0.12.5 binaries once, starts plugin processes
// with a declarative spec, drives the upstream runtime binary over its line
// protocol, and reads the plugins' event records. The handover suites reuse
// it.
package harness
