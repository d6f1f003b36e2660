package testruntime

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"

	"github.com/nri-handover/nri/api"
	"github.com/nri-handover/nri/pkg/adaptation"
)

// Runtime is an in-memory container runtime driving an NRI adaptation.
type Runtime struct {
	// opMu serializes operations so the record's order is the dispatch order.
	opMu sync.Mutex
	// mu guards the in-memory state and the record. It is never held while
	// calling into the adaptation: plugins may call back (UpdateContainers)
	// while an event is in flight.
	mu sync.Mutex

	// nriMu is containerd's internal/nri lock (WithContainerdLocking): held
	// around every call into the adaptation, Stop included, and taken by the
	// SyncFn and UpdateFn.
	nriMu sync.Mutex

	cfg      config
	nri      *adaptation.Adaptation
	stopOnce sync.Once

	syncCalls, syncReturns atomic.Int64 // SyncFn entered (before taking any lock) and returned
	joins                  *joins       // the plugins' joins (WaitSynchronized)

	pods        map[string]*api.PodSandbox
	stoppedPods map[string]bool
	ctrs        map[string]*api.Container

	seq         uint64
	record      []Event
	unsolicited []*api.ContainerUpdate
	evictions   []*api.ContainerEviction
	syncs       int
}

type config struct {
	name, version string
	dir           string
	ownsDir       bool
	socket        string
	pluginPath    string
	configPath    string
	noListen      bool
	extra         []adaptation.Option

	containerdLocking bool
	metrics           adaptation.Metrics // WithMetrics
}

// Option configures a Runtime.
type Option func(*config)

// WithName sets the runtime name and version reported to plugins.
func WithName(name, version string) Option {
	return func(c *config) { c.name, c.version = name, version }
}

// WithDir places the socket in dir instead of a fresh short temp directory.
func WithDir(dir string) Option {
	return func(c *config) { c.dir = dir }
}

// WithSocketPath overrides the socket path (default: <dir>/nri.sock).
func WithSocketPath(path string) Option {
	return func(c *config) { c.socket = path }
}

// WithPluginPath enables pre-installed plugins from dir.
func WithPluginPath(dir string) Option {
	return func(c *config) { c.pluginPath = dir }
}

// WithPluginConfigPath sets the drop-in directory for pre-installed plugins.
func WithPluginConfigPath(dir string) Option {
	return func(c *config) { c.configPath = dir }
}

// WithoutListener disables external connections.
func WithoutListener() Option {
	return func(c *config) { c.noListen = true }
}

// WithContainerdLocking gives the runtime containerd's locking shape. Its
// internal/nri holds one mutex around every call into the adaptation, Stop
// included, and takes the same mutex inside its SyncFn (for the whole
// synchronization, the SyncCB included) and its UpdateFn; its container exit
// path (NotifyContainerExit) relays StopContainer under that mutex but without
// BlockPluginSync. Operations here hold BlockPluginSync, then the mutex.
func WithContainerdLocking() Option {
	return func(c *config) { c.containerdLocking = true }
}

// WithAdaptationOptions passes extra options to adaptation.New.
func WithAdaptationOptions(opts ...adaptation.Option) Option {
	return func(c *config) { c.extra = append(c.extra, opts...) }
}

