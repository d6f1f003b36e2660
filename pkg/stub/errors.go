package stub

import (
	"errors"
	"fmt"
	"strings"

	"github.com/nri-handover/nri/api"
)

// ErrNoService is returned by UpdateContainers when the stub has no
// connection to a runtime (not started, or the connection is gone).
var ErrNoService = errors.New("stub: no service/connection")

// ErrDisconnected is returned by Run when the runtime closed the connection
// without telling why (an upstream runtime, a crash, a network error).
var ErrDisconnected = errors.New("connection to the runtime closed")

// One sentinel per ShutdownReason, so callers can branch with errors.Is on
// what Run returned without knowing the wire enum.
var (
	ErrShutdownUnspecified   = errors.New("disconnected by the runtime without a reason")
	ErrRuntimeShutdown       = errors.New("runtime is shutting down")
	ErrSuperseded            = errors.New("superseded by another instance of the plugin")
	ErrRegistrationRejected  = errors.New("registration rejected by the runtime")
	ErrTimeout               = errors.New("timed out in the runtime's eyes")
	ErrSynchronizationFailed = errors.New("synchronization failed")
	ErrProtocolError         = errors.New("protocol error")
	ErrRemoved               = errors.New("removed by the runtime")
)

var reasonErrors = map[api.ShutdownReason]error{
	api.ShutdownReason_SHUTDOWN_REASON_UNSPECIFIED:            ErrShutdownUnspecified,
	api.ShutdownReason_SHUTDOWN_REASON_RUNTIME_SHUTDOWN:       ErrRuntimeShutdown,
	api.ShutdownReason_SHUTDOWN_REASON_SUPERSEDED:             ErrSuperseded,
	api.ShutdownReason_SHUTDOWN_REASON_REGISTRATION_REJECTED:  ErrRegistrationRejected,
	api.ShutdownReason_SHUTDOWN_REASON_TIMEOUT:                ErrTimeout,
	api.ShutdownReason_SHUTDOWN_REASON_SYNCHRONIZATION_FAILED: ErrSynchronizationFailed,
	api.ShutdownReason_SHUTDOWN_REASON_PROTOCOL_ERROR:         ErrProtocolError,
	api.ShutdownReason_SHUTDOWN_REASON_REMOVED:                ErrRemoved,
}

// ShutdownError is what Run returns after the runtime sent Shutdown. It
// matches the sentinel of its reason with errors.Is; errors.As gives the
// details, such as who took over from a superseded instance.
type ShutdownError struct {
	// Plugin is the plugin's indexed name (NN-name).
	Plugin              string
	Reason              api.ShutdownReason
	Message             string
	SuccessorVersion    string
	SuccessorInstance   string
	SuccessorGeneration uint64
}

func newShutdownError(plugin string, req *api.ShutdownRequest) *ShutdownError {
	return &ShutdownError{
		Plugin:              plugin,
		Reason:              req.GetReason(),
		Message:             req.GetMessage(),
		SuccessorVersion:    req.GetSuccessorVersion(),
		SuccessorInstance:   req.GetSuccessorInstance(),
		SuccessorGeneration: req.GetSuccessorGeneration(),
	}
}

func (e *ShutdownError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "plugin %s: %v", e.Plugin, e.Unwrap())
	if e.Reason == api.ShutdownReason_SHUTDOWN_REASON_SUPERSEDED {
		fmt.Fprintf(&b, " (successor version %q, instance %q, generation %d)",
			e.SuccessorVersion, e.SuccessorInstance, e.SuccessorGeneration)
	}
	if e.Message != "" {
		fmt.Fprintf(&b, ": %s", e.Message)
	}
	return b.String()
}

// Unwrap returns the reason's sentinel; reasons unknown to this version of
// the stub unwrap to ErrShutdownUnspecified.
func (e *ShutdownError) Unwrap() error {
	if err, ok := reasonErrors[e.Reason]; ok {
		return err
	}
	return ErrShutdownUnspecified
}

// Superseded tells whether another instance took over from this one.
func (e *ShutdownError) Superseded() bool {
	return e.Reason == api.ShutdownReason_SHUTDOWN_REASON_SUPERSEDED
}
