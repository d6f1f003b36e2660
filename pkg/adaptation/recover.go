package adaptation

import (
	"context"
	"fmt"
	"runtime/debug"

	"github.com/containerd/ttrpc"

	"github.com/nri-handover/nri/api"
)

// recoverPanic turns a panic in code handling what plugin p sent into an
// error naming p, and logs it with its stack. The adaptation runs inside the
// container runtime: whatever a plugin sends must never take it down. Use as
// `defer p.recoverPanic(ctx, what, &err)`.
func (p *plugin) recoverPanic(ctx context.Context, what string, errp *error) {
	if v := recover(); v != nil {
		p.recovered(ctx, what, v, errp)
	}
}

// recovered handles the panic v recovered while what.
func (p *plugin) recovered(ctx context.Context, what string, v any, errp *error) {
	p.r.log.Errorf(ctx, "plugin %s: recovered from a panic while %s: %v\n%s", p.name(), what, v, debug.Stack())
	*errp = fmt.Errorf("plugin %s: internal error while %s: %v", p.name(), what, v)
}

// serverGuard is the innermost interceptor of the runtime service a plugin
// calls: a panic in a handler fails that request, not the runtime.
func (p *plugin) serverGuard() ttrpc.UnaryServerInterceptor {
	return func(ctx context.Context, unmarshal ttrpc.Unmarshaler, info *ttrpc.UnaryServerInfo, method ttrpc.Method) (resp any, err error) {
		defer p.recoverPanic(ctx, "handling its "+info.FullMethod+" request", &err)
		return method(ctx, unmarshal)
	}
}

// mergeReply hands a plugin's reply to merge, which runs our code over what
// the plugin sent.
func (p *plugin) mergeReply(ctx context.Context, event api.Event, merge func(*plugin, any) error, rpl any) (err error) {
	// what is named only on a panic: building it costs every event an
	// allocation
	defer func() {
		if v := recover(); v != nil {
			p.recovered(ctx, "merging its "+event.PrettyName()+" reply", v, &err)
		}
	}()
	return merge(p, rpl)
}
