package adaptation

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/containerd/ttrpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"github.com/nri-handover/nri/api"
)

const (
	// ttrpcMessageLimit is ttrpc's fixed maximum message size.
	ttrpcMessageLimit = 4 << 20
	// syncMessageBudget leaves room for ttrpc's request envelope and the
	// non-repeated fields of SynchronizeRequest.
	syncMessageBudget = ttrpcMessageLimit - 64<<10
	// minSyncMessageBudget is how far the budget shrinks when the plugin's
	// side still rejects a message as too large.
	minSyncMessageBudget = 64 << 10
)

// syncChunk is one SynchronizeRequest's share of the snapshot.
type syncChunk struct {
	pods       []*api.PodSandbox
	containers []*api.Container
}

// planSyncChunks splits a snapshot into consecutive chunks whose encoded size
// stays within budget. Pods come first so that a plugin sees a container's
// pod no later than the container. An object that alone exceeds the budget
// cannot be sent.
func planSyncChunks(pods []*api.PodSandbox, ctrs []*api.Container, budget int) ([]syncChunk, error) {
	var (
		chunks []syncChunk
		cur    syncChunk
		size   int
	)
	add := func(m proto.Message, what string, id string, put func()) error {
		// encoded as a length-delimited repeated field entry
		n := protowire.SizeTag(2) + protowire.SizeBytes(proto.Size(m))
		if n > budget {
			return fmt.Errorf("%s %s is too large to synchronize (%d bytes, limit %d)", what, id, n, budget)
		}
		if size+n > budget {
			chunks = append(chunks, cur)
			cur, size = syncChunk{}, 0
		}
		put()
		size += n
		return nil
	}
	for _, pod := range pods {
		if err := add(pod, "pod", pod.GetId(), func() { cur.pods = append(cur.pods, pod) }); err != nil {
			return nil, err
		}
	}
	for _, ctr := range ctrs {
		if err := add(ctr, "container", ctr.GetId(), func() { cur.containers = append(cur.containers, ctr) }); err != nil {
			return nil, err
		}
	}
	return append(chunks, cur), nil
}

// synchronize sends the snapshot to the plugin, in as many messages as the
// ttrpc size limit requires, and returns the updates it asks for. takeover,
// if set, is attached to every message.
func (p *plugin) synchronize(ctx context.Context, pods []*api.PodSandbox, ctrs []*api.Container, takeover *api.Takeover) ([]*api.ContainerUpdate, error) {
	return p.syncRound(ctx, pods, ctrs, func(req *api.SynchronizeRequest, _ bool) { req.Takeover = takeover })
}

// synchronizeDelta sends a handover-capable plugin what changed since its
// last round: every message is marked delta, the last one lists removals.
func (p *plugin) synchronizeDelta(ctx context.Context, d *delta) ([]*api.ContainerUpdate, error) {
	return p.syncRound(ctx, d.pods, d.ctrs, func(req *api.SynchronizeRequest, last bool) {
		req.Delta = true
		if last {
			req.RemovedPods, req.RemovedContainers = d.removedPods, d.removedCtrs
		}
	})
}

// syncRound sends one synchronization round; decorate fills in the fields
// beyond the chunk's pods and containers.
func (p *plugin) syncRound(ctx context.Context, pods []*api.PodSandbox, ctrs []*api.Container, decorate func(req *api.SynchronizeRequest, last bool)) ([]*api.ContainerUpdate, error) {
	budget := syncMessageBudget
	for {
		updates, err := p.sendSync(ctx, pods, ctrs, decorate, budget)
		var tooLarge *oversizedErr
		if !errors.As(err, &tooLarge) || budget/2 < minSyncMessageBudget {
			return updates, err
		}
		// The peer refused a chunk we thought fit; retry with smaller chunks.
		// The plugin discards a partial snapshot when a new one starts.
		budget /= 2
		p.r.log.Debugf(ctx, "plugin %s: synchronize message too large, retrying with %d byte chunks", p.name(), budget)
	}
}

type oversizedErr struct{ err error }

func (e *oversizedErr) Error() string { return e.err.Error() }
func (e *oversizedErr) Unwrap() error { return e.err }

func (p *plugin) sendSync(ctx context.Context, pods []*api.PodSandbox, ctrs []*api.Container, decorate func(*api.SynchronizeRequest, bool), budget int) ([]*api.ContainerUpdate, error) {
	chunks, err := planSyncChunks(pods, ctrs, budget)
	if err != nil {
		return nil, fmt.Errorf("plugin %s: %w", p.name(), err)
	}
	p.r.log.Infof(ctx, "synchronizing plugin %s (%d pods, %d containers, %d messages)",
		p.name(), len(pods), len(ctrs), len(chunks))

	for i, c := range chunks {
		req := &api.SynchronizeRequest{
			Pods:       c.pods,
			Containers: c.containers,
			More:       i < len(chunks)-1,
		}
		decorate(req, !req.More)
		rctx, cancel := context.WithTimeout(ctx, getRequestTimeout())
		start := time.Now()
		rpl, err := p.svc.Synchronize(rctx, req)
		err = requestError(rctx, err)
		cancel()
		p.recordInvocation("Synchronize", start, err)
		if err != nil {
			if isOversized(err) {
				return nil, &oversizedErr{err: err}
			}
			return nil, fmt.Errorf("plugin %s: synchronize failed: %w", p.name(), err)
		}
		p.r.metrics.RecordPluginAdjustments(p.name(), "Synchronize", nil, len(rpl.GetUpdate()), 0)
		if req.More {
			if len(rpl.GetUpdate()) > 0 || !rpl.GetMore() {
				return nil, fmt.Errorf("plugin %s does not handle split synchronization", p.name())
			}
			continue
		}
		return rpl.GetUpdate(), nil
	}
	return nil, nil // not reached: there is always a last chunk
}

func isOversized(err error) bool {
	var o *ttrpc.OversizedMessageErr
	return errors.As(err, &o) || status.Code(err) == codes.ResourceExhausted
}
