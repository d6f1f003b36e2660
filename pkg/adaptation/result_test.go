package adaptation

import (
	"slices"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/nri-handover/nri/api"
)

func newCreateRequest() *api.CreateContainerRequest {
	return &api.CreateContainerRequest{
		Pod: &api.PodSandbox{Id: "pod0", Name: "pod"},
		Container: &api.Container{
			Id:          "ctr0",
			Name:        "ctr",
			Annotations: map[string]string{"orig": "1"},
			Env:         []string{"PATH=/bin", "HOME=/root"},
			Mounts:      []*api.Mount{{Destination: "/orig", Source: "/src"}},
			Args:        []string{"sleep", "1"},
		},
	}
}

func applyAll(t *testing.T, r *result, responses ...any) {
	t.Helper()
	for i, rpl := range responses {
		if err := r.apply(rpl, pluginName(i)); err != nil {
			t.Fatalf("plugin %s: %v", pluginName(i), err)
		}
	}
}

func pluginName(i int) string { return string(rune('a' + i)) }

func adjusted(adj *api.ContainerAdjustment) *api.CreateContainerResponse {
	return &api.CreateContainerResponse{Adjust: adj}
}

// disjointAdjustments are two adjustments that set every kind of field
// between them and none of the same (FuzzMergeResults starts from them too).
func disjointAdjustments() (a, b *api.ContainerAdjustment) {
	a = &api.ContainerAdjustment{
		Annotations: map[string]string{"a": "x"},
		Mounts:      []*api.Mount{{Destination: "/a", Source: "/srv/a"}},
		Env:         []*api.KeyValue{{Key: "A", Value: "1"}},
		Args:        []string{"run", "a"},
		Hooks:       &api.Hooks{Prestart: []*api.Hook{{Path: "/bin/a"}}},
		Rlimits:     []*api.POSIXRlimit{{Type: "RLIMIT_NOFILE", Hard: 10, Soft: 5}},
		CDIDevices:  []*api.CDIDevice{{Name: "vendor.com/gpu=0"}},
		Linux: &api.LinuxContainerAdjustment{
			Devices: []*api.LinuxDevice{{Path: "/dev/a", Type: "c", Major: 1, Minor: 2}},
			Resources: &api.LinuxResources{
				Memory:         &api.LinuxMemory{Limit: &api.OptionalInt64{Value: 1 << 20}},
				Cpu:            &api.LinuxCPU{Cpus: "0-1"},
				HugepageLimits: []*api.HugepageLimit{{PageSize: "2MB", Limit: 4}},
				Unified:        map[string]string{"memory.high": "100"},
				BlockioClass:   &api.OptionalString{Value: "slow"},
				Pids:           &api.LinuxPids{Limit: 64},
				Devices:        []*api.LinuxDeviceCgroup{{Allow: true, Type: "c"}},
			},
			CgroupsPath: "/a.slice",
			OomScoreAdj: &api.OptionalInt{Value: 500},
			Sysctl:      map[string]string{"net.a": "1"},
			NetDevices:  map[string]*api.LinuxNetDevice{"eth1": {Name: "net1"}},
			Namespaces:  []*api.LinuxNamespace{{Type: "network", Path: "/var/run/netns/a"}},
		},
	}
	b = &api.ContainerAdjustment{
		Annotations: map[string]string{"b": "y"},
		Env:         []*api.KeyValue{{Key: "B", Value: "2"}},
		Hooks:       &api.Hooks{Poststop: []*api.Hook{{Path: "/bin/b"}}},
		Linux: &api.LinuxContainerAdjustment{
			Resources: &api.LinuxResources{
				Memory:   &api.LinuxMemory{Swap: &api.OptionalInt64{Value: 2 << 20}},
				Cpu:      &api.LinuxCPU{Shares: &api.OptionalUInt64{Value: 512}, Mems: "0"},
				RdtClass: &api.OptionalString{Value: "gold"},
			},
			IoPriority:    &api.LinuxIOPriority{Class: api.IOPrioClass_IOPRIO_CLASS_BE, Priority: 3},
			SeccompPolicy: &api.LinuxSeccomp{DefaultAction: "SCMP_ACT_ALLOW"},
			Scheduler:     &api.LinuxScheduler{Nice: 5},
			MemoryPolicy:  &api.LinuxMemoryPolicy{Nodes: "0"},
			Rdt:           &api.LinuxRdt{ClosId: &api.OptionalString{Value: "c1"}},
		},
	}
	return a, b
}

