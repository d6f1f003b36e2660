package annotator

import (
	"context"
	"errors"

	"github.com/nri-handover/nri/pkg/stub"
)

// Exit codes. Kubernetes restarts a DaemonSet's container whatever its exit
// code; the codes tell an operator (and kubectl describe) what happened.
const (
	// exitOK: stopped on SIGTERM, including after standing down for a
	// successor (superseded). Nothing went wrong.
	exitOK = 0
	// exitFailed: the plugin or the runtime found a fault (registration
	// rejected, configuration or synchronization failed, timed out, protocol
	// error, removed by the runtime, bad flags).
	exitFailed = 1
	// exitRuntimeGone: the runtime shut down or the connection dropped; the
	// restarted container reconnects once the runtime is back.
	exitRuntimeGone = 2
)

// exitCode maps what Run returned to the process's exit code.
func exitCode(err error) int {
	switch {
	case err == nil, errors.Is(err, context.Canceled):
		return exitOK
	case errors.Is(err, stub.ErrSuperseded):
		// Run returns it on SIGTERM after holding the superseded instance
		// up, not ready, so that the DaemonSet controller deletes the pod
		// instead of the kubelet restarting a process that would be refused.
		return exitOK
	case errors.Is(err, stub.ErrRuntimeShutdown), errors.Is(err, stub.ErrDisconnected):
		return exitRuntimeGone
	default:
		return exitFailed
	}
}
