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
	delay          time.Duration
	emit           *loadgen.Emitter
}

func (p *benchPlugin) Synchronize(ctx context.Context, pods []*api.PodSandbox, ctrs []*api.Container) ([]*api.ContainerUpdate, error) {
	n := len(pods) + len(ctrs)
	p.emit.Emit(loadgen.PluginEvent{Ev: "sync", Objects: n})
	if err := sleep(ctx, loadgen.SyncCost(p.delay, n, n)); err != nil {
		return nil, err
	}
	p.emit.Emit(loadgen.PluginEvent{Ev: "synced", Objects: n})
	return nil, nil
}

func (p *benchPlugin) CreateContainer(_ context.Context, _ *api.PodSandbox, _ *api.Container) (*api.ContainerAdjustment, []*api.ContainerUpdate, error) {
	adj := &api.ContainerAdjustment{}
	adj.AddAnnotation(loadgen.MarkKey(p.name), p.instance)
	return adj, nil, nil
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
	)
	_ = fs.Parse(args)

	p := &benchPlugin{name: *name, instance: *instance, delay: *delay, emit: loadgen.NewEmitter(*instance)}
	st, err := stub.New(p, stub.WithPluginName(*name), stub.WithPluginIdx(*idx), stub.WithSocketPath(*socket))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	p.emit.Emit(loadgen.PluginEvent{Ev: "start"})
	if err := st.Run(context.Background()); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
