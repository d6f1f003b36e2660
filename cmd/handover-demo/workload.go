package main

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	testruntime "github.com/nri-handover/nri/test/runtime"
)

// ctrRecord is one container creation: when it was asked for, when the
// runtime answered, and which instance stamped it (empty: none did).
type ctrRecord struct {
	id         string
	start, end time.Time
	stamp      string // "version/instance" from the adjustment
	err        error
}

// conflict tells whether the creation failed because two instances adjusted
// the same container: the adaptation refuses conflicting annotations, so a
// container handled twice is one that could not be created.
func (c ctrRecord) conflict() bool {
	return c.err != nil && strings.Contains(c.err.Error(), "both tried to set")
}

// instance is the instance id part of the stamp.
func (c ctrRecord) instance() string {
	_, inst, _ := strings.Cut(c.stamp, "/")
	return inst
}

// workload creates pods with one container each at a fixed rate until
// stopped, one at a time, as a kubelet starting pods would, and retires each
// pod again so the node stays small.
type workload struct {
	rt       *testruntime.Runtime
	interval time.Duration
	// cycle is held for each pod's whole life; pause takes it to stop the
	// traffic between two pods.
	cycle sync.Mutex

	mu      sync.Mutex
	recs    []ctrRecord
	changed chan struct{}

	done, stopped chan struct{}
}

func startWorkload(rt *testruntime.Runtime, rate float64) *workload {
	w := &workload{rt: rt, interval: time.Duration(float64(time.Second) / rate),
		changed: make(chan struct{}, 1), done: make(chan struct{}), stopped: make(chan struct{})}
	go w.loop()
	return w
}

func (w *workload) loop() {
	defer close(w.stopped)
	ctx := context.Background()
	tick := time.NewTicker(w.interval)
	defer tick.Stop()
	for i := 0; ; i++ {
		select {
		case <-w.done:
			return
		case <-tick.C:
		}
		w.cycle.Lock()
		w.one(ctx, i)
		w.cycle.Unlock()
	}
}

// one runs pod i with one container through its life.
func (w *workload) one(ctx context.Context, i int) {
	pod, ctr := fmt.Sprintf("pod-%05d", i), fmt.Sprintf("ctr-%05d", i)
	if err := w.rt.RunPod(ctx, testruntime.NewPod(pod)); err != nil {
		w.add(ctrRecord{id: ctr, start: time.Now(), end: time.Now(), err: fmt.Errorf("run pod: %w", err)})
		return
	}
	rec := ctrRecord{id: ctr, start: time.Now()}
	adj, err := w.rt.CreateContainer(ctx, testruntime.NewContainer(pod, ctr))
	rec.end, rec.err = time.Now(), err
	if err == nil {
		rec.stamp = adj.GetAnnotations()[handledBy]
	}
	w.add(rec)
	_ = w.rt.StopContainer(ctx, ctr)
	_ = w.rt.RemoveContainer(ctx, ctr)
	_ = w.rt.StopPod(ctx, pod)
	_ = w.rt.RemovePod(ctx, pod)
}

// pause stops the traffic between two pods until resume.
func (w *workload) pause()  { w.cycle.Lock() }
func (w *workload) resume() { w.cycle.Unlock() }

func (w *workload) add(r ctrRecord) {
	w.mu.Lock()
	w.recs = append(w.recs, r)
	w.mu.Unlock()
	select {
	case w.changed <- struct{}{}:
	default:
	}
}

func (w *workload) records() []ctrRecord {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]ctrRecord(nil), w.recs...)
}

func (w *workload) count() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.recs)
}

// dwell lets traffic run for at least d and at least n more creations
// (bounded, so a stalled runtime cannot hang the demo).
func (w *workload) dwell(d time.Duration, n int) error {
	target := w.count() + n
	deadline := time.NewTimer(d + 10*time.Second)
	defer deadline.Stop()
	minimum := time.NewTimer(d)
	defer minimum.Stop()
	for waited := false; !waited || w.count() < target; {
		select {
		case <-minimum.C:
			waited = true
		case <-w.changed:
		case <-deadline.C:
			return fmt.Errorf("no container was created for %s", d+10*time.Second)
		}
	}
	return nil
}

func (w *workload) stop() {
	close(w.done)
	<-w.stopped
}