func TestResultMergesDisjointAdjustments(t *testing.T) {
	req := newCreateRequest()
	r := collectCreateContainerResult(req)

	a, b := disjointAdjustments()
	applyAll(t, r, adjusted(a), adjusted(b))

	rpl := r.createContainerResponse()
	adj, l, res := rpl.Adjust, rpl.Adjust.Linux, rpl.Adjust.Linux.Resources

	if adj.Annotations["a"] != "x" || adj.Annotations["b"] != "y" || len(adj.Annotations) != 2 {
		t.Errorf("annotations = %v", adj.Annotations)
	}
	if len(adj.Mounts) != 1 || adj.Mounts[0].Destination != "/a" {
		t.Errorf("mounts = %v", adj.Mounts)
	}
	if envKeys(adj.Env) != "A,B" {
		t.Errorf("env = %v", adj.Env)
	}
	if !slices.Equal(adj.Args, []string{"run", "a"}) {
		t.Errorf("args = %v", adj.Args)
	}
	if len(adj.Hooks.Prestart) != 1 || len(adj.Hooks.Poststop) != 1 {
		t.Errorf("hooks = %v", adj.Hooks)
	}
	if len(adj.Rlimits) != 1 || len(adj.CDIDevices) != 1 || len(l.Devices) != 1 {
		t.Errorf("rlimits %v, CDI devices %v, devices %v", adj.Rlimits, adj.CDIDevices, l.Devices)
	}
	if res.Memory.GetLimit().GetValue() != 1<<20 || res.Memory.GetSwap().GetValue() != 2<<20 {
		t.Errorf("memory = %v", res.Memory)
	}
	if res.Cpu.Cpus != "0-1" || res.Cpu.Mems != "0" || res.Cpu.GetShares().GetValue() != 512 {
		t.Errorf("cpu = %v", res.Cpu)
	}
	if len(res.HugepageLimits) != 1 || res.Unified["memory.high"] != "100" || len(res.Devices) != 1 {
		t.Errorf("hugepages %v, unified %v, devices %v", res.HugepageLimits, res.Unified, res.Devices)
	}
	if res.GetBlockioClass().GetValue() != "slow" || res.GetRdtClass().GetValue() != "gold" || res.GetPids().GetLimit() != 64 {
		t.Errorf("classes/pids = %v", res)
	}
	if l.CgroupsPath != "/a.slice" || l.GetOomScoreAdj().GetValue() != 500 || l.IoPriority.GetPriority() != 3 {
		t.Errorf("linux = %v", l)
	}
	if l.SeccompPolicy.GetDefaultAction() != "SCMP_ACT_ALLOW" || l.Scheduler.GetNice() != 5 || l.MemoryPolicy.GetNodes() != "0" {
		t.Errorf("linux = %v", l)
	}
	if l.Sysctl["net.a"] != "1" || l.NetDevices["eth1"].GetName() != "net1" || len(l.Namespaces) != 1 {
		t.Errorf("sysctl %v, net devices %v, namespaces %v", l.Sysctl, l.NetDevices, l.Namespaces)
	}
	if l.Rdt.GetClosId().GetValue() != "c1" || l.Rdt.Remove {
		t.Errorf("rdt = %v", l.Rdt)
	}

	// Later plugins see the container as adjusted by earlier ones.
	c := req.Container
	if c.Annotations["a"] != "x" || c.Annotations["orig"] != "1" {
		t.Errorf("request annotations = %v", c.Annotations)
	}
	if !slices.Contains(c.Env, "A=1") || !slices.Contains(c.Env, "PATH=/bin") {
		t.Errorf("request env = %v", c.Env)
	}
	if len(c.Mounts) != 2 || !slices.Equal(c.Args, []string{"run", "a"}) {
		t.Errorf("request mounts %v, args %v", c.Mounts, c.Args)
	}
	if c.Linux.Resources.Memory.GetLimit().GetValue() != 1<<20 || c.Linux.CgroupsPath != "/a.slice" ||
		c.Linux.Scheduler.GetNice() != 5 || len(c.Hooks.Poststop) != 1 || c.Linux.Sysctl["net.a"] != "1" {
		t.Errorf("request linux = %v", c.Linux)
	}

	// Owners are recorded for validators.
	for _, check := range []struct {
		field string
		owner func() (string, bool)
		want  string
	}{
		{"memory limit", func() (string, bool) { return r.owners.MemLimitOwner("ctr0") }, "a"},
		{"memory swap", func() (string, bool) { return r.owners.MemSwapLimitOwner("ctr0") }, "b"},
		{"env B", func() (string, bool) { return r.owners.EnvOwner("ctr0", "B") }, "b"},
		{"hooks", func() (string, bool) { return r.owners.HooksOwner("ctr0") }, "a,b"},
		{"seccomp", func() (string, bool) { return r.owners.SeccompPolicyOwner("ctr0") }, "b"},
		{"memory policy", func() (string, bool) { return r.owners.MemoryPolicyOwner("ctr0") }, "b"},
		{"namespace", func() (string, bool) { return r.owners.NamespaceOwner("ctr0", "network") }, "a"},
		{"rdt clos", func() (string, bool) { return r.owners.RdtClosIDOwner("ctr0") }, "b"},
	} {
		if got, ok := check.owner(); !ok || got != check.want {
			t.Errorf("%s owner = %q, %v; want %q", check.field, got, ok, check.want)
		}
	}
}

