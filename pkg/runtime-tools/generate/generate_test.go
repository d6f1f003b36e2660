package generate_test

import (
	"encoding/json"
	"strings"
	"testing"

	rspec "github.com/opencontainers/runtime-spec/specs-go"

	"github.com/nri-handover/nri/api"
	"github.com/nri-handover/nri/pkg/runtime-tools/generate"
	"github.com/nri-handover/nri/test/ocigen"
)

// callbacks are test/ocigen's runtime callbacks as our options.
func callbacks() []generate.GeneratorOption {
	return []generate.GeneratorOption{
		generate.WithRdtResolver(ocigen.ResolveRdt),
		generate.WithBlockIOResolver(ocigen.ResolveBlockIO),
		generate.WithCDIDeviceInjector(ocigen.InjectCDI),
		generate.WithAnnotationFilter(ocigen.FilterAnnotations),
		generate.WithResourceChecker(ocigen.CheckResources),
	}
}

// preparedSpec is the case's input spec.
func (c adjustCase) preparedSpec() *rspec.Spec {
	s := baseSpec()
	if c.prepare != nil {
		c.prepare(s)
	}
	return s
}

// applyOurs adjusts the case's spec with our generator.
func applyOurs(c adjustCase) (*rspec.Spec, error) {
	gen := ocigen.New(c.preparedSpec())
	var opts []generate.GeneratorOption
	if c.callbacks {
		opts = callbacks()
	}
	err := generate.SpecGenerator(gen, opts...).Adjust(c.adjust)
	return gen.Spec(), err
}

func specJSON(t *testing.T, s *rspec.Spec) string {
	t.Helper()
	b, err := json.MarshalIndent(s, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestAdjust(t *testing.T) {
	for _, c := range adjustCases {
		if c.want == nil && c.wantErr == "" {
			continue // checked against upstream only
		}
		t.Run(c.name, func(t *testing.T) {
			got, err := applyOurs(c)
			if c.wantErr != "" {
				if err == nil || err.Error() != c.wantErr {
					t.Fatalf("error %v, want %q", err, c.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			want := c.preparedSpec()
			c.want(want)
			if g, w := specJSON(t, got), specJSON(t, want); g != w {
				t.Fatalf("adjusted spec:\n%s\nwant:\n%s", g, w)
			}
		})
	}
}

// Adjusting must not panic on a spec with nothing in it, whatever the
// adjustment; upstream dereferences the missing sections in some places.
func TestAdjustEmptySpec(t *testing.T) {
	for _, c := range adjustCases {
		if c.adjust == nil || c.oursOnly {
			continue
		}
		t.Run(c.name, func(t *testing.T) {
			gen := ocigen.New(&rspec.Spec{})
			_ = generate.SpecGenerator(gen, callbacks()...).Adjust(c.adjust)
		})
	}
}

func TestNilEntriesAreSkipped(t *testing.T) {
	adjust := &api.ContainerAdjustment{
		Env:        []*api.KeyValue{nil, kv("X", "1")},
		Mounts:     []*api.Mount{nil},
		Rlimits:    []*api.POSIXRlimit{nil},
		CDIDevices: []*api.CDIDevice{nil},
		Hooks:      &api.Hooks{Prestart: []*api.Hook{nil}},
		Linux: &api.LinuxContainerAdjustment{
			Devices:    []*api.LinuxDevice{nil},
			Namespaces: []*api.LinuxNamespace{nil},
			Resources: &api.LinuxResources{
				HugepageLimits: []*api.HugepageLimit{nil},
				Devices:        []*api.LinuxDeviceCgroup{nil},
			},
		},
	}
	gen := ocigen.New(baseSpec())
	if err := generate.SpecGenerator(gen, callbacks()...).Adjust(adjust); err != nil {
		t.Fatal(err)
	}
	if env := strings.Join(gen.Spec().Process.Env, " "); env != "PATH=/bin A=1 B=2 X=1" {
		t.Fatalf("env %s", env)
	}
}

// The Generator's own setters create the sections they need.
func TestSettersOnEmptySpec(t *testing.T) {
	g := generate.SpecGenerator(ocigen.New(nil))
	g.SetLinuxIntelRdtClosID("c")
	g.SetLinuxIntelRdtSchemata([]string{"s"})
	g.SetLinuxIntelRdtEnableMonitoring(true)
	g.SetLinuxResourcesPidsLimit(3)
	g.SetLinuxResourcesBlockIO(&rspec.LinuxBlockIO{})
	g.AddLinuxNetDevice("eth0", &api.LinuxNetDevice{Name: "n"})
	g.SetProcessIOPriority(&rspec.LinuxIOPriority{Class: rspec.IOPRIO_CLASS_BE, Priority: 1})
	g.SetLinuxMemoryPolicy(&rspec.LinuxMemoryPolicy{Mode: rspec.MpolLocal})
	g.AddCreateContainerHook(rspec.Hook{Path: "/h"})
	want := `{"ociVersion":"","process":{"user":{"uid":0,"gid":0},"cwd":"","ioPriority":{"class":"IOPRIO_CLASS_BE","priority":1}},` +
		`"hooks":{"createContainer":[{"path":"/h"}]},"linux":{"resources":{"pids":{"limit":3},"blockIO":{}},` +
		`"netDevices":{"eth0":{"name":"n"}},"intelRdt":{"closID":"c","schemata":["s"],"enableMonitoring":true},` +
		`"memoryPolicy":{"mode":"MPOL_LOCAL","nodes":""}}}`
	b, _ := json.Marshal(g.Config)
	if string(b) != want {
		t.Fatalf("spec %s\nwant %s", b, want)
	}
	g.ClearLinuxIntelRdt()
	g.ClearLinuxResourcesBlockIO()
	g.RemoveLinuxNetDevice("eth0")
	if g.Config.Linux.IntelRdt != nil || g.Config.Linux.Resources.BlockIO != nil || len(g.Config.Linux.NetDevices) != 0 {
		t.Fatal("clearing left settings behind")
	}
}
