package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/containerd/nri/pkg/api"
	"github.com/containerd/nri/pkg/stub"

	"github.com/nri-handover/nri/test/bench/loadgen"
)

// benchPlugin marks every container it creates and spends -sync-delay in
// Synchronize, standing for a plugin's reconciliation.
type benchPlugin struct {
	name, instance string
	delay, work    time.Duration
	emit           *loadgen.Emitter
	synced         func() // called after Synchronize
}

func (p *benchPlugin) Synchronize(ctx context.Context, pods []*api.PodSandbox, ctrs []*api.Container) ([]*api.ContainerUpdate, error) {
	n := len(pods) + len(ctrs)
	p.emit.Emit(loadgen.PluginEvent{Ev: "sync", Objects: n})
	if err := loadgen.Work(ctx, loadgen.SyncCost(p.delay, n, n)); err != nil {
		return nil, err
	}
	p.emit.Emit(loadgen.PluginEvent{Ev: "synced", Objects: n})
	p.synced()
	return nil, nil
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

func runPlugin(args []string) {
	fs := flag.NewFlagSet("plugin", flag.ExitOnError)
	var (
		socket   = fs.String("socket", "", "NRI socket")
		name     = fs.String("name", "bench", "plugin name")
		idx      = fs.String("idx", "10", "plugin index")
		instance = fs.String("instance", "upstream", "instance, set as the mark's value")
		delay    = fs.Duration("sync-delay", 0, "time a full Synchronize takes")
		_        = fs.String("plugin-version", "", "ignored: upstream has no plugin version")
		_        = fs.Uint64("generation", 0, "ignored: upstream has no generation")
		work     = fs.Duration("work", 0, "time StartContainer takes")
		count    = fs.Int("count", 1, "plugins to run in this process")
	)
	_ = fs.Parse(args)

	emit := loadgen.NewEmitter(*instance)
	err := loadgen.Serve(emit, *name, *idx, *count, func(name, idx string, synced func()) error {
		p := &benchPlugin{name: name, instance: *instance, delay: *delay, work: *work, emit: emit, synced: synced}
		st, err := stub.New(p, stub.WithPluginName(name), stub.WithPluginIdx(idx), stub.WithSocketPath(*socket))
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
