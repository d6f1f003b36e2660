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
// A Metrics of the test's own goes through WithMetrics, which keeps this
// working; one given with WithAdaptationOptions(adaptation.WithMetrics)
// replaces the runtime's, and WaitSynchronized then waits until ctx ends.
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

// WithMetrics gives the adaptation m as its Metrics (and HandoverMetrics
// and SynchronizedMetrics, where m implements them) beside the runtime's
// own record of joins, which WaitSynchronized reads.
func WithMetrics(m adaptation.Metrics) Option {
	return func(c *config) { c.metrics = m }
}

// joins records the plugins' joins as the adaptation reports them
// (adaptation.SynchronizedMetrics), and passes every measurement on to the
// test's Metrics, if any.
type joins struct {
	next adaptation.Metrics // the test's, or nil

	mu      sync.Mutex
	done    map[joinKey]int
	changed chan struct{} // closed and replaced at each join
}

var (
	_ adaptation.SynchronizedMetrics = (*joins)(nil)
	_ adaptation.HandoverMetrics     = (*joins)(nil)
)

func newJoins() *joins {
	return &joins{done: map[joinKey]int{}, changed: make(chan struct{})}
}

// RecordSynchronized passes the join on first, so that the test's Metrics
// has it when WaitSynchronized returns.
func (j *joins) RecordSynchronized(plugin, instance string, updates int) {
	if m, ok := j.next.(adaptation.SynchronizedMetrics); ok {
		m.RecordSynchronized(plugin, instance, updates)
	}
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

// The rest is the test's.

func (j *joins) RecordPluginInvocation(plugin, op string, err error) {
	if j.next != nil {
		j.next.RecordPluginInvocation(plugin, op, err)
	}
}

func (j *joins) RecordPluginLatency(plugin, op string, d time.Duration) {
	if j.next != nil {
		j.next.RecordPluginLatency(plugin, op, d)
	}
}

func (j *joins) RecordPluginAdjustments(plugin, op string, adj *adaptation.ContainerAdjustment, updates, evicts int) {
	if j.next != nil {
		j.next.RecordPluginAdjustments(plugin, op, adj, updates, evicts)
	}
}

func (j *joins) UpdatePluginCount(n int) {
	if j.next != nil {
		j.next.UpdatePluginCount(n)
	}
}

func (j *joins) RecordHandover(plugin, outcome string, duration, eventWait time.Duration) {
	if m, ok := j.next.(adaptation.HandoverMetrics); ok {
		m.RecordHandover(plugin, outcome, duration, eventWait)
	}
}
