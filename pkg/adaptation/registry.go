package adaptation

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/nri-handover/nri/api"
)

// errStopped refuses plugins once the runtime is stopping.
var errStopped = errors.New("NRI runtime is stopping")

// registry is the single owner of plugin bookkeeping: which plugins exist,
// how one joins (synchronization and commit), which ones receive events and
// in what order. Event dispatch only ever reads active().
type registry struct {
	r *Adaptation

	mu      sync.Mutex
	plugins []*plugin            // active, in dispatch order; replaced, never modified in place
	all     map[*plugin]struct{} // every plugin from creation until torn down
	closed  bool
	seq     uint64

	// Handover state (handover.go): instances grouped by plugin name.
	slots  map[string]*slot
	policy handoverPolicy
}

func newRegistry(r *Adaptation) *registry {
	return &registry{r: r, all: map[*plugin]struct{}{}, slots: map[string]*slot{}}
}

// track registers a new plugin object so that Stop can find it, and gives it
// a sequence number (replaced by stamp when it registers).
func (g *registry) track(p *plugin) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed {
		return errStopped
	}
	g.seq++
	p.seq = g.seq
	g.all[p] = struct{}{}
	return nil
}

// stamp records the order of successful registrations, the last tie-breaker
// of the dispatch order.
func (g *registry) stamp(p *plugin) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.seq++
	p.seq = g.seq
}

// untrack forgets a torn-down plugin.
func (g *registry) untrack(p *plugin) {
	g.mu.Lock()
	defer g.mu.Unlock()
	delete(g.all, p)
}

// tracked lists every plugin not yet torn down.
func (g *registry) tracked() []*plugin {
	g.mu.Lock()
	defer g.mu.Unlock()
	ps := make([]*plugin, 0, len(g.all))
	for p := range g.all {
		ps = append(ps, p)
	}
	return ps
}

// close refuses any further plugin.
func (g *registry) close() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.closed = true
}

// active returns the plugins receiving events, in dispatch order. The slice
// must not be modified. Event dispatch calls it under the adaptation's lock.
func (g *registry) active() []*plugin {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.plugins
}

// remove takes a plugin out of event delivery. It is called when a plugin is
// dropped or its connection closes, possibly during dispatch, so it only
// takes the registry's own lock.
func (g *registry) remove(p *plugin) {
	g.mu.Lock()
	if g.r.handover {
		if standby := g.vacate(p); standby != nil {
			ticket := g.r.syncGate.enqueue()
			g.r.wg.Add(1)
			go func() {
				defer g.r.wg.Done()
				g.reactivate(standby, p, ticket)
			}()
		}
	}
	i := slices.Index(g.plugins, p)
	if i < 0 {
		g.mu.Unlock()
		return
	}
	g.plugins = slices.Delete(slices.Clone(g.plugins), i, i+1)
	n := len(g.plugins)
	g.mu.Unlock()

	g.r.metrics.UpdatePluginCount(n)
	g.r.log.Infof(g.r.ctx, "plugin %s removed", p.qualifiedName())
}