func TestResultReportsConflictsNamingBothPlugins(t *testing.T) {
	for _, tc := range []struct {
		want string
		adj  func() *api.ContainerAdjustment
	}{
		{"memory limit", func() *api.ContainerAdjustment {
			return linuxAdj(&api.LinuxContainerAdjustment{Resources: &api.LinuxResources{
				Memory: &api.LinuxMemory{Limit: &api.OptionalInt64{Value: 1}}}})
		}},
		{"CPU quota", func() *api.ContainerAdjustment {
			return linuxAdj(&api.LinuxContainerAdjustment{Resources: &api.LinuxResources{
				Cpu: &api.LinuxCPU{Quota: &api.OptionalInt64{Value: 1}}}})
		}},
		{"cpuset CPUs", func() *api.ContainerAdjustment {
			return linuxAdj(&api.LinuxContainerAdjustment{Resources: &api.LinuxResources{Cpu: &api.LinuxCPU{Cpus: "1"}}})
		}},
		{`hugepage limit "1GB"`, func() *api.ContainerAdjustment {
			return linuxAdj(&api.LinuxContainerAdjustment{Resources: &api.LinuxResources{
				HugepageLimits: []*api.HugepageLimit{{PageSize: "1GB", Limit: 1}}}})
		}},
		{`unified cgroup parameter "cpu.max"`, func() *api.ContainerAdjustment {
			return linuxAdj(&api.LinuxContainerAdjustment{Resources: &api.LinuxResources{
				Unified: map[string]string{"cpu.max": "1"}}})
		}},
		{"pids limit", func() *api.ContainerAdjustment {
			return linuxAdj(&api.LinuxContainerAdjustment{Resources: &api.LinuxResources{Pids: &api.LinuxPids{Limit: 1}}})
		}},
		{"cgroups path", func() *api.ContainerAdjustment {
			return linuxAdj(&api.LinuxContainerAdjustment{CgroupsPath: "/x"})
		}},
		{"OOM score adjustment", func() *api.ContainerAdjustment {
			return linuxAdj(&api.LinuxContainerAdjustment{OomScoreAdj: &api.OptionalInt{Value: 1}})
		}},
		{"scheduling policy", func() *api.ContainerAdjustment {
			return linuxAdj(&api.LinuxContainerAdjustment{Scheduler: &api.LinuxScheduler{}})
		}},
		{"RDT schemata", func() *api.ContainerAdjustment {
			return linuxAdj(&api.LinuxContainerAdjustment{Rdt: &api.LinuxRdt{Schemata: &api.OptionalRepeatedString{}}})
		}},
		{`namespace "ipc"`, func() *api.ContainerAdjustment {
			return linuxAdj(&api.LinuxContainerAdjustment{Namespaces: []*api.LinuxNamespace{{Type: "ipc"}}})
		}},
		{`sysctl "k"`, func() *api.ContainerAdjustment {
			return linuxAdj(&api.LinuxContainerAdjustment{Sysctl: map[string]string{"k": "v"}})
		}},
		{`network device "eth0"`, func() *api.ContainerAdjustment {
			return linuxAdj(&api.LinuxContainerAdjustment{NetDevices: map[string]*api.LinuxNetDevice{"eth0": {}}})
		}},
		{`device "/dev/x"`, func() *api.ContainerAdjustment {
			return linuxAdj(&api.LinuxContainerAdjustment{Devices: []*api.LinuxDevice{{Path: "/dev/x"}}})
		}},
		{`annotation "k"`, func() *api.ContainerAdjustment {
			return &api.ContainerAdjustment{Annotations: map[string]string{"k": "v"}}
		}},
		{`mount "/m"`, func() *api.ContainerAdjustment {
			return &api.ContainerAdjustment{Mounts: []*api.Mount{{Destination: "/m"}}}
		}},
		{`environment variable "E"`, func() *api.ContainerAdjustment {
			return &api.ContainerAdjustment{Env: []*api.KeyValue{{Key: "E"}}}
		}},
		{`rlimit "RLIMIT_CORE"`, func() *api.ContainerAdjustment {
			return &api.ContainerAdjustment{Rlimits: []*api.POSIXRlimit{{Type: "RLIMIT_CORE"}}}
		}},
		{`CDI device "v.com/c=1"`, func() *api.ContainerAdjustment {
			return &api.ContainerAdjustment{CDIDevices: []*api.CDIDevice{{Name: "v.com/c=1"}}}
		}},
		{"arguments", func() *api.ContainerAdjustment {
			return &api.ContainerAdjustment{Args: []string{"x"}}
		}},
	} {
		t.Run(tc.want, func(t *testing.T) {
			r := collectCreateContainerResult(newCreateRequest())
			if err := r.apply(adjusted(tc.adj()), "first"); err != nil {
				t.Fatalf("first plugin: %v", err)
			}
			err := r.apply(adjusted(tc.adj()), "second")
			want := `plugins "second" and "first" both tried to set ` + tc.want
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Fatalf("error = %v, want %q", err, want)
			}
		})
	}
}

