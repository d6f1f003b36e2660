package adaptation

// Snapshots and deltas: what a takeover compares to send a successor only
// what changed since its first synchronization round.

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strings"

	"google.golang.org/protobuf/proto"

	"github.com/nri-handover/nri/api"
)

// snapshot is the runtime's state as SyncFn reports it, with each object's
// encoding so that a later state can be compared with it cheaply: the
// comparison runs while runtime operations wait, the encoding does not.
type snapshot struct {
	pods []*api.PodSandbox
	ctrs []*api.Container
	enc  map[string][]byte // kind + "/" + id -> deterministic encoding
	// seq is the adaptation's dispatch count just before the state was
	// taken: an event dispatched after it may be missing from the state.
	seq uint64
}

var deterministic = proto.MarshalOptions{Deterministic: true}

// snapshot asks the runtime for its pods and containers without synchronizing
// anyone: the callback only copies what it is handed.
func (g *registry) snapshot(ctx context.Context) (*snapshot, error) {
	var s *snapshot
	seq := g.r.dispatched.Load()
	err := g.runtimeState(ctx, func(pods []*api.PodSandbox, ctrs []*api.Container) {
		s = &snapshot{pods: clones(pods), ctrs: clones(ctrs), seq: seq}
	})
	return s, err
}

// encode records the encodings a later changesSince compares against.
func (s *snapshot) encode() {
	s.enc = make(map[string][]byte, len(s.pods)+len(s.ctrs))
	for _, p := range s.pods {
		s.enc["pod/"+p.GetId()], _ = deterministic.Marshal(p)
	}
	for _, c := range s.ctrs {
		s.enc["ctr/"+c.GetId()], _ = deterministic.Marshal(c)
	}
}

// changesSince reports what differs in the runtime's current state from
// base, copying only the objects that changed, and moves base to the current
// state: the next call reports what changed after this one.
func (g *registry) changesSince(ctx context.Context, base *snapshot) (*delta, error) {
	d := &delta{}
	seq := g.r.dispatched.Load()
	err := g.runtimeState(ctx, func(pods []*api.PodSandbox, ctrs []*api.Container) {
		base.seq = seq
		seen := make(map[string]bool, len(pods)+len(ctrs))
		d.pods = changed(base.enc, "pod/", pods, seen)
		d.ctrs = changed(base.enc, "ctr/", ctrs, seen)
		for key := range base.enc {
			if seen[key] {
				continue
			}
			delete(base.enc, key)
			if id, ok := strings.CutPrefix(key, "pod/"); ok {
				d.removedPods = append(d.removedPods, id)
			} else {
				d.removedCtrs = append(d.removedCtrs, strings.TrimPrefix(key, "ctr/"))
			}
		}
		slices.Sort(d.removedPods)
		slices.Sort(d.removedCtrs)
	})
	return d, err
}

// runtimeState calls SyncFn and hands the runtime's state to use, which must
// not keep references to it.
func (g *registry) runtimeState(ctx context.Context, use func([]*api.PodSandbox, []*api.Container)) error {
	called := false
	err := g.r.callSyncFn(ctx, func(_ context.Context, pods []*api.PodSandbox, ctrs []*api.Container) ([]*api.ContainerUpdate, error) {
		called = true
		use(pods, ctrs)
		return nil, nil
	})
	if err == nil && !called {
		err = fmt.Errorf("runtime returned no snapshot")
	}
	if err != nil {
		return fmt.Errorf("failed to take the runtime's snapshot: %w", err)
	}
	return nil
}

type identified interface {
	proto.Message
	GetId() string
}

// changed returns copies of the objects whose encoding differs from enc (or
// that enc lacks), records their new encodings in enc and marks every object
// seen.
func changed[T identified](enc map[string][]byte, kind string, now []T, seen map[string]bool) []T {
	var out []T
	for _, o := range now {
		key := kind + o.GetId()
		seen[key] = true
		b, err := deterministic.Marshal(o)
		if prev, ok := enc[key]; ok && err == nil && bytes.Equal(prev, b) {
			continue
		}
		enc[key] = b
		out = append(out, proto.Clone(o).(T))
	}
	return out
}

func clones[T proto.Message](in []T) []T {
	out := make([]T, len(in))
	for i, m := range in {
		out[i] = proto.Clone(m).(T)
	}
	return out
}

// delta is what changed between two states of the runtime.
type delta struct {
	pods        []*api.PodSandbox
	ctrs        []*api.Container
	removedPods []string
	removedCtrs []string
}

func (d *delta) empty() bool {
	return len(d.pods)+len(d.ctrs)+len(d.removedPods)+len(d.removedCtrs) == 0
}
