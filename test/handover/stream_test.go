package handover_test

import (
	"context"
	"fmt"
	"sync"
	"time"

	testruntime "github.com/nri-handover/nri/test/runtime"
)

// stream drives a steady flow of pod and container events through the test
// runtime from its own goroutine: pods are started (run, create, start)
// while the pod started window pods earlier is torn down (update, stop and
// remove its container, stop and remove the pod), so the runtime's state
// keeps changing and a successor's delta round has something to carry.
type stream struct {
	rt     *testruntime.Runtime
	prefix string
	window int
	max    int           // operations at most: the run is bounded
	pace   time.Duration // at most one operation per pace (0: unpaced)

	stopC chan struct{}
	doneC chan struct{}

	mu  sync.Mutex
	ops int
	err error
}

// startStream starts the flow; stop it with stop (also at cleanup).
func startStream(rt *testruntime.Runtime, prefix string, max int) *stream {
	s := &stream{
		rt: rt, prefix: prefix, window: 6, max: max, pace: time.Millisecond,
		stopC: make(chan struct{}), doneC: make(chan struct{}),
	}
	go s.run()
	return s
}

func (s *stream) run() {
	defer close(s.doneC)
	var tick <-chan time.Time
	if s.pace > 0 {
		t := time.NewTicker(s.pace)
		defer t.Stop()
		tick = t.C
	}
	ctx := context.Background()
	for k := 0; ; k++ {
		pod, ctr := fmt.Sprintf("%s-pod%d", s.prefix, k), fmt.Sprintf("%s-ctr%d", s.prefix, k)
		ops := []func() error{
			func() error { return s.rt.RunPod(ctx, testruntime.NewPod(pod)) },
			func() error { _, err := s.rt.CreateContainer(ctx, testruntime.NewContainer(pod, ctr)); return err },
			func() error { return s.rt.StartContainer(ctx, ctr) },
		}
		if old := k - s.window; old >= 0 {
			opod, octr := fmt.Sprintf("%s-pod%d", s.prefix, old), fmt.Sprintf("%s-ctr%d", s.prefix, old)
			ops = append(ops,
				func() error { return s.rt.UpdateContainer(ctx, octr, testruntime.MemoryResources(int64(64+k)<<20)) },
				func() error { return s.rt.StopContainer(ctx, octr) },
				func() error { return s.rt.RemoveContainer(ctx, octr) },
				func() error { return s.rt.StopPod(ctx, opod) },
				func() error { return s.rt.RemovePod(ctx, opod) },
			)
		}
		for _, op := range ops {
			select {
			case <-s.stopC:
				return
			default:
			}
			if tick != nil {
				select {
				case <-tick:
				case <-s.stopC:
					return
				}
			}
			err := op()
			s.mu.Lock()
			s.ops++
			if err != nil && s.err == nil {
				s.err = err
			}
			done := s.err != nil || s.ops >= s.max
			s.mu.Unlock()
			if done {
				return
			}
		}
	}
}

// stop ends the flow and waits for the operation in progress; it returns
// the first error an operation returned.
func (s *stream) stop() error {
	select {
	case <-s.stopC:
	default:
		close(s.stopC)
	}
	<-s.doneC
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

// running tells whether the flow is still going (not stopped, not at max,
// no error).
func (s *stream) running() bool {
	select {
	case <-s.doneC:
		return false
	default:
		return true
	}
}

func (s *stream) Ops() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.ops
}
