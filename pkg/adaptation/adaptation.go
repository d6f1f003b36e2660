// Package adaptation is the runtime side of NRI: a container runtime embeds an
// Adaptation to let plugins observe and adjust pods and containers. Its exported
// API follows containerd/nri v0.12.5 so that a runtime switches by changing
// import paths.
//
// Its parts, and where each decides:
//
//   - registry, slot: membership and slots; event dispatch reads
//     registry.active;
//   - the lifecycle (instanceState, moves): an instance's state in its
//     slot; registry.move alone writes slots and the dispatch list;
//   - admission (admissionRules, registry.decide): who may join, take over
//     and stay, one table run at registration (registry.place) and at the
//     switch (registry.swap); a workload group's newer-by-generation is its
//     newer row (groupKey);
//   - the join (joining): screen, admit, run under the gate (underGate) or
//     from the ledger (fromLedger; which: waysFromLedger), catch-up rounds,
//     then the switch (switchTo);
//   - the switch (switchover, made by registry.swap): the last round, the
//     role notices (tell), the activation (activate); a standby kept
//     (standbyTerm) and its reactivation (reactivation);
//   - loss (registry.serveNext): who serves a slot next when an instance
//     goes;
//   - the gate (syncGate, Adaptation.syncRound): BlockPluginSync, and the
//     one place SyncFn is called, which seeds the ledger;
//   - the hold (hold): a switch's turn at the dispatch;
//   - the ledger (internal/ledger): the runtime's state between SyncFn
//     calls, with cursors for delta rounds.
//
// Locks, always taken in this order, and none of them held while calling the
// runtime back, except the sync gate and the SyncFn turn, which exist for
// that:
//
//   - the sync gate (syncGate): runtime operations hold it shared through
//     BlockPluginSync; a round of syncRound holds it exclusively;
//   - the SyncFn turn (syncFnTurn): one call of the runtime's SyncFn at a
//     time, taken on the goroutine calling it; the runtime takes its own
//     locks inside SyncFn, after it;
//   - the hold (hold): a switch's or a reactivation's turn at the dispatch;
//     events queued after it wait, and its holder takes the next lock once
//     the events before it ended. A join under the gate takes it inside
//     SyncFn, so that no event passes between the state it was given and
//     its switch; no holder calls SyncFn;
//   - the Adaptation's mutex: held for the whole dispatch of one event and
//     for a switch, so an event reaches either the old instance or the new
//     one, never both or neither;
//   - the registry's mutex (registry): the slots and the plugin sets only,
//     so a plugin can be removed from anywhere, including mid-dispatch;
//   - the ledger's mutex (ledger.Ledger), a leaf.
//
// Every plugin connection is served by its own goroutines: a plugin that
// hangs in registration delays nobody. Every runtime-initiated disconnect goes
// through plugin.shutdown, which tells a plugin that opted into handover why
// before closing (plugin.tellsShutdown; upstream tells no plugin).
//
// hack/model/README.md states the design's rules; the Promela models beside
// it are checked by make model.
package adaptation

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"

	"github.com/containerd/ttrpc"
	"github.com/nri-handover/nri/api"
	"github.com/nri-handover/nri/pkg/adaptation/builtin"
	"github.com/nri-handover/nri/pkg/adaptation/internal/ledger"
)

const (
	// DefaultPluginPath is where pre-installed plugins are looked for.
	DefaultPluginPath = "/opt/nri/plugins"
	// DefaultSocketPath is where external plugins connect.
	DefaultSocketPath = api.DefaultSocketPath
	// DefaultPluginConfigPath holds configuration for pre-installed plugins.
	DefaultPluginConfigPath = "/etc/nri/conf.d"
)

// SyncFn is supplied by the runtime. It must call the SyncCB with a snapshot
// of its pods and containers, each object read under the runtime's own locks.
// It is never called twice at once, but it is called beside runtime
// operations for the first round of a takeover; docs/runtime-integration.md
// ("What SyncFn must tolerate") says when it is called and what it may block
// on.
type SyncFn func(context.Context, SyncCB) error

// SyncCB hands the runtime's snapshot to the plugin being synchronized. The
// updates the plugin asks for are applied by the adaptation through UpdateFn
// once the runtime's locks are released, so the returned slice is always
// empty; it stays in the signature for compatibility.
type SyncCB func(context.Context, []*PodSandbox, []*Container) ([]*ContainerUpdate, error)

