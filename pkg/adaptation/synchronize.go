package adaptation

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/containerd/ttrpc"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"github.com/nri-handover/nri/api"
	"github.com/nri-handover/nri/pkg/adaptation/internal/ledger"
)

const (
	// ttrpcMessageLimit is ttrpc's fixed maximum message size.
	ttrpcMessageLimit = 4 << 20
	// syncMessageBudget leaves room for ttrpc's request envelope (service and
	// method names, timeout, metadata, the payload's length prefix).
	syncMessageBudget = ttrpcMessageLimit - 64<<10
	// minSyncMessageBudget is how far the budget shrinks when ttrpc still
	// finds a message too large.
	minSyncMessageBudget = 64 << 10
)

// Field numbers of SynchronizeRequest's repeated fields, for sizing entries.
const (
	fieldPods              = 1
	fieldContainers        = 2
	fieldRemovedPods       = 6
	fieldRemovedContainers = 7
)

// syncRound is what one synchronization round tells the plugin once its
// messages are reassembled. Its entries (pods, containers, then removed pod
// and container IDs) are numbered consecutively and sent in that order, so
// that a plugin sees a container's pod no later than the container.
type syncRound struct {
	pods        []*api.PodSandbox
	ctrs        []*api.Container
	removedPods []string
	removedCtrs []string
	delta       bool
	takeover    *api.Takeover // attached to every message
}

func (s *syncRound) len() int {
	return len(s.pods) + len(s.ctrs) + len(s.removedPods) + len(s.removedCtrs)
}

// sizes returns the encoded size of every entry as a repeated field element.
func (s *syncRound) sizes() []int {
	out := make([]int, 0, s.len())
	for _, p := range s.pods {
		out = append(out, protowire.SizeTag(fieldPods)+protowire.SizeBytes(proto.Size(p)))
	}
	for _, c := range s.ctrs {
		out = append(out, protowire.SizeTag(fieldContainers)+protowire.SizeBytes(proto.Size(c)))
	}
	for _, id := range s.removedPods {
		out = append(out, protowire.SizeTag(fieldRemovedPods)+protowire.SizeBytes(len(id)))
	}
	for _, id := range s.removedCtrs {
		out = append(out, protowire.SizeTag(fieldRemovedContainers)+protowire.SizeBytes(len(id)))
	}
	return out
}

// estimatedSizes guesses every entry's encoded size from the average of up
// to 16 pods and 16 containers.
func (s *syncRound) estimatedSizes() []int {
	out := make([]int, 0, s.len())
	out = appendN(out, sampled(s.pods), len(s.pods))
	out = appendN(out, sampled(s.ctrs), len(s.ctrs))
	for _, id := range s.removedPods {
		out = append(out, protowire.SizeTag(fieldRemovedPods)+protowire.SizeBytes(len(id)))
	}
	for _, id := range s.removedCtrs {
		out = append(out, protowire.SizeTag(fieldRemovedContainers)+protowire.SizeBytes(len(id)))
	}
	return out
}

// sampled is the average encoded size of up to the first 16 of all, as
// repeated field elements.
func sampled[T proto.Message](all []T) int {
	n := min(len(all), 16)
	if n == 0 {
		return 0
	}
	size := 0
	for _, m := range all[:n] {
		size += proto.Size(m) + 4 // tag and length
	}
	return (size + n - 1) / n
}

func sum(s []int) int {
	n := 0
	for _, v := range s {
		n += v
	}
	return n
}

func appendN(s []int, v, n int) []int {
	for range n {
		s = append(s, v)
	}
	return s
}

// describe names entry i for errors.
func (s *syncRound) describe(i int) string {
	if i < len(s.pods) {
		return "pod " + s.pods[i].GetId()
	}
	i -= len(s.pods)
	if i < len(s.ctrs) {
		return "container " + s.ctrs[i].GetId()
	}
	i -= len(s.ctrs)
	if i < len(s.removedPods) {
		return "removed pod " + s.removedPods[i]
	}
	return "removed container " + s.removedCtrs[i-len(s.removedPods)]
}

// request builds the message carrying entries [from, to).
func (s *syncRound) request(from, to int) *api.SynchronizeRequest {
	base := 0
	req := &api.SynchronizeRequest{
		More:     to < s.len(),
		Delta:    s.delta,
		Takeover: s.takeover,
	}
	req.Pods, base = window(s.pods, base, from, to), base+len(s.pods)
	req.Containers, base = window(s.ctrs, base, from, to), base+len(s.ctrs)
	req.RemovedPods, base = window(s.removedPods, base, from, to), base+len(s.removedPods)
	req.RemovedContainers = window(s.removedCtrs, base, from, to)
	return req
}

// window returns the part of s, whose first entry is number base, that falls
// into [from, to); nil when none does.
func window[T any](s []T, base, from, to int) []T {
	lo := min(max(from-base, 0), len(s))
	hi := min(max(to-base, 0), len(s))
	if lo >= hi {
		return nil
	}
	return s[lo:hi]
}

// fixedSize is the encoded size of the fields every message of the round
// carries besides its entries.
func (s *syncRound) fixedSize() int {
	return proto.Size(&api.SynchronizeRequest{More: true, Delta: s.delta, Takeover: s.takeover})
}

// plan splits entries [from, len(sizes)) into consecutive messages whose
// entries add up to at most budget bytes, and returns where each message
// ends. There is always at least one message, possibly empty. An entry that
// alone exceeds the budget cannot be sent.
func (s *syncRound) plan(sizes []int, from, budget int) ([]int, error) {
	var (
		ends []int
		size int
	)
	for i := from; i < len(sizes); i++ {
		n := sizes[i]
		if n > budget {
			return nil, fmt.Errorf("%s is too large to synchronize (%d bytes, limit %d)", s.describe(i), n, budget)
		}
		if size+n > budget {
			ends = append(ends, i)
			size = 0
		}
		size += n
	}
	return append(ends, len(sizes)), nil
}

