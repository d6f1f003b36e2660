// Command annotator is the sample plugin (examples/annotator) as surge.sh
// runs it against a real containerd: annotator.Main, the sample's own code,
// with one test-only addition, -hold-sync. Everything else the script checks
// (identity, rounds, stamps, state file, exit codes) is the sample's.
//
// -hold-sync PREFIX stops every synchronization round, before the sample
// handles it, until the file PREFIX.full or PREFIX.delta (by the round's
// kind) exists or the runtime's deadline passes. It logs
//
//	msg="test: holding synchronization round" round=full|delta
//
// when it stops, so that the script can kill -9 the instance there: in the
// full synchronization of a takeover (outside the runtime's sync gate) or in
// its catch-up delta round (under the gate, just before the switch). Pausing
// is the only way to catch an instance inside a round: a real plugin answers
// one within microseconds.
package main

import (
	"context"
	"flag"
	"log/slog"
	"os"
	"time"

	"github.com/nri-handover/nri/api"
	"github.com/nri-handover/nri/examples/annotator/annotator"
	"github.com/nri-handover/nri/pkg/stub"
)

func main() {
	var prefix string
	os.Exit(annotator.Main(os.Args[1:],
		annotator.WithFlags(func(fs *flag.FlagSet) {
			fs.StringVar(&prefix, "hold-sync", "", "test only: stop in every synchronization round until PREFIX.full or PREFIX.delta exists")
		}),
		annotator.WithHandler(func(p *annotator.Plugin, log *slog.Logger) stub.Plugin {
			if prefix == "" {
				return p
			}
			return &held{Plugin: p, prefix: prefix, log: log}
		})))
}

// held is the sample plugin with SynchronizeRound paused; every other
// handler is the sample's (embedded).
type held struct {
	*annotator.Plugin
	prefix string
	log    *slog.Logger
}

func (h *held) SynchronizeRound(ctx context.Context, info *stub.SyncInfo, pods []*api.PodSandbox, ctrs []*api.Container) ([]*api.ContainerUpdate, error) {
	kind := "full"
	if info != nil && info.Delta {
		kind = "delta"
	}
	h.log.Info("test: holding synchronization round", "round", kind)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		if _, err := os.Stat(h.prefix + "." + kind); err == nil {
			h.log.Info("test: released synchronization round", "round", kind)
			return h.Plugin.SynchronizeRound(ctx, info, pods, ctrs)
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-tick.C:
		}
	}
}
