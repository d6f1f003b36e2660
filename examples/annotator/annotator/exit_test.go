package annotator

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/nri-handover/nri/api"
	"github.com/nri-handover/nri/pkg/stub"
)

func TestExitCode(t *testing.T) {
	shutdown := func(r api.ShutdownReason) error {
		return &stub.ShutdownError{Plugin: "50-annotator", Reason: r}
	}
	for _, tc := range []struct {
		name string
		err  error
		want int
	}{
		{"stopped", nil, exitOK},
		{"SIGTERM", context.Canceled, exitOK},
		{"superseded", shutdown(api.ShutdownReason_SHUTDOWN_REASON_SUPERSEDED), exitOK},
		{"superseded, wrapped", fmt.Errorf("plugin: %w", shutdown(api.ShutdownReason_SHUTDOWN_REASON_SUPERSEDED)), exitOK},
		{"runtime shutdown", shutdown(api.ShutdownReason_SHUTDOWN_REASON_RUNTIME_SHUTDOWN), exitRuntimeGone},
		{"disconnected", fmt.Errorf("plugin 50-annotator: %w", stub.ErrDisconnected), exitRuntimeGone},
		{"rejected", shutdown(api.ShutdownReason_SHUTDOWN_REASON_REGISTRATION_REJECTED), exitFailed},
		{"timeout", shutdown(api.ShutdownReason_SHUTDOWN_REASON_TIMEOUT), exitFailed},
		{"sync failed", shutdown(api.ShutdownReason_SHUTDOWN_REASON_SYNCHRONIZATION_FAILED), exitFailed},
		{"protocol error", shutdown(api.ShutdownReason_SHUTDOWN_REASON_PROTOCOL_ERROR), exitFailed},
		{"removed", shutdown(api.ShutdownReason_SHUTDOWN_REASON_REMOVED), exitFailed},
		{"unspecified", shutdown(api.ShutdownReason_SHUTDOWN_REASON_UNSPECIFIED), exitFailed},
		{"dial error", errors.New("connecting to the runtime: no such file"), exitFailed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := exitCode(tc.err); got != tc.want {
				t.Errorf("exitCode(%v) = %d, want %d", tc.err, got, tc.want)
			}
		})
	}
}
