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

// Error names the plugin once: a runtime's message that names it already
// (its refusals do) replaces the "plugin NN-name: " prefix. The successor is
// shown by what the runtime told of it.
func (e *ShutdownError) Error() string {
	var b strings.Builder
	if !namesPlugin(e.Message, e.Plugin) {
		fmt.Fprintf(&b, "plugin %s: ", e.Plugin)
	}
	restates := false
	for _, word := range reasonWords[e.Reason] {
		restates = restates || e.Message != "" && strings.Contains(strings.ToLower(e.Message), word)
	}
	if !restates {
		b.WriteString(e.Unwrap().Error())
	}
	if e.Reason == api.ShutdownReason_SHUTDOWN_REASON_SUPERSEDED {
		var succ []string
		if e.SuccessorVersion != "" {
			succ = append(succ, fmt.Sprintf("version %q", e.SuccessorVersion))
		}
		if e.SuccessorInstance != "" {
			succ = append(succ, fmt.Sprintf("instance %q", e.SuccessorInstance))
		}
		if e.SuccessorGeneration != 0 {
			succ = append(succ, fmt.Sprintf("generation %d", e.SuccessorGeneration))
		}
		if len(succ) > 0 {
			fmt.Fprintf(&b, " (successor %s)", strings.Join(succ, ", "))
		}
	}
	switch {
	case restates && b.Len() > 0 && !strings.HasSuffix(b.String(), ": "):
		fmt.Fprintf(&b, ": %s", e.Message)
	case restates:
		b.WriteString(e.Message)
	case e.Message != "":
		fmt.Fprintf(&b, ": %s", e.Message)
	}
	return b.String()
}

// reasonWords are what a runtime's message says when it restates the reason
// ("synchronize failed: ...", "its Synchronize took longer than the request
// timeout (2s)"), so that Error says it once; "\x00" for a reason always
// said.
var reasonWords = map[api.ShutdownReason][]string{
	api.ShutdownReason_SHUTDOWN_REASON_UNSPECIFIED:            {"\x00"},
	api.ShutdownReason_SHUTDOWN_REASON_RUNTIME_SHUTDOWN:       {"shutting down"},
	api.ShutdownReason_SHUTDOWN_REASON_SUPERSEDED:             {"\x00"}, // the successor follows the reason
	api.ShutdownReason_SHUTDOWN_REASON_REGISTRATION_REJECTED:  {"registration rejected"},
	api.ShutdownReason_SHUTDOWN_REASON_TIMEOUT:                {"timed out", "timeout"},
	api.ShutdownReason_SHUTDOWN_REASON_SYNCHRONIZATION_FAILED: {"synchroni"},
	api.ShutdownReason_SHUTDOWN_REASON_PROTOCOL_ERROR:         {"protocol"},
	api.ShutdownReason_SHUTDOWN_REASON_REMOVED:                {"removed"},
}

// mentions tells whether msg names plugin as "plugin NN-name" anywhere.
func mentions(msg, plugin string) bool {
	for i := 0; ; {
		j := strings.Index(msg[i:], "plugin "+plugin)
		if j < 0 {
			return false
		}
		if namesPlugin(msg[i+j:], plugin) {
			return true
		}
		i += j + 1
	}
}

// namesPlugin tells whether msg begins by naming plugin as "plugin NN-name".
func namesPlugin(msg, plugin string) bool {
	rest, ok := strings.CutPrefix(msg, "plugin "+plugin)
	return ok && (rest == "" || rest[0] == ' ' || rest[0] == ':')
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