// UpdateFn is supplied by the runtime to apply container updates requested by
// plugins outside of any runtime event. It returns the updates that failed.
type UpdateFn func(context.Context, []*ContainerUpdate) ([]*ContainerUpdate, error)

// ErrWasmDisabled is kept for API compatibility: this implementation never
// runs WASM plugins.
var ErrWasmDisabled = errors.New("WASM support is disabled (at build time)")

// Adaptation relays runtime events to NRI plugins and merges their answers.
// The embedded mutex serializes event dispatch with the commit of newly
// synchronized plugins; nothing holding it calls SyncFn or UpdateFn.
type Adaptation struct {
	sync.Mutex

	name       string
	version    string
	nriVersion string
	syncFn     SyncFn
	updateFn   UpdateFn

	pluginPath string
	configPath string
	socketPath string
	dontListen bool
	clientOpts []ttrpc.ClientOpts
	serverOpts []ttrpc.ServerOpt
	builtin    []*builtin.BuiltinPlugin
	metrics    Metrics
	log        Logger
	deprecated DeprecationRecorder

	// handover is set when the runtime offers api.FeatureHandover to plugins.
	handover bool
	// forwardEvictions is set by WithEvictionForwarding (evictions.go).
	forwardEvictions bool
	// fanOut is set by WithNotificationFanOut (fanout.go).
	fanOut bool

	syncGate *syncGate
	// syncFnTurn serializes calls of syncFn.
	syncFnTurn syncFnTurn
	reg        *registry
	// hook is WithScheduleHook's, called at each boundary of the handover
	// (schedule.go); nil outside tests.
	hook func(point string)
	// probe is the exploration's (explore_test.go): the schedule's
	// boundaries with the instance crossing them, and where a goroutine is
	// about to wait; nil outside tests.
	probe func(ctx context.Context, point string, p *plugin)
	// ledger is the adaptation's record of the runtime's state.
	ledger ledger.Ledger
	// hold pauses event dispatch for a switch.
	hold hold

	// lifecycle
	state    sync.Mutex // guards started/stopped against concurrent Start/Stop
	started  bool
	stopped  bool
	stopLog  sync.Once
	ctx      context.Context
	cancel   context.CancelFunc
	listener net.Listener
	wg       sync.WaitGroup // accept loop and per-connection handlers
}

// New creates an adaptation for the runtime called name at version. syncFn and
// updateFn are mandatory.
func New(name, version string, syncFn SyncFn, updateFn UpdateFn, opts ...Option) (*Adaptation, error) {
	if syncFn == nil {
		return nil, errors.New("failed to create NRI adaptation: nil SyncFn")
	}
	if updateFn == nil {
		return nil, errors.New("failed to create NRI adaptation: nil UpdateFn")
	}

	r := &Adaptation{
		name:       name,
		version:    version,
		nriVersion: nriVersion(),
		syncFn:     syncFn,
		updateFn:   updateFn,
		pluginPath: DefaultPluginPath,
		configPath: DefaultPluginConfigPath,
		socketPath: DefaultSocketPath,
		metrics:    noopMetrics{},
		log:        defaultLogger(),
		syncGate:   newSyncGate(),
		handover:   true,
	}
	r.reg = newRegistry(r)
	r.reg.policy.resolver = KubernetesResolver{}
	r.ctx, r.cancel = context.WithCancel(context.Background())

	for _, o := range opts {
		if err := o(r); err != nil {
			r.cancel()
			return nil, fmt.Errorf("failed to apply NRI adaptation option: %w", err)
		}
	}
	r.ledger.Kept = r.handover

	r.log.Infof(r.ctx, "NRI runtime interface created for %s %s (NRI %s)", name, version, r.nriVersion)
	return r, nil
}

// Start brings up builtin and pre-installed plugins, synchronizes them and
// then starts accepting external plugin connections.
func (r *Adaptation) Start() error {
	r.state.Lock()
	defer r.state.Unlock()
	if r.stopped {
		return errors.New("NRI adaptation already stopped")
	}
	if r.started {
		return errors.New("NRI adaptation already started")
	}
	r.started = true

	r.log.Infof(r.ctx, "NRI runtime interface starting up")

	if err := r.startPlugins(); err != nil {
		r.shutdownAll("runtime failed to start", false)
		return err
	}
	if err := r.startListener(); err != nil {
		r.shutdownAll("runtime failed to start", false)
		return err
	}
	return nil
}

