package builtin_test

import (
	"context"
	"testing"

	"github.com/containerd/nri/pkg/adaptation"
	"github.com/containerd/nri/pkg/adaptation/builtin"
	"github.com/containerd/nri/pkg/api"
)

// A runtime builds its built-in plugins with upstream's builtin package and
// hands them to upstream's WithBuiltinPlugins: both must be the stand-in's.
func TestWithBuiltinPluginsTakesUpstreamsType(t *testing.T) {
	p := &builtin.BuiltinPlugin{
		Base:  "probe",
		Index: "00",
		Handlers: builtin.BuiltinHandlers{
			RunPodSandbox: func(context.Context, *api.RunPodSandboxRequest) error { return nil },
		},
	}
	var _ adaptation.Option = adaptation.WithBuiltinPlugins(p)
}