func linuxAdj(l *api.LinuxContainerAdjustment) *api.ContainerAdjustment {
	return &api.ContainerAdjustment{Linux: l}
}

func TestResultRdtRemove(t *testing.T) {
	r := collectCreateContainerResult(newCreateRequest())
	applyAll(t, r,
		adjusted(linuxAdj(&api.LinuxContainerAdjustment{Rdt: &api.LinuxRdt{ClosId: &api.OptionalString{Value: "a"}}})),
		adjusted(linuxAdj(&api.LinuxContainerAdjustment{Rdt: &api.LinuxRdt{Remove: true}})),
	)
	rdt := r.createContainerResponse().Adjust.Linux.Rdt
	if !rdt.Remove || rdt.ClosId != nil {
		t.Fatalf("rdt = %v, want removal only", rdt)
	}

	// Without any Linux adjustment, no RDT adjustment is forwarded...
	r = collectCreateContainerResult(newCreateRequest())
	applyAll(t, r, adjusted(&api.ContainerAdjustment{Annotations: map[string]string{"k": "v"}}))
	if rdt := r.createContainerResponse().Adjust.Linux.Rdt; rdt != nil {
		t.Fatalf("rdt = %v, want none", rdt)
	}
	// ...but with one, an empty RDT adjustment is, as upstream sends it.
	r = collectCreateContainerResult(newCreateRequest())
	applyAll(t, r, adjusted(linuxAdj(&api.LinuxContainerAdjustment{CgroupsPath: "/x"})))
	if rdt := r.createContainerResponse().Adjust.Linux.Rdt; rdt == nil || rdt.Remove || rdt.ClosId != nil {
		t.Fatalf("rdt = %v, want an empty RDT adjustment", rdt)
	}
}