// Stop stops accepting plugins and stops relaying events. It tells every
// connected plugin that opted into handover that the runtime is shutting down
// (each bounded in time) and closes it, and closes pre-installed and builtin
// plugins. An external plugin that did not opt in is left connected and told
// nothing, as upstream's Stop leaves it (keptOnStop).
//
// Runtimes call Stop holding locks that their SyncFn and UpdateFn take, so
// Stop never waits for a call into the runtime (see callRuntime): cancelling
// the adaptation's context comes first, before even waiting for a Start in
// progress, which may itself be calling the runtime back.
func (r *Adaptation) Stop() {
	// Said on the caller's goroutine before anything is cancelled, as
	// upstream does: the log write orders what the caller did before Stop
	// before the disconnects Stop causes, for the race detector too
	// (upstream's suite has an unguarded write in its event queue's Wait
	// that a plugin's onClose racing Stop's cancellation otherwise hits).
	r.stopLog.Do(func() { r.log.Infof(r.ctx, "NRI runtime interface shutting down") })
	r.cancel()
	r.state.Lock()
	defer r.state.Unlock()
	if r.stopped {
		return
	}
	r.stopped = true

	r.stopListener()
	r.shutdownAll("runtime is shutting down", true)
	r.wg.Wait()
}

// shutdownAll disconnects every plugin the registry knows of, in parallel,
// and waits until each one is closed. On Stop (keepLegacy) the plugins that
// keptOnStop are only taken out of event delivery.
func (r *Adaptation) shutdownAll(msg string, keepLegacy bool) {
	r.reg.close()
	var done []<-chan struct{}
	for _, p := range r.reg.tracked() {
		if keepLegacy && r.keptOnStop(p) {
			r.reg.remove(p)
			r.log.Infof(r.ctx, "plugin %s receives no more events; its connection is left open, as upstream leaves it", p.qualifiedName())
			continue
		}
		done = append(done, p.shutdown(api.ShutdownReason_SHUTDOWN_REASON_RUNTIME_SHUTDOWN, msg, nil))
	}
	for _, ch := range done {
		<-ch
	}
}

// keptOnStop tells whether Stop leaves p connected: an external plugin that
// did not opt into handover and receives events. Upstream v0.12.5's Stop
// (stopPlugins) only kills the processes it launched and forgets every
// plugin; an external plugin's connection stays open, its runtime service
// still served, and it is told nothing. Such a plugin sees the same here: no
// Shutdown, no close, no more events. Its connection's state lives on until
// the plugin hangs up, as upstream's does, because that connection is the
// reason for it; Stop does not wait for it. Two things differ, neither on the
// connection: an UpdateContainers it sends is answered with an error instead
// of reaching the runtime's UpdateFn (callRuntime: the runtime may already
// have torn down what UpdateFn uses), and a plugin still registering or
// synchronizing when Stop is called is closed (without a notice, as when its
// synchronization fails): finishing it would call the runtime's SyncFn, which
// Stop never waits for, and admit a plugin into a stopped adaptation.
func (r *Adaptation) keptOnStop(p *plugin) bool {
	if p.kind != kindExternal || !p.isRegistered() || p.handsOver() {
		return false
	}
	r.reg.mu.Lock()
	defer r.reg.mu.Unlock()
	return p.slot != nil && p.slot.active == p
}

// updateContainers forwards updates requested by a plugin to the runtime,
// and records in the ledger what the runtime applied: every update but
// those UpdateFn reported failed. Every UpdateFn call goes through here.
// Callers must not hold the adaptation's mutex.
func (r *Adaptation) updateContainers(ctx context.Context, updates []*ContainerUpdate) ([]*ContainerUpdate, error) {
	if len(updates) == 0 {
		return nil, nil
	}
	failed, err := r.callUpdateFn(ctx, r.ledger.UpdatingBegins(updates))
	switch {
	case err == nil:
		r.ledger.Applied(updates, failed)
		return failed, nil
	case !errors.Is(err, errStopped):
		// What the runtime applied is unknown: the next comparison
		// tells.
		r.ledger.Distrust()
	}
	r.ledger.UpdatingEnds(updates)
	return failed, err
}
