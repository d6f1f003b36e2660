// Command generate applies NRI container adjustments to OCI specs with
// upstream containerd/nri v0.12.5's pkg/runtime-tools/generate, for
// pkg/runtime-tools/generate's comparison test. It links upstream's pkg/api,
// so it runs as a separate process.
//
// stdin: a JSON array of cases {"name", "spec" (OCI JSON), "adjustment"
// (protojson of nri.pkg.api.v1alpha1.ContainerAdjustment, null for none), "callbacks"
// (install test/ocigen's resolvers, CDI injector, filter and checker)};
// stdout: a JSON array of results {"name", "spec", "error"}.
package main

import (
	"encoding/json"
	"fmt"
	"os"

	"github.com/containerd/nri/pkg/api"
	"github.com/containerd/nri/pkg/runtime-tools/generate"
	rspec "github.com/opencontainers/runtime-spec/specs-go"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/nri-handover/nri/test/ocigen"
)

type testCase struct {
	Name       string          `json:"name"`
	Spec       *rspec.Spec     `json:"spec"`
	Adjustment json.RawMessage `json:"adjustment"`
	Callbacks  bool            `json:"callbacks"`
}

type result struct {
	Name  string      `json:"name"`
	Spec  *rspec.Spec `json:"spec"`
	Error string      `json:"error,omitempty"`
}

func main() {
	var cases []testCase
	if err := json.NewDecoder(os.Stdin).Decode(&cases); err != nil {
		fmt.Fprintf(os.Stderr, "generate: decoding cases: %v\n", err)
		os.Exit(1)
	}
	results := make([]result, 0, len(cases))
	for _, c := range cases {
		results = append(results, apply(c))
	}
	if err := json.NewEncoder(os.Stdout).Encode(results); err != nil {
		fmt.Fprintf(os.Stderr, "generate: %v\n", err)
		os.Exit(1)
	}
}

func apply(c testCase) (r result) {
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
