package generate_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"testing"

	rspec "github.com/opencontainers/runtime-spec/specs-go"
	"google.golang.org/protobuf/proto"

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

// skeletonSpec has every section Adjust writes to, each empty: what the
// sections Adjust creates on a spec without them must start out as.
func skeletonSpec() *rspec.Spec {
	return &rspec.Spec{
		Annotations: map[string]string{},
		Process:     &rspec.Process{},
		Hooks:       &rspec.Hooks{},
		Linux: &rspec.Linux{Resources: &rspec.LinuxResources{
			CPU: &rspec.LinuxCPU{}, Memory: &rspec.LinuxMemory{}, Pids: &rspec.LinuxPids{},
		}},
	}
}

// pruned is s as JSON without empty objects and lists, and without the
// empty version, user and working directory the JSON always carries:
// sections that hold nothing look the same whether they exist or not.
func pruned(t *testing.T, s *rspec.Spec) string {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(specJSON(t, s)), &v); err != nil {
		t.Fatal(err)
	}
	var prune func(v any, process bool) (any, bool)
	prune = func(v any, process bool) (any, bool) {
		switch x := v.(type) {
		case map[string]any:
			for k, e := range x {
				if process && (k == "cwd" && e == "" || k == "user" && fmt.Sprint(e) == "map[gid:0 uid:0]") {
					delete(x, k)
					continue
				}
				if p, keep := prune(e, k == "process"); keep {
					x[k] = p
				} else {
					delete(x, k)
				}
			}
			return x, len(x) > 0
		case []any:
			for i, e := range x {
				x[i], _ = prune(e, false) // entries stay, even if empty
			}
			return x, len(x) > 0
		}
		return v, true
	}
	if m, ok := v.(map[string]any); ok && m["ociVersion"] == "" {
		delete(m, "ociVersion")
	}
	v, _ = prune(v, false)
	b, err := json.MarshalIndent(v, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// showsNothingOnEmptySpec names the cases whose adjustment changes nothing
// in a spec without sections: it clears what is not there, or is ignored.
var showsNothingOnEmptySpec = map[string]bool{
	"empty adjustment":                               true,
	"OOM score left alone when not adjusted":         true,
	"I/O priority without a class clears it":         true,
	"scheduler without a policy clears it":           true,
	"CDI devices without an injector are ignored":    true,
	"memory limit 0 is not applied":                  true,
	"resource checker drops hugepage limits":         true,
	"unlimited PIDs leaves an existing limit":        true,
	"unlimited PIDs on a spec without a PID section": true,
	"empty block I/O class clears":                   true,
	"classes without resolvers are ignored":          true,
	"empty RDT class clears":                         true,
	"RDT removed":                                    true,
}

// Adjusting a spec with nothing in it must not panic (upstream dereferences
// the missing sections in some places): every section an adjustment needs
// is created, and the result, error included, is the one the same
// adjustment gives on a spec whose sections exist but are empty.
func TestAdjustEmptySpec(t *testing.T) {
	for name := range showsNothingOnEmptySpec {
		if !slices.ContainsFunc(adjustCases, func(c adjustCase) bool { return c.name == name }) {
			t.Errorf("showsNothingOnEmptySpec names no case: %q", name)
		}
	}
	for _, c := range adjustCases {
		t.Run(c.name, func(t *testing.T) {
			adjust := func(s *rspec.Spec) (*rspec.Spec, error) {
				gen := ocigen.New(s)
				var opts []generate.GeneratorOption
				if c.callbacks {
					opts = callbacks()
				}
				err := generate.SpecGenerator(gen, opts...).Adjust(c.adjust)
				return gen.Spec(), err
			}
			got, err := adjust(&rspec.Spec{})
			want, wantErr := adjust(skeletonSpec())
			if fmt.Sprint(err) != fmt.Sprint(wantErr) {
				t.Fatalf("error %v on an empty spec, %v on empty sections", err, wantErr)
			}
			switch {
			case c.wantErr != "":
				if err == nil || err.Error() != c.wantErr {
					t.Fatalf("error %v, want %q", err, c.wantErr)
				}
				return
			case c.want == nil && c.wantErr == "":
				// The host decides (mount propagation): both sides agree.
			case err != nil:
				t.Fatal(err)
			}
			if err != nil {
				return
			}
			if g, w := pruned(t, got), pruned(t, want); g != w {
				t.Fatalf("adjusted empty spec:\n%s\nadjusted empty sections:\n%s", g, w)
			}
			empty := pruned(t, got) == "{}"
			switch {
			case showsNothingOnEmptySpec[c.name] && !empty:
				t.Fatalf("listed in showsNothingOnEmptySpec, but the adjustment shows")
			case !showsNothingOnEmptySpec[c.name] && empty && c.adjust != nil && proto.Size(c.adjust) > 0:
				t.Fatalf("the adjustment left no trace on an empty spec")
			}
		})
	}
}

// Nil list entries are skipped, as if absent: a list of nothing but nil
// entries changes nothing (not even the order of the mounts), and the CDI
// injector is not asked to inject nothing.
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
	want := baseSpec()
	want.Process.Env = append(want.Process.Env, "X=1")
	if g, w := specJSON(t, gen.Spec()), specJSON(t, want); g != w {
		t.Fatalf("adjusted spec:\n%s\nwant:\n%s", g, w)
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
	b, err := json.Marshal(g.Config)
	if err != nil {
		t.Fatal(err)
	}
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
