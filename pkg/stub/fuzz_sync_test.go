package stub

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/nri-handover/nri/api"
)

// roundRecorder records the rounds the stub hands to the plugin.
type roundRecorder struct {
	rounds []syncRound
}

type syncRound struct {
	info *SyncInfo
	pods []string
	ctrs []string
}

// RunPodSandbox makes it a plugin: the stub wants one event handler.
func (r *roundRecorder) RunPodSandbox(context.Context, *api.PodSandbox) error { return nil }

func (r *roundRecorder) SynchronizeRound(_ context.Context, info *SyncInfo, pods []*api.PodSandbox, ctrs []*api.Container) ([]*api.ContainerUpdate, error) {
	round := syncRound{info: info}
	for _, p := range pods {
		round.pods = append(round.pods, p.GetId())
	}
	for _, c := range ctrs {
		round.ctrs = append(round.ctrs, c.GetId())
	}
	r.rounds = append(r.rounds, round)
	return nil, nil
}

// FuzzSyncReassembly sends the stub arbitrary sequences of Synchronize
// messages, each byte one message: bits 0-1 its pods, 2-3 its containers,
// 4 more, 5 delta, 6 removals, 7 a takeover. The plugin must get each round
// (the messages up to one without more) whole: every object of its messages
// exactly once and in order, with the round's removals, delta flag and first
// takeover; intermediate messages are answered with More and no updates.
func FuzzSyncReassembly(f *testing.F) {
	f.Add([]byte{0x00})
	f.Add([]byte{0x1f, 0x1f, 0x0f})
	f.Add([]byte{0x95, 0x3a, 0x5f, 0x30, 0xff, 0x7f})
	f.Add([]byte{0x15, 0x15, 0x15, 0x15, 0x15, 0x15, 0x15, 0x15, 0x05, 0x25})
	f.Add([]byte{0x10, 0x10, 0x10})

	// One stub for all inputs (a fuzzing worker runs them one at a time),
	// a fresh session and record for each.
	rec := &roundRecorder{}
	st, err := New(rec, WithPluginName("fuzz"), WithPluginIdx("10"), quiet)
	if err != nil {
		f.Fatal(err)
	}
	s := st.(*stub)

	f.Fuzz(func(t *testing.T, msgs []byte) {
		rec.rounds = nil
		sess := &session{}
		s.cur = sess
		v := &service{s: s, sess: sess}

		var (
			want []syncRound
			cur  *syncRound
			objs int
		)
		for i, b := range msgs {
			req := &api.SynchronizeRequest{More: b&0x10 != 0, Delta: b&0x20 != 0}
			if cur == nil {
				cur = &syncRound{info: &SyncInfo{}}
			}
			for range b & 3 {
				id := fmt.Sprintf("pod%d", objs)
				objs++
				req.Pods = append(req.Pods, &api.PodSandbox{Id: id})
				cur.pods = append(cur.pods, id)
			}
			for range (b >> 2) & 3 {
				id := fmt.Sprintf("ctr%d", objs)
				objs++
				req.Containers = append(req.Containers, &api.Container{Id: id})
				cur.ctrs = append(cur.ctrs, id)
			}
			if b&0x40 != 0 {
				req.RemovedPods = []string{fmt.Sprintf("gone-pod%d", i)}
				req.RemovedContainers = []string{fmt.Sprintf("gone-ctr%d", i)}
				cur.info.RemovedPods = append(cur.info.RemovedPods, req.RemovedPods...)
				cur.info.RemovedContainers = append(cur.info.RemovedContainers, req.RemovedContainers...)
			}
			if b&0x80 != 0 {
				req.Takeover = &api.Takeover{PredecessorInstance: fmt.Sprintf("msg%d", i)}
				if cur.info.Takeover == nil {
					cur.info.Takeover = req.Takeover
				}
			}
			cur.info.Delta = cur.info.Delta || req.Delta

			rsp, err := v.Synchronize(context.Background(), req)
			if err != nil {
				t.Fatalf("message %d: %v", i, err)
			}
			if req.More {
				if !rsp.GetMore() || len(rsp.GetUpdate()) != 0 {
					t.Fatalf("message %d with more answered %v", i, rsp)
				}
				continue
			}
			want = append(want, *cur)
			cur = nil
		}

		if len(rec.rounds) != len(want) {
			t.Fatalf("plugin got %d rounds, want %d", len(rec.rounds), len(want))
		}
		for i, got := range rec.rounds {
			w := want[i]
			switch {
			case !slices.Equal(got.pods, w.pods), !slices.Equal(got.ctrs, w.ctrs):
				t.Fatalf("round %d: got pods %v containers %v, want %v %v", i, got.pods, got.ctrs, w.pods, w.ctrs)
			case got.info.Delta != w.info.Delta,
				!slices.Equal(got.info.RemovedPods, w.info.RemovedPods),
				!slices.Equal(got.info.RemovedContainers, w.info.RemovedContainers),
				got.info.Takeover.GetPredecessorInstance() != w.info.Takeover.GetPredecessorInstance():
				t.Fatalf("round %d: got %+v, want %+v", i, got.info, w.info)
			}
		}
		if cur != nil && sess.pending == nil && len(cur.pods)+len(cur.ctrs) > 0 {
			t.Fatal("an unfinished round's objects were dropped")
		}
	})
}
