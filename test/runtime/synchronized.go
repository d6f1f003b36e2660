package testruntime

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/nri-handover/nri/pkg/adaptation"
)

// Instance names one instance of a plugin: its indexed name (NN-name) and
// the instance id it registered with ("" if none). A stub.HandoverStub is
// one.
type Instance interface {
	Name() string
	InstanceID() string
}

// WaitSynchronized returns once the instance of plugin has joined: the
// runtime routes the plugin's events to it, and the updates its Synchronize
// asked for went through this runtime's UpdateFn, so a test can check what
// its synchronization reconciled. Neither the plugin's readiness (it turns
// ready before the updates are applied) nor Barrier tells that for a plugin
// with handover. It returns ctx's error if ctx ends first. An instance that
// joined before, under the same name and instance id, counts: give each
// instance an id of its own (as the pods of a DaemonSet have).
//
// A Metrics of the test's own (WithAdaptationOptions(adaptation.WithMetrics))
// replaces the one this relies on: WaitSynchronized then waits until ctx
// ends.
func (r *Runtime) WaitSynchronized(ctx context.Context, plugin Instance) error {
	key := joinKey{plugin.Name(), plugin.InstanceID()}
	for {
		c, done := r.joins.wait(key)
		if done {
			return nil
		}
		select {
		case <-c:
		case <-ctx.Done():
			return fmt.Errorf("waiting for plugin %s instance %q to be synchronized: %w", key.name, key.instance, ctx.Err())
		}
	}
}

type joinKey struct{ name, instance string }

// joins records the plugins' joins as the adaptation reports them
// (adaptation.SynchronizedMetrics).
type joins struct {
	mu      sync.Mutex
	done    map[joinKey]int
	changed chan struct{} // closed and replaced at each join
}

var _ adaptation.SynchronizedMetrics = (*joins)(nil)

func newJoins() *joins {
	return &joins{done: map[joinKey]int{}, changed: make(chan struct{})}
}

func (j *joins) RecordSynchronized(plugin, instance string, _ int) {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.done[joinKey{plugin, instance}]++
	close(j.changed)
	j.changed = make(chan struct{})
}

// wait tells whether key joined, and else what closes at the next join.
func (j *joins) wait(key joinKey) (<-chan struct{}, bool) {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.changed, j.done[key] > 0
}

// The rest of adaptation.Metrics: nothing to record.
func (*joins) RecordPluginInvocation(string, string, error)                                      {}
func (*joins) RecordPluginLatency(string, string, time.Duration)                                 {}
func (*joins) RecordPluginAdjustments(string, string, *adaptation.ContainerAdjustment, int, int) {}
func (*joins) UpdatePluginCount(int)                                                             {}