func TestResultCollectsUpdatesAndEvictionsDuringCreation(t *testing.T) {
	r := collectCreateContainerResult(newCreateRequest())
	r.forwardEvictions = true
	applyAll(t, r,
		&api.CreateContainerResponse{
			Update: []*api.ContainerUpdate{cpuUpdate("other", "0-3", false)},
			Evict:  []*api.ContainerEviction{{ContainerId: "victim", Reason: "first"}},
		},
		&api.CreateContainerResponse{
			Update: []*api.ContainerUpdate{memUpdate("other", 100, false)},
			Evict:  []*api.ContainerEviction{{ContainerId: "victim", Reason: "second"}, {ContainerId: "v2"}},
		},
	)
	rpl := r.createContainerResponse()
	if len(rpl.Update) != 1 {
		t.Fatalf("updates = %v", rpl.Update)
	}
	res := rpl.Update[0].Linux.Resources
	if res.Cpu.Cpus != "0-3" || res.Memory.GetLimit().GetValue() != 100 {
		t.Errorf("merged update = %v", res)
	}
	if len(rpl.Evict) != 2 || rpl.Evict[0].Reason != "first" || rpl.Evict[1].ContainerId != "v2" {
		t.Errorf("evictions = %v", rpl.Evict)
	}

	err := r.apply(&api.CreateContainerResponse{Update: []*api.ContainerUpdate{cpuUpdate("ctr0", "1", false)}}, "c")
	if err == nil || !strings.Contains(err.Error(), `plugin "c" asked update of "ctr0" during creation`) {
		t.Errorf("error = %v", err)
	}
	err = r.apply(&api.CreateContainerResponse{Evict: []*api.ContainerEviction{{ContainerId: "ctr0"}}}, "c")
	if err == nil || !strings.Contains(err.Error(), `plugin "c"`) {
		t.Errorf("error = %v", err)
	}
}

// Unless the runtime asked for them, evictions are dropped as upstream NRI
// v0.12.5 drops them, also one of the container being created.
func TestResultDropsEvictionsByDefault(t *testing.T) {
	evict := []*api.ContainerEviction{{ContainerId: "victim"}, {ContainerId: "ctr0"}}
	r := collectCreateContainerResult(newCreateRequest())
	applyAll(t, r, &api.CreateContainerResponse{Evict: evict})
	if got := r.createContainerResponse().Evict; got != nil {
		t.Errorf("CreateContainer reply evictions = %v, want none", got)
	}

	r = collectUpdateContainerResult(&api.UpdateContainerRequest{Container: &api.Container{Id: "ctr1"}})
	applyAll(t, r, &api.UpdateContainerResponse{Evict: evict})
	if got := r.updateContainerResponse().Evict; got != nil {
		t.Errorf("UpdateContainer reply evictions = %v, want none", got)
	}
}

