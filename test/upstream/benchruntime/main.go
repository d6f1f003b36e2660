// Command benchruntime is the benchmark runtime and plugin on upstream
// containerd/nri v0.12.5, the baseline test/bench compares ours against.
//
//	benchruntime stall|dispatch|memory [flags]   runtime side (see loadgen.Main)
//	benchruntime plugin [flags]                  an upstream-stub plugin
//
// It imports only upstream's NRI packages, never ours (both register the
// same protobuf names), and the standard-library-only loadgen package, so
// that both sides measure with the same code.
package main

import (
	"context"
	"os"

	nrilog "github.com/containerd/nri/pkg/log"

	"github.com/nri-handover/nri/test/bench/loadgen"
)

func main() {
	nrilog.Set(quietLogger{})
	if len(os.Args) > 1 && os.Args[1] == "plugin" {
		runPlugin(os.Args[2:])
		return
	}
	loadgen.Main(newRuntime)
}

// quietLogger drops upstream's logs, as the benchmark does with ours: the
// measurement is of the adaptation, not of log output.
type quietLogger struct{}

func (quietLogger) Debugf(context.Context, string, ...interface{}) {}
func (quietLogger) Infof(context.Context, string, ...interface{})  {}
func (quietLogger) Warnf(context.Context, string, ...interface{})  {}
func (quietLogger) Errorf(context.Context, string, ...interface{}) {}
