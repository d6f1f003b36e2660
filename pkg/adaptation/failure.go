package adaptation

import (
	"context"
	"errors"
	"fmt"

	"github.com/containerd/ttrpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/nri-handover/nri/api"
)

// handleRequestError applies the failure policy to an error from relaying
// event to the plugin. ctx is the runtime's context, not the per-request one.
//
// An error the plugin returned is its answer: the request fails. So does any
// error once the runtime's own context is done, since the plugin is not to
// blame. A transport failure or timeout is a plugin failure: the plugin is
// disconnected unless the policy keeps it through a timeout, and the request
// proceeds without it unless the policy says to fail it.
func (p *plugin) handleRequestError(ctx context.Context, event api.Event, err error) error {
	if ctx.Err() != nil || !isFatalError(err) {
		return fmt.Errorf("plugin %s failed to handle %s: %w", p.name(), event.PrettyName(), err)
	}

	if p.dropsPlugin(err) {
		p.r.log.Errorf(ctx, "closing plugin %s, failed to handle %s: %v", p.name(), event.PrettyName(), err)
		p.shutdown(shutdownReasonFor(err), fmt.Sprintf("failed to handle %s: %v", event.PrettyName(), err), nil)
	}

	if !p.policy.GetFailRequest() {
		p.r.log.Warnf(ctx, "plugin %s failed to handle %s, proceeding without it: %v", p.name(), event.PrettyName(), err)
		return nil
	}
	return fmt.Errorf("plugin %s failed to handle %s: %w", p.name(), event.PrettyName(), err)
}

// dropsPlugin tells whether a fatal error disconnects the plugin: all do,
// except a timeout when the plugin asked to stay connected through them.
func (p *plugin) dropsPlugin(err error) bool {
	if !isFatalError(err) {
		return false
	}
	return !isTimeout(err) || !p.policy.GetKeepConnected()
}

// isFatalError tells transport failures and timeouts, which mean the plugin
// did not answer, from errors the plugin answered with.
func isFatalError(err error) bool {
	return errors.Is(err, ttrpc.ErrClosed) ||
		errors.Is(err, ttrpc.ErrServerClosed) ||
		errors.Is(err, ttrpc.ErrProtocol) ||
		isTimeout(err)
}

// isTimeout also accepts the status the plugin's side sends when the deadline
// ttrpc propagates expires there first: the two race.
func isTimeout(err error) bool {
	return errors.Is(err, context.DeadlineExceeded) || status.Code(err) == codes.DeadlineExceeded
}

// requestError classifies err from a request made under rctx: once the
// request's own deadline has passed the plugin did not answer in time,
// whatever its side managed to send back (a plugin stub that wraps its
// context's error turns the deadline into an ordinary error status).
func requestError(rctx context.Context, err error) error {
	if err != nil && !isTimeout(err) && errors.Is(rctx.Err(), context.DeadlineExceeded) {
		return fmt.Errorf("%w: %w", context.DeadlineExceeded, err)
	}
	return err
}

func shutdownReasonFor(err error) api.ShutdownReason {
	switch {
	case isTimeout(err):
		return api.ShutdownReason_SHUTDOWN_REASON_TIMEOUT
	case errors.Is(err, ttrpc.ErrProtocol):
		return api.ShutdownReason_SHUTDOWN_REASON_PROTOCOL_ERROR
	}
	return api.ShutdownReason_SHUTDOWN_REASON_UNSPECIFIED
}
