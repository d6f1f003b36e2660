// Command benchplugin is the benchmark plugin on our stub: it marks every
// container it creates with its instance and spends -sync-delay in a full
// Synchronize round, standing for a plugin's reconciliation. A delta round
// costs the same per object as the full round did (or the whole delay with
// -delta-cost full, a plugin that ignores SyncInfo.Delta). With -delta-cost
// none it takes no delta rounds (no SynchronizeRound: the runtime sends its
// one full round in the switch's hold).
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/nri-handover/nri/api"
	"github.com/nri-handover/nri/pkg/stub"
	"github.com/nri-handover/nri/test/bench/loadgen"
)

type benchPlugin struct {
	name, instance string
	delay, work    time.Duration
	deltaFull      bool
	emit           *loadgen.Emitter
	synced         func() // called after a full round

	mu   sync.Mutex
	full int // objects in the last full round
}

func (p *benchPlugin) SynchronizeRound(ctx context.Context, info *stub.SyncInfo, pods []*api.PodSandbox, ctrs []*api.Container) ([]*api.ContainerUpdate, error) {
	delta := info != nil && info.Delta
	n := len(pods) + len(ctrs)
	cost := p.delay
	p.mu.Lock()
	if delta {
		n += len(info.RemovedPods) + len(info.RemovedContainers)
		if !p.deltaFull {
			cost = loadgen.SyncCost(p.delay, n, p.full)
		}
	} else {
		p.full = n
	}
	p.mu.Unlock()

	p.emit.Emit(loadgen.PluginEvent{Ev: "sync", Objects: n, Delta: delta})
	if err := loadgen.Work(ctx, cost); err != nil {
		return nil, err
	}
	if !delta {
		p.emit.Emit(loadgen.PluginEvent{Ev: "synced", Objects: n})
		p.synced()
	}
	return nil, nil
}

func (p *benchPlugin) RoleChange(_ context.Context, req *api.RoleChangeRequest) error {
	if req.GetRole() == api.PluginRole_PLUGIN_ROLE_ACTIVE {
		p.emit.Emit(loadgen.PluginEvent{Ev: "active"})
	}
	return nil
}

func (p *benchPlugin) CreateContainer(_ context.Context, _ *api.PodSandbox, _ *api.Container) (*api.ContainerAdjustment, []*api.ContainerUpdate, error) {
	adj := &api.ContainerAdjustment{}
	adj.AddAnnotation(loadgen.MarkKey(p.name), p.instance)
	adj.AddEnv(loadgen.EnvKey(p.name), p.instance)
	return adj, nil, nil
}

func (p *benchPlugin) StartContainer(ctx context.Context, _ *api.PodSandbox, _ *api.Container) error {
	return loadgen.Work(ctx, p.work)
}

func (p *benchPlugin) Shutdown(context.Context) {
	p.emit.Emit(loadgen.PluginEvent{Ev: "shutdown"})
}

// fullRounds is the plugin without SynchronizeRound, so that the stub does
// not offer delta rounds: one full Synchronize per connection.
type fullRounds struct{ p *benchPlugin }

func (f fullRounds) Synchronize(ctx context.Context, pods []*api.PodSandbox, ctrs []*api.Container) ([]*api.ContainerUpdate, error) {
	return f.p.SynchronizeRound(ctx, nil, pods, ctrs)
}

func (f fullRounds) RoleChange(ctx context.Context, req *api.RoleChangeRequest) error {
	return f.p.RoleChange(ctx, req)
}

func (f fullRounds) CreateContainer(ctx context.Context, pod *api.PodSandbox, ctr *api.Container) (*api.ContainerAdjustment, []*api.ContainerUpdate, error) {
	return f.p.CreateContainer(ctx, pod, ctr)
}

func (f fullRounds) StartContainer(ctx context.Context, pod *api.PodSandbox, ctr *api.Container) error {
	return f.p.StartContainer(ctx, pod, ctr)
}

func (f fullRounds) Shutdown(ctx context.Context) { f.p.Shutdown(ctx) }

func main() {
	fs := flag.NewFlagSet("benchplugin", flag.ExitOnError)
	var (
		socket     = fs.String("socket", "", "NRI socket")
		name       = fs.String("name", "bench", "plugin name")
		idx        = fs.String("idx", "10", "plugin index")
		instance   = fs.String("instance", "ours", "instance id, also the mark's value")
		version    = fs.String("plugin-version", "v1", "plugin version")
		generation = fs.Uint64("generation", 0, "rollout generation")
		delay      = fs.Duration("sync-delay", 0, "time a full Synchronize takes")
		deltaCost  = fs.String("delta-cost", "proportional", "cost of a delta round: proportional, full, or none (no delta rounds)")
		work       = fs.Duration("work", 0, "time StartContainer takes")
		count      = fs.Int("count", 1, "plugins to run in this process")
	)
	_ = fs.Parse(os.Args[1:])

	emit := loadgen.NewEmitter(*instance)
	logger := stub.NewSlogLogger(slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})))
	err := loadgen.Serve(emit, *name, *idx, *count, func(name, idx string, synced func()) error {
		p := &benchPlugin{name: name, instance: *instance, delay: *delay, work: *work,
			deltaFull: *deltaCost == "full", emit: emit, synced: synced}
		var impl any = p
		if *deltaCost == "none" {
			impl = fullRounds{p}
		}
		st, err := stub.New(impl,
			stub.WithPluginName(name), stub.WithPluginIdx(idx), stub.WithSocketPath(*socket),
			stub.WithInstanceID(*instance), stub.WithPluginVersion(*version), stub.WithGeneration(*generation),
			stub.WithLogger(logger), stub.WithHandover(),
		)
		if err != nil {
			return err
		}
		return st.Run(context.Background())
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
