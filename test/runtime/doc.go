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
//
// WaitSynchronized waits until a plugin instance joined and the updates its
// Synchronize asked for were applied, for a test that checks what the
// plugin reconciled.
//
// WithContainerdLocking adds containerd's locking shape (its internal/nri):
// one mutex held around every call into the adaptation, Stop included, and
// taken inside the SyncFn and UpdateFn; NotifyContainerExit relays a
// container's exit under that mutex but, as containerd, without
// BlockPluginSync. LockNRI and StopLocked let a test hold the mutex where
// containerd does; SyncFnCalls counts SyncFn calls, blocked ones included.
package testruntime