// synchronize sends the snapshot to the plugin, in as many messages as the
// ttrpc size limit requires, and returns the updates it asks for. takeover,
// if set, is attached to every message.
func (p *plugin) synchronize(ctx context.Context, pods []*api.PodSandbox, ctrs []*api.Container, takeover *api.Takeover) ([]*api.ContainerUpdate, error) {
	return p.syncRound(ctx, &syncRound{pods: pods, ctrs: ctrs, takeover: takeover})
}

// synchronizeDelta sends a handover-capable plugin what changed since its
// last round: every message is marked delta; removals are entries like the
// rest, after the pods and containers.
func (p *plugin) synchronizeDelta(ctx context.Context, d *ledger.Delta, takeover *api.Takeover) ([]*api.ContainerUpdate, error) {
	return p.syncRound(ctx, &syncRound{pods: d.Pods, ctrs: d.Ctrs,
		removedPods: d.RemovedPods, removedCtrs: d.RemovedCtrs, delta: true, takeover: takeover})
}

// syncRound sends one synchronization round. As upstream, the whole round
// has one deadline, the request timeout: the runtime may hold its operations
// for the round, so the round, not each message, is what must be bounded.
//
// A round that ttrpc takes in one message is sent in one, as upstream sends
// it: a plugin written before split synchronization works wherever it works
// with upstream. Sizing every entry exactly costs about a third of encoding
// it, so a round estimated within the budget is sent unsized. The estimate
// samples the first entries only and may be off by any factor either way,
// so a round it puts over the budget is sized exactly before anything is
// decided. Such a round is split only if its exact size is over ttrpc's
// limit (not the budget: upstream tries any round ttrpc may take), and then
// by exact sizes, every message full but the last. If ttrpc refuses a
// message as too large, the rest of the round, from that message on, is
// split: by exact sizes if the message was the whole round (the estimate was
// wrong, or the envelope did not fit), into ever smaller messages if it was
// planned by exact sizes. What the plugin already received stands.
func (s *syncRound) kind() string {
	if s.delta {
		return "delta"
	}
	return "full"
}

func (p *plugin) syncRound(ctx context.Context, round *syncRound) ([]*api.ContainerUpdate, error) {
	p.r.atFor(pointSyncRound, p)
	limit := getRequestTimeout()
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()

	var (
		sizes   []int // exact, once computed
		budget  = syncMessageBudget - round.fixedSize()
		ends    = []int{round.len()} // one message, as upstream sends it
		planned bool                 // ends are planned by exact sizes
		err     error
	)
	if sum(round.estimatedSizes()) > budget {
		sizes = round.sizes()
		// the round as one message: its entries and, More unset, the rest
		whole := proto.Size(&api.SynchronizeRequest{Delta: round.delta, Takeover: round.takeover}) + sum(sizes)
		if whole > ttrpcMessageLimit {
			if ends, err = round.plan(sizes, 0, budget); err != nil {
				return nil, fmt.Errorf("plugin %s: %w", p.name(), err)
			}
			planned = true
		}
	}
	p.r.log.Infof(ctx, "synchronizing plugin %s (%d pods, %d containers, %d removed, %d messages)", p.name(),
		len(round.pods), len(round.ctrs), len(round.removedPods)+len(round.removedCtrs), len(ends))

	from, begun := 0, time.Now()
	for len(ends) > 0 {
		req := round.request(from, ends[0])
		start := time.Now()
		rpl, err := p.svc.Synchronize(ctx, req)
		err = requestError(ctx, err)
		p.recordInvocation("Synchronize", start, err)
		var tooLarge *ttrpc.OversizedMessageErr
		if errors.As(err, &tooLarge) && (!planned || budget/2 >= minSyncMessageBudget) {
			if sizes == nil { // the estimate said it fits
				sizes = round.sizes()
			}
			if planned {
				budget /= 2
			}
			planned = true
			p.r.log.Debugf(ctx, "plugin %s: synchronize message of %d bytes too large, sending the rest in %d byte messages",
				p.name(), tooLarge.RejectedLength(), budget)
			if ends, err = round.plan(sizes, from, budget); err != nil {
				return nil, fmt.Errorf("plugin %s: %w", p.name(), err)
			}
			continue
		}
		switch {
		case err != nil && errors.Is(ctx.Err(), context.DeadlineExceeded):
			return nil, &timeoutError{request: "Synchronize", limit: limit, err: err} // the caller names the plugin
		case err != nil:
			return nil, fmt.Errorf("synchronize failed: %w", err)
		}
		p.r.metrics.RecordPluginAdjustments(p.name(), "Synchronize", nil, len(rpl.GetUpdate()), 0)
		if !req.More {
			// The end of a round on the runtime's own clock, for a takeover's
			// timeline read from the runtime's log alone.
			p.r.log.Infof(ctx, "plugin %s synchronized (%s round) in %s", p.qualifiedName(), round.kind(), time.Since(begun))
			return rpl.GetUpdate(), nil
		}
		if len(rpl.GetUpdate()) > 0 || !rpl.GetMore() {
			return nil, fmt.Errorf("plugin %s does not handle split synchronization", p.name())
		}
		from, ends = ends[0], ends[1:]
	}
	return nil, nil // not reached: the last message has More unset
}