func TestResultUpdateContainer(t *testing.T) {
	req := &api.UpdateContainerRequest{
		Container: &api.Container{Id: "ctr0"},
		LinuxResources: &api.LinuxResources{
			Cpu: &api.LinuxCPU{Cpus: "0", Mems: "0"},
		},
	}
	r := collectUpdateContainerResult(req)
	r.forwardEvictions = true
	applyAll(t, r,
		&api.UpdateContainerResponse{Update: []*api.ContainerUpdate{
			memUpdate("ctr0", 200, false),
			cpuUpdate("other", "2", false),
		}},
		&api.UpdateContainerResponse{
			Update: []*api.ContainerUpdate{cpuUpdate("ctr0", "1", false)},
			Evict:  []*api.ContainerEviction{{ContainerId: "victim"}},
		},
	)

	rpl := r.updateContainerResponse()
	if len(rpl.Update) != 2 || rpl.Update[0].ContainerId != "other" || rpl.Update[1].ContainerId != "ctr0" {
		t.Fatalf("updates = %v, want other first and the requested container last", rpl.Update)
	}
	got := rpl.Update[1].Linux.Resources
	if got.Cpu.Cpus != "1" || got.Cpu.Mems != "0" || got.Memory.GetLimit().GetValue() != 200 {
		t.Errorf("requested container's resources = %v", got)
	}
	if !proto.Equal(req.LinuxResources, got) {
		t.Errorf("request not updated for later plugins: %v", req.LinuxResources)
	}
	if len(rpl.Evict) != 1 {
		t.Errorf("evictions = %v", rpl.Evict)
	}

	err := r.apply(&api.UpdateContainerResponse{Update: []*api.ContainerUpdate{memUpdate("ctr0", 1, false)}}, "c")
	if err == nil || !strings.Contains(err.Error(), `plugins "c" and "a" both tried to set memory limit`) {
		t.Errorf("error = %v", err)
	}
	// A conflicting update whose failure may be ignored is dropped.
	err = r.apply(&api.UpdateContainerResponse{Update: []*api.ContainerUpdate{memUpdate("ctr0", 1, true)}}, "c")
	if err != nil {
		t.Errorf("ignorable conflict failed the request: %v", err)
	}
	if v := r.updateContainerResponse().Update[1].Linux.Resources.Memory.GetLimit().GetValue(); v != 200 {
		t.Errorf("memory limit = %d after an ignored conflict", v)
	}
}

func TestResultUpdateContainerUntouched(t *testing.T) {
	r := collectUpdateContainerResult(&api.UpdateContainerRequest{Container: &api.Container{Id: "ctr0"}})
	applyAll(t, r, &api.UpdateContainerResponse{}, (*api.UpdateContainerResponse)(nil))
	rpl := r.updateContainerResponse()
	if len(rpl.Update) != 1 || rpl.Update[0] != nil {
		t.Fatalf("updates = %v, want a single nil entry for the untouched container", rpl.Update)
	}
}

func TestResultStopContainer(t *testing.T) {
	r := collectStopContainerResult()
	applyAll(t, r,
		&api.StopContainerResponse{Update: []*api.ContainerUpdate{cpuUpdate("other", "1", false)}},
		&api.StopContainerResponse{Update: []*api.ContainerUpdate{memUpdate("other", 5, false)}},
	)
	rpl := r.stopContainerResponse()
	if len(rpl.Update) != 1 || rpl.Update[0].Linux.Resources.Memory.GetLimit().GetValue() != 5 {
		t.Fatalf("updates = %v", rpl.Update)
	}
	if err := r.apply(&api.StartContainerResponse{}, "x"); err == nil {
		t.Fatalf("merging a response of the wrong type succeeded")
	}
}

func cpuUpdate(id, cpus string, ignore bool) *api.ContainerUpdate {
	return &api.ContainerUpdate{ContainerId: id, IgnoreFailure: ignore, Linux: &api.LinuxContainerUpdate{
		Resources: &api.LinuxResources{Cpu: &api.LinuxCPU{Cpus: cpus}}}}
}

