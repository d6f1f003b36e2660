// Command generate applies NRI container adjustments to OCI specs with
// upstream containerd/nri v0.12.5's pkg/runtime-tools/generate, for
// pkg/runtime-tools/generate's comparison test. It links upstream's pkg/api,
// so it runs as a separate process.
//
// stdin: a JSON array of test/ocigen.Case; stdout: one of test/ocigen.Result.
package main

import (
	"encoding/json"
	"fmt"
	"os"

	"github.com/containerd/nri/pkg/api"
	"github.com/containerd/nri/pkg/runtime-tools/generate"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/nri-handover/nri/test/ocigen"
)

func main() {
	var cases []ocigen.Case
	if err := json.NewDecoder(os.Stdin).Decode(&cases); err != nil {
		fmt.Fprintf(os.Stderr, "generate: decoding cases: %v\n", err)
		os.Exit(1)
	}
	results := make([]ocigen.Result, 0, len(cases))
	for _, c := range cases {
		results = append(results, apply(c))
	}
	if err := json.NewEncoder(os.Stdout).Encode(results); err != nil {
		fmt.Fprintf(os.Stderr, "generate: %v\n", err)
		os.Exit(1)
	}
}

func apply(c ocigen.Case) (r ocigen.Result) {
	r.Name = c.Name
	defer func() {
		if p := recover(); p != nil {
			r.Error = fmt.Sprintf("panic: %v", p)
		}
	}()
	var adjust *api.ContainerAdjustment // JSON null: a nil adjustment
	if string(c.Adjustment) != "null" {
		adjust = &api.ContainerAdjustment{}
		if err := protojson.Unmarshal(c.Adjustment, adjust); err != nil {
			r.Error = "bad adjustment: " + err.Error()
			return r
		}
	}
	var opts []generate.GeneratorOption
	if c.Callbacks {
		opts = append(opts,
			generate.WithRdtResolver(ocigen.ResolveRdt),
			generate.WithBlockIOResolver(ocigen.ResolveBlockIO),
			generate.WithCDIDeviceInjector(ocigen.InjectCDI),
			generate.WithAnnotationFilter(ocigen.FilterAnnotations),
			generate.WithResourceChecker(ocigen.CheckResources))
	}
	gen := ocigen.New(c.Spec)
	if err := generate.SpecGenerator(gen, opts...).Adjust(adjust); err != nil {
		r.Error = err.Error()
	}
	r.Spec = gen.Spec()
	return r
}
