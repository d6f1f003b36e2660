package adaptation

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/containerd/ttrpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/nri-handover/nri/api"
)

// handleRequestError applies the failure policy to an error from relaying
// event to the plugin. ctx is the runtime's context, not the per-request one.
// It treats errors exactly as upstream NRI v0.12.5 does, because runtimes
// match on what they get back:
//
// An error the plugin returned is its answer, and so is any error once the
// runtime's own context is done (the plugin is not to blame): the request
// fails with the error unchanged, and the plugin stays. A transport failure
// or a timeout of the request is a plugin failure: the plugin is disconnected
// unless the policy keeps it through a timeout, and the request proceeds
// without it unless the policy says to fail it, with an error naming the
// plugin and the request.
func (p *plugin) handleRequestError(ctx context.Context, event api.Event, err error) error {
	if ctx.Err() != nil || !isFatalError(err) {
		return err
	}

	if p.dropsPlugin(err) {
		p.r.log.Errorf(ctx, "closing plugin %s, failed to handle %s: %v", p.name(), event.PrettyName(), err)
		p.shutdown(shutdownReasonFor(err), fmt.Sprintf("failed to handle %s: %v", event.PrettyName(), err), nil)
	}

	if !p.policy.GetFailRequest() {
		p.r.log.Warnf(ctx, "plugin %s failed to handle %s, proceeding without it: %v", p.name(), event.PrettyName(), err)
		return nil
	}
	return fmt.Errorf("plugin %s failed to handle %s request: %w", p.name(), event.PrettyName(), err)
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

// isTimeout tells whether the request ran out of time on our side: ttrpc then
// returns the request context's error. A deadline error the plugin sent back
// (a status with code DeadlineExceeded) is the plugin's answer, as upstream
// treats it, even when it raced with our own deadline.
func isTimeout(err error) bool {
	return errors.Is(err, context.DeadlineExceeded)
}

// requestError classifies err from a joining plugin's Configure or
// Synchronize made under rctx, to tell the plugin why it is refused: once
// the request's own deadline has passed, the plugin did not answer in time,
// whatever its side managed to send back (its copy of the deadline expires
// first). Runtime requests do not use it: their errors reach the runtime as
// upstream returns them (handleRequestError).
func requestError(rctx context.Context, err error) error {
	if err != nil && !timedOut(err) && errors.Is(rctx.Err(), context.DeadlineExceeded) {
		return fmt.Errorf("%w: %w", context.DeadlineExceeded, err)
	}
	return err
}

// timedOut is isTimeout widened to the status the plugin's side sends when
// its copy of the deadline expires: for the reason a plugin is told when it
// is disconnected, not for deciding whether it is.
func timedOut(err error) bool {
	return isTimeout(err) || status.Code(err) == codes.DeadlineExceeded
}

// timeoutError is a request that ran out of the request timeout, said with
// the limit an operator can raise; it unwraps to the request's error, so
// errors.Is(err, context.DeadlineExceeded) holds.
type timeoutError struct {
	request string
	limit   time.Duration
	err     error
}

func (e *timeoutError) Error() string {
	return fmt.Sprintf("its %s took longer than the request timeout (%s)", e.request, e.limit)
}

func (e *timeoutError) Unwrap() error { return e.err }

func shutdownReasonFor(err error) api.ShutdownReason {
	switch {
	case timedOut(err):
		return api.ShutdownReason_SHUTDOWN_REASON_TIMEOUT
	case errors.Is(err, ttrpc.ErrProtocol):
		return api.ShutdownReason_SHUTDOWN_REASON_PROTOCOL_ERROR
	}
	return api.ShutdownReason_SHUTDOWN_REASON_UNSPECIFIED
}