func memUpdate(id string, limit int64, ignore bool) *api.ContainerUpdate {
	return &api.ContainerUpdate{ContainerId: id, IgnoreFailure: ignore, Linux: &api.LinuxContainerUpdate{
		Resources: &api.LinuxResources{Memory: &api.LinuxMemory{Limit: &api.OptionalInt64{Value: limit}}}}}
}

func envKeys(env []*api.KeyValue) string {
	var keys []string
	for _, e := range env {
		keys = append(keys, e.Key)
	}
	return strings.Join(keys, ",")
}

func mountDestinations(mounts []*api.Mount) string {
	var d []string
	for _, m := range mounts {
		d = append(d, m.Destination)
	}
	return strings.Join(d, ",")
}

// The conflict at container creation between a plugin and another of its
// index, one of them opted in, says a rename is the likely cause; between
// plugins that did not opt in it is upstream's error as it is.
func TestConflictNamesLikelyRename(t *testing.T) {
	g := testRegistry(handoverPolicy{})
	conflict := func(a, b *plugin) error {
		r := collectCreateContainerResult(newCreateRequest())
		if err := r.apply(adjusted(&api.ContainerAdjustment{Annotations: map[string]string{"k": "a"}}), a.name()); err != nil {
			t.Fatal(err)
		}
		err := r.apply(adjusted(&api.ContainerAdjustment{Annotations: map[string]string{"k": "b"}}), b.name())
		if err == nil {
			t.Fatal("no conflict")
		}
		return renameHint(err, b, []*plugin{a, b})
	}
	const upstream = `plugins "40-my-plugin" and "40-myplugin" both tried to set annotation "k"`
	err := conflict(g.optedIn("40", "myplugin", "a", 1, "v1"), g.optedIn("40", "my-plugin", "b", 2, "v2"))
	if !strings.HasPrefix(err.Error(), upstream) || !strings.Contains(err.Error(), "if one is the other renamed") {
		t.Errorf("conflict %q, want upstream's error saying a rename is the likely cause", err)
	}
	err = conflict(g.legacyOf("40", "myplugin", 1), g.legacyOf("40", "my-plugin", 2))
	if err.Error() != upstream {
		t.Errorf("conflict between plugins that did not opt in: %q, want upstream's %q", err, upstream)
	}
	err = conflict(g.optedIn("30", "myplugin", "a", 1, "v1"), g.optedIn("40", "my-plugin", "b", 2, "v2"))
	if strings.Contains(err.Error(), "renamed") {
		t.Errorf("conflict between plugins of two indexes %q says renamed", err)
	}
}

func TestCreateContainerMergesAndReportsConflicts(t *testing.T) {
	limit := func(v int64) func() *api.ContainerAdjustment {
		return func() *api.ContainerAdjustment {
			return &api.ContainerAdjustment{Linux: &api.LinuxContainerAdjustment{Resources: &api.LinuxResources{
				Memory: &api.LinuxMemory{Limit: &api.OptionalInt64{Value: v}}}}}
		}
	}
	env := func() *api.ContainerAdjustment {
		return &api.ContainerAdjustment{Env: []*api.KeyValue{{Key: "FROM", Value: "env"}}}
	}

	r := startWithBuiltins(t, adjuster("10", "limit", limit(100)), adjuster("20", "env", env))
	rpl, err := createContainer(r, nil)
	if err != nil {
		t.Fatalf("CreateContainer: %v", err)
	}
	if rpl.GetAdjust().GetLinux().GetResources().GetMemory().GetLimit().GetValue() != 100 ||
		len(rpl.GetAdjust().GetEnv()) != 1 {
		t.Fatalf("merged adjustment = %v", rpl.GetAdjust())
	}

	r = startWithBuiltins(t, adjuster("10", "first", limit(100)), adjuster("20", "second", limit(200)))
	_, err = createContainer(r, nil)
	if err == nil || !strings.Contains(err.Error(), `plugins "20-second" and "10-first" both tried to set memory limit`) {
		t.Fatalf("error = %v, want a conflict naming both plugins", err)
	}
}
