// Command annotator is a minimal NRI plugin that is safe to roll out with
// maxSurge: it stamps every container it sees created with the version and
// instance that handled it, and relies on pkg/stub for the handover (identity
// from the downward API, readiness only once active, no restart loop when
// superseded).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/nri-handover/nri/api"
	"github.com/nri-handover/nri/pkg/stub"
)

// HandledBy is the annotation the plugin stamps on containers.
const HandledBy = "annotator.nri-handover.io/handled-by"

type plugin struct {
	stamp string
	log   *slog.Logger
}

// SynchronizeRound skips containers a predecessor already stamped: a
// successor learns from info that it takes over, so it need not redo them.
func (p *plugin) SynchronizeRound(ctx context.Context, info *stub.SyncInfo, pods []*api.PodSandbox, ctrs []*api.Container) ([]*api.ContainerUpdate, error) {
	stamped := 0
	for _, c := range ctrs {
		if c.GetAnnotations()[HandledBy] != "" {
			stamped++
		}
	}
	switch {
	case info != nil && info.Delta:
		p.log.Info("catch-up round", "changed", len(ctrs), "removed", len(info.RemovedContainers))
	case info != nil && info.Takeover != nil:
		p.log.Info("taking over", "from", info.Takeover.GetPredecessorVersion()+"/"+info.Takeover.GetPredecessorInstance(),
			"containers", len(ctrs), "already stamped", stamped)
	default:
		p.log.Info("synchronized", "pods", len(pods), "containers", len(ctrs))
	}
	return nil, nil
}

func (p *plugin) CreateContainer(_ context.Context, _ *api.PodSandbox, _ *api.Container) (*api.ContainerAdjustment, []*api.ContainerUpdate, error) {
	adj := &api.ContainerAdjustment{}
	adj.AddAnnotation(HandledBy, p.stamp)
	return adj, nil, nil
}

func main() {
	socket := flag.String("socket", api.DefaultSocketPath, "NRI socket")
	version := flag.String("version", "", "plugin version (default: the module version)")
	instance := flag.String("instance", "", "instance id (default: $"+stub.InstanceIDEnvVar+")")
	generation := flag.Uint64("generation", 0, "rollout generation (default: $"+stub.GenerationEnvVar+")")
	readyFile := flag.String("ready-file", "", "file that exists while this instance is the active one")
	flag.Parse()

	log := slog.New(slog.NewTextHandler(os.Stderr, nil))
	opts := []stub.Option{stub.WithPluginName("annotator"), stub.WithPluginIdx("50"), stub.WithSocketPath(*socket),
		stub.WithLogger(stub.NewSlogLogger(log)), stub.WithHandover()}
	if *version != "" {
		opts = append(opts, stub.WithPluginVersion(*version))
	}
	if *instance != "" {
		opts = append(opts, stub.WithInstanceID(*instance))
	}
	if *generation != 0 {
		opts = append(opts, stub.WithGeneration(*generation))
	}
	if *readyFile != "" {
		opts = append(opts, stub.WithReadyFile(*readyFile))
	}
	p := &plugin{stamp: *version + "/" + *instance, log: log}
	s, err := stub.New(p, opts...)
	if err != nil {
		fmt.Fprintf(os.Stderr, "annotator: %v\n", err)
		os.Exit(1)
	}

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	err = s.Run(ctx)
	var sd *stub.ShutdownError
	switch {
	case errors.Is(err, stub.ErrSuperseded) && errors.As(err, &sd):
		log.Info("superseded; exiting on SIGTERM", "successor", sd.SuccessorVersion+"/"+sd.SuccessorInstance)
	case err != nil && ctx.Err() == nil:
		fmt.Fprintf(os.Stderr, "annotator: %v\n", err)
		os.Exit(1)
	}
}