// screen is admission control at registration time: it may refuse a plugin
// before it is configured and synchronized for nothing. The error becomes
// RegisterPlugin's reply and the plugin is disconnected with
// SHUTDOWN_REASON_REGISTRATION_REJECTED. Without handover every plugin that
// registered with a valid name and index is accepted.
func (g *registry) screen(p *plugin) error {
	if g.r.handover {
		return g.screenHandover(p)
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed {
		return errStopped
	}
	return nil
}

// mayUpdate decides whether a plugin may send unsolicited container updates.
func (g *registry) mayUpdate(p *plugin) error {
	p.mu.Lock()
	closing, registered := p.closing, p.registered
	p.mu.Unlock()
	switch {
	case closing:
		return fmt.Errorf("plugin %s is disconnecting", p.name())
	case !registered && p.kind != kindBuiltin:
		return errors.New("plugin is not registered")
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.mayUpdateHandover(p)
}

// admit brings a registered and configured plugin into event delivery: with
// runtime operations blocked (the sync gate), it synchronizes the plugin
// with the runtime's snapshot and commits it into the active set under the
// adaptation's lock, so every event is either in the snapshot or delivered to
// the plugin. Updates the plugin asks for are applied once all locks are
// released. On failure the plugin has been disconnected.
func (g *registry) admit(ctx context.Context, p *plugin) error {
	r := g.r
	if r.handover {
		return g.admitHandover(ctx, p)
	}
	if err := r.syncGate.Lock(ctx); err != nil {
		p.shutdown(api.ShutdownReason_SHUTDOWN_REASON_RUNTIME_SHUTDOWN, "runtime is shutting down", nil)
		return fmt.Errorf("plugin %s not synchronized: %w", p.name(), err)
	}
	gateHeld := true
	defer func() {
		if gateHeld {
			r.syncGate.Unlock()
		}
	}()

	updates, err := g.synchronize(ctx, p)
	if err != nil {
		p.shutdown(g.syncFailureReason(err), err.Error(), nil)
		return err
	}

	r.Lock()
	err = g.commit(p)
	r.Unlock()
	r.syncGate.Unlock()
	gateHeld = false

	if err != nil {
		p.shutdown(api.ShutdownReason_SHUTDOWN_REASON_RUNTIME_SHUTDOWN, err.Error(), nil)
		return err
	}
	r.log.Infof(ctx, "plugin %s connected and synchronized", p.qualifiedName())

	if len(updates) > 0 {
		failed, err := r.updateContainers(ctx, updates)
		if err != nil || len(failed) > 0 {
			r.log.Warnf(ctx, "runtime failed to apply %d of %d updates from plugin %s synchronization: %v",
				len(failed), len(updates), p.name(), err)
		}
	}
	return nil
}

// synchronize runs the runtime's SyncFn to synchronize one plugin and
// returns the updates it asked for. The caller holds the sync gate.
func (g *registry) synchronize(ctx context.Context, p *plugin) ([]*ContainerUpdate, error) {
	var (
		called  bool
		updates []*ContainerUpdate
		syncErr error
	)
	err := g.r.callSyncFn(ctx, func(ctx context.Context, pods []*PodSandbox, ctrs []*Container) ([]*ContainerUpdate, error) {
		if called {
			return nil, fmt.Errorf("plugin %s is already synchronized", p.name())
		}
		called = true
		updates, syncErr = p.synchronize(ctx, pods, ctrs, nil)
		return nil, syncErr
	})
	switch {
	case syncErr != nil: // reported even if the runtime swallowed it
		return nil, syncErr
	case err != nil:
		return nil, fmt.Errorf("plugin %s: runtime failed to synchronize: %w", p.name(), err)
	case !called:
		return nil, fmt.Errorf("plugin %s: runtime returned no snapshot", p.name())
	}
	return updates, nil
}

// commit adds a synchronized plugin to the active set. The caller holds the
// adaptation's lock.
func (g *registry) commit(p *plugin) error {
	g.mu.Lock()
	switch {
	case g.closed:
		g.mu.Unlock()
		return errStopped
	case p.isClosed():
		g.mu.Unlock()
		return fmt.Errorf("plugin %s closed during synchronization", p.name())
	}
	plugins := append(slices.Clone(g.plugins), p)
	slices.SortStableFunc(plugins, dispatchOrder)
	g.plugins = plugins
	g.mu.Unlock()

	g.r.metrics.UpdatePluginCount(len(plugins))
	g.logOrder(plugins)
	return nil
}

func (g *registry) logOrder(plugins []*plugin) {
	g.r.log.Infof(g.r.ctx, "plugin invocation order:")
	for i, p := range plugins {
		extra := ""
		if p.isValidator() {
			extra = " (validator)"
		}
		g.r.log.Infof(g.r.ctx, "  #%d: %s%s", i+1, p.qualifiedName(), extra)
	}
}

// dispatchOrder orders plugins by index, then name, then creation: the order
// is total and the same on every run with the same plugins.
func dispatchOrder(a, b *plugin) int {
	return cmp.Or(
		cmp.Compare(a.idx, b.idx),
		cmp.Compare(a.base, b.base),
		cmp.Compare(a.seq, b.seq),
	)
}
