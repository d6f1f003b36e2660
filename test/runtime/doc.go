// Package testruntime is a small in-memory container runtime on top of
// pkg/adaptation for cross-process integration tests.
//
// It keeps pods and containers in memory, drives the adaptation's event
// methods the way a CRI runtime does (each operation holds BlockPluginSync so
// plugin synchronization never interleaves with an operation), applies the
// adjustments and updates plugins return, and records every event it
// dispatched with a sequence number. The sequence number is also stamped into
// the annotations of the pod and container sent with the event (SeqAnnotation)
// so that plugin processes can record which dispatch they handled and suites
// can prove exactly-once delivery from both sides.
package testruntime