// New creates a runtime and its adaptation; Start starts the adaptation.
func New(opts ...Option) (*Runtime, error) {
	r := &Runtime{
		cfg:         config{name: "test-runtime", version: "0.0.1"},
		pods:        map[string]*api.PodSandbox{},
		stoppedPods: map[string]bool{},
		ctrs:        map[string]*api.Container{},
		joins:       newJoins(),
	}
	for _, o := range opts {
		o(&r.cfg)
	}
	r.joins.next = r.cfg.metrics
	if r.cfg.dir == "" {
		// Unix socket paths must stay below 108 bytes: use a short /tmp path
		// rather than the (possibly long) test temp directory.
		dir, err := os.MkdirTemp("/tmp", "nrirt")
		if err != nil {
			return nil, fmt.Errorf("create runtime dir: %w", err)
		}
		r.cfg.dir, r.cfg.ownsDir = dir, true
	}
	if r.cfg.socket == "" {
		r.cfg.socket = filepath.Join(r.cfg.dir, "nri.sock")
	}

	aopts := []adaptation.Option{adaptation.WithSocketPath(r.cfg.socket), adaptation.WithMetrics(r.joins)}
	// Never pick up plugins from the host's default directories.
	pluginPath := r.cfg.pluginPath
	if pluginPath == "" {
		pluginPath = filepath.Join(r.cfg.dir, "no-plugins")
	}
	aopts = append(aopts, adaptation.WithPluginPath(pluginPath))
	configPath := r.cfg.configPath
	if configPath == "" {
		configPath = filepath.Join(r.cfg.dir, "no-conf")
	}
	aopts = append(aopts, adaptation.WithPluginConfigPath(configPath))
	if r.cfg.noListen {
		aopts = append(aopts, adaptation.WithDisabledExternalConnections())
	}
	aopts = append(aopts, r.cfg.extra...)

	nri, err := adaptation.New(r.cfg.name, r.cfg.version, r.syncPlugin, r.updateFromPlugin, aopts...)
	if err != nil {
		r.cleanup()
		return nil, fmt.Errorf("create adaptation: %w", err)
	}
	r.nri = nri
	return r, nil
}

// Start starts the adaptation: pre-installed plugins are launched and
// synchronized, and the socket starts accepting plugins.
func (r *Runtime) Start() error {
	if err := r.nri.Start(); err != nil {
		return fmt.Errorf("start adaptation: %w", err)
	}
	return nil
}

// Stop stops the adaptation and removes the runtime's temp directory. Only
// the first call does anything. With containerd locking it holds the NRI
// lock meanwhile, as containerd does.
func (r *Runtime) Stop() {
	defer r.LockNRI()()
	r.StopLocked()
}

// LockNRI takes the runtime's NRI lock (WithContainerdLocking; otherwise it
// does nothing) and returns its release: a test holds it where containerd
// holds it, e.g. around StopLocked.
func (r *Runtime) LockNRI() (unlock func()) {
	if !r.cfg.containerdLocking {
		return func() {}
	}
	r.nriMu.Lock()
	return r.nriMu.Unlock
}

// StopLocked is Stop without taking the NRI lock, for a caller holding it
// (LockNRI), as containerd's Stop does.
func (r *Runtime) StopLocked() {
	r.stopOnce.Do(func() {
		r.nri.Stop()
		r.cleanup()
	})
}

func (r *Runtime) cleanup() {
	if r.cfg.ownsDir {
		_ = os.RemoveAll(r.cfg.dir)
	}
}

// SyncFnCalls reports how often the adaptation called the SyncFn and how
// many of those calls returned; entered counts a call before it takes any
// lock, so a call blocked on the NRI lock counts as entered.
func (r *Runtime) SyncFnCalls() (entered, returned int) {
	return int(r.syncCalls.Load()), int(r.syncReturns.Load())
}

// Adaptation exposes the underlying adaptation.
func (r *Runtime) Adaptation() *adaptation.Adaptation { return r.nri }

// SocketPath is where external plugins connect.
func (r *Runtime) SocketPath() string { return r.cfg.socket }

// Dir is the runtime's directory (holds the socket).
func (r *Runtime) Dir() string { return r.cfg.dir }

// syncPlugin is the adaptation's SyncFn: it hands the plugin a snapshot of
// the state and applies the updates the plugin asked for.
func (r *Runtime) syncPlugin(ctx context.Context, cb adaptation.SyncCB) error {
	r.syncCalls.Add(1)
	defer r.syncReturns.Add(1)
	defer r.LockNRI()()
	pods, ctrs := r.Snapshot()
	updates, err := cb(ctx, pods, ctrs)
	if err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.syncs++
	r.applyUpdatesLocked(updates)
	return nil
}

// updateFromPlugin is the adaptation's UpdateFn for unsolicited updates.
func (r *Runtime) updateFromPlugin(_ context.Context, updates []*api.ContainerUpdate) ([]*api.ContainerUpdate, error) {
	defer r.LockNRI()()
	r.mu.Lock()
	defer r.mu.Unlock()
	failed := r.applyUpdatesLocked(updates)
	for _, u := range updates {
		r.unsolicited = append(r.unsolicited, cloneUpdate(u))
	}
	return failed, nil
}
