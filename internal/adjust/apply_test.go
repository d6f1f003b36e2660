package adjust_test

import (
	"maps"
	"os"
	"slices"
	"strings"
	"testing"

	rspec "github.com/opencontainers/runtime-spec/specs-go"
	"google.golang.org/protobuf/encoding/prototext"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/nri-handover/nri/api"
	"github.com/nri-handover/nri/internal/adjust"
	"github.com/nri-handover/nri/pkg/runtime-tools/generate"
	"github.com/nri-handover/nri/test/ocigen"
)

// The model of a runtime: it holds an OCI spec per container, hands the
// adaptation the container converted from that spec, applies the merged
// adjustment to the spec with pkg/runtime-tools/generate (on a generator
// with runtime-tools' semantics, as containerd does), and from then on
// reports the container (to SyncFn, in later events) converted from the
// adjusted spec. Apply must produce that report from the container and the
// adjustment alone.

func ptr[T any](v T) *T { return &v }

// baseSpec is a runtime's spec of a container before NRI: a bit of
// everything, so that adjustments meet existing entries.
func baseSpec() *rspec.Spec {
	return &rspec.Spec{
		Version: "1.2.0",
		Root:    &rspec.Root{Path: "rootfs"},
		Process: &rspec.Process{
			Args:        []string{"/bin/sh", "-c", "sleep 1"},
			Env:         []string{"PATH=/bin", "A=1", "B=2", "NOVALUE"},
			Rlimits:     []rspec.POSIXRlimit{{Type: "RLIMIT_NOFILE", Hard: 1024, Soft: 1024}},
			OOMScoreAdj: ptr(100),
			IOPriority:  &rspec.LinuxIOPriority{Class: rspec.IOPRIO_CLASS_BE, Priority: 4},
			Scheduler:   &rspec.Scheduler{Policy: rspec.SchedOther, Nice: 1},
		},
		Annotations: map[string]string{"keep": "1", "old": "x"},
		Mounts: []rspec.Mount{
			{Destination: "/proc", Type: "proc", Source: "proc"},
			{Destination: "/dev", Type: "tmpfs", Source: "tmpfs", Options: []string{"nosuid"}},
			{Destination: "/dev/shm", Type: "tmpfs", Source: "shm"},
			{Destination: "/data", Type: "bind", Source: "/var/lib/data", Options: []string{"rbind", "ro"}},
		},
		Hooks: &rspec.Hooks{CreateRuntime: []rspec.Hook{{Path: "/bin/true"}}},
		Linux: &rspec.Linux{
			Namespaces: []rspec.LinuxNamespace{
				{Type: rspec.PIDNamespace}, {Type: rspec.NetworkNamespace, Path: "/var/run/netns/x"}, {Type: rspec.MountNamespace},
			},
			Devices:     []rspec.LinuxDevice{{Path: "/dev/fuse", Type: "c", Major: 10, Minor: 229}},
			Sysctl:      map[string]string{"net.a": "1", "net.b": "2"},
			CgroupsPath: "/kubepods/pod",
			NetDevices:  map[string]rspec.LinuxNetDevice{"eth1": {Name: "net1"}},
			IntelRdt:    &rspec.LinuxIntelRdt{ClosID: "gold", Schemata: []string{"L3:0=f"}},
			Seccomp: &rspec.LinuxSeccomp{
				DefaultAction:   rspec.ActErrno,
				DefaultErrnoRet: ptr[uint](1),
				Architectures:   []rspec.Arch{rspec.ArchX86_64},
				Syscalls:        []rspec.LinuxSyscall{{Names: []string{"read"}, Action: rspec.ActAllow}},
			},
			Resources: &rspec.LinuxResources{
				Memory:         &rspec.LinuxMemory{Limit: ptr[int64](1000), Reservation: ptr[int64](500)},
				CPU:            &rspec.LinuxCPU{Shares: ptr[uint64](2), Cpus: "0-3"},
				Pids:           &rspec.LinuxPids{Limit: ptr[int64](100)},
				HugepageLimits: []rspec.LinuxHugepageLimit{{Pagesize: "2MB", Limit: 1 << 21}},
				Unified:        map[string]string{"memory.high": "900"},
				Devices:        []rspec.LinuxDeviceCgroup{{Allow: false, Access: "rwm"}},
			},
		},
	}
}

// meta is what the runtime keeps of a container outside its spec.
func meta() *api.Container {
	return &api.Container{
		Id:           "ctr",
		PodSandboxId: "pod",
		Name:         "ctr",
		State:        api.ContainerState_CONTAINER_CREATED,
		Labels:       map[string]string{"app": "x"},
		CreatedAt:    1,
		CDIDevices:   []*api.CDIDevice{{Name: "vendor.com/gpu=0"}},
		User:         &api.User{Uid: 1000, Gid: 1000, AdditionalGids: []uint32{5}},
		Image:        &api.Image{Name: "img"},
		Linux: &api.LinuxContainer{
			SeccompProfile: &api.SecurityProfile{ProfileType: api.SecurityProfile_LOCALHOST, LocalhostRef: "p.json"},
		},
	}
}

// reported is the container a runtime reports when s is its spec: what
// containerd's CRI integration reads from the spec (internal/cri/nri's
// criContainer getters, assembled by internal/nri's containerToNRI), and,
// beyond containerd, the rlimits, sysctls and seccomp policy the spec also
// holds: the runtime that reports everything api.Container can carry, so
// that no adjusted field escapes the comparison. Everything else comes from
// meta (the CRI request and the runtime's own records: ids, labels, CDI
// devices asked for, the seccomp profile, user, image).
func reported(meta *api.Container, s *rspec.Spec) *api.Container {
	c := proto.Clone(meta).(*api.Container)
	c.Annotations = maps.Clone(s.Annotations)
	c.Mounts = api.FromOCIMounts(s.Mounts)
	c.Hooks = api.FromOCIHooks(s.Hooks)
	c.Args, c.Env, c.Rlimits = nil, nil, nil
	l := &api.LinuxContainer{SeccompProfile: meta.GetLinux().GetSeccompProfile()}
	if p := s.Process; p != nil {
		c.Args = api.DupStringSlice(p.Args)
		c.Env = api.DupStringSlice(p.Env)
		for _, r := range p.Rlimits {
			c.Rlimits = append(c.Rlimits, &api.POSIXRlimit{Type: r.Type, Hard: r.Hard, Soft: r.Soft})
		}
		l.OomScoreAdj = api.Int(p.OOMScoreAdj)
		l.IoPriority = api.FromOCILinuxIOPriority(p.IOPriority)
		l.Scheduler = api.FromOCILinuxScheduler(p.Scheduler)
	}
	if x := s.Linux; x != nil {
		l.Namespaces = api.FromOCILinuxNamespaces(x.Namespaces)
		l.Devices = api.FromOCILinuxDevices(x.Devices)
		l.Resources = api.FromOCILinuxResources(x.Resources, s.Annotations)
		l.CgroupsPath = x.CgroupsPath
		l.SeccompPolicy = api.FromOCILinuxSeccomp(x.Seccomp)
		l.Sysctl = maps.Clone(x.Sysctl)
		l.NetDevices = api.FromOCILinuxNetDevices(x.NetDevices)
		if r := x.IntelRdt; r != nil {
			l.Rdt = &api.LinuxRdt{
				ClosId:           api.String(r.ClosID),
				Schemata:         api.RepeatedString(r.Schemata),
				EnableMonitoring: api.Bool(r.EnableMonitoring),
			}
		}
	}
	c.Linux = l
	return c
}

// runtimeAdjust applies a to s as the model runtime does. Its callbacks are
// containerd's where their effect shows in a reported container (the RDT
// class is the CLOS id) and test/ocigen's otherwise (the block I/O settings
// of a class are nothing api.Container carries). It has no CDI injector:
// what an injection adds comes from the node's CDI registry, which Apply
// cannot see (see the CDI case).
func runtimeAdjust(s *rspec.Spec, a *api.ContainerAdjustment) error {
	return generate.SpecGenerator(ocigen.New(s),
		generate.WithRdtResolver(ocigen.ResolveRdt),
		generate.WithBlockIOResolver(ocigen.ResolveBlockIO),
	).Adjust(a)
}

type applyCase struct {
	name    string
	prepare func(*rspec.Spec) // edits the base spec before the container is reported
	adjust  *api.ContainerAdjustment
	// check asserts, besides the comparison with the runtime, what the
	// adjustment must have done, so that a fault shared by the model and
	// Apply does not pass unseen.
	check func(t *testing.T, got *api.Container)
	// mayFail: the runtime's result depends on the host (mount propagation);
	// Apply must fail exactly when the runtime does.
	mayFail bool
	wantErr bool
}

func linuxAdj(l *api.LinuxContainerAdjustment) *api.ContainerAdjustment {
	return &api.ContainerAdjustment{Linux: l}
}

func resAdj(r *api.LinuxResources) *api.ContainerAdjustment {
	return linuxAdj(&api.LinuxContainerAdjustment{Resources: r})
}

func hook(name string) *api.Hook {
	return &api.Hook{Path: "/h/" + name, Args: []string{name, "-v"}, Env: []string{"HOOK=" + name}, Timeout: api.Int(5)}
}

func mountDests(c *api.Container) []string {
	var d []string
	for _, m := range c.Mounts {
		d = append(d, m.Destination)
	}
	return d
}

func wantEqual[T comparable](t *testing.T, what string, got, want []T) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Errorf("%s: %v, want %v", what, got, want)
	}
}

var applyCases = []applyCase{
	{name: "nil adjustment"},
	{name: "empty adjustment", adjust: &api.ContainerAdjustment{}},
	{
		name:   "annotations set, replaced and removed",
		adjust: &api.ContainerAdjustment{Annotations: map[string]string{"new": "2", "keep": "changed", "-old": ""}},
		check: func(t *testing.T, got *api.Container) {
			if _, ok := got.Annotations["old"]; ok || got.Annotations["new"] != "2" || got.Annotations["keep"] != "changed" {
				t.Errorf("annotations %v", got.Annotations)
			}
			if _, ok := got.Annotations["-old"]; ok {
				t.Error("the removal marker became an annotation")
			}
		},
	},
	{
		name:   "annotation removed and set again",
		adjust: &api.ContainerAdjustment{Annotations: map[string]string{"-old": "", "old": "again", "-missing": ""}},
	},
	{
		name: "mount added",
		adjust: &api.ContainerAdjustment{Mounts: []*api.Mount{
			{Destination: "/data/cache", Type: "bind", Source: "/var/cache", Options: []string{"rbind", "rw"}},
		}},
		check: func(t *testing.T, got *api.Container) {
			wantEqual(t, "mounts", mountDests(got), []string{"/data", "/dev", "/proc", "/data/cache", "/dev/shm"})
		},
	},
	{
		name:   "mount removed",
		adjust: &api.ContainerAdjustment{Mounts: []*api.Mount{{Destination: api.MarkForRemoval("/data")}}},
		check: func(t *testing.T, got *api.Container) {
			wantEqual(t, "mounts", mountDests(got), []string{"/dev", "/proc", "/dev/shm"})
		},
	},
	{
		name: "mount replaced at its destination",
		adjust: &api.ContainerAdjustment{Mounts: []*api.Mount{
			{Destination: "/data", Type: "bind", Source: "/srv", Options: []string{"rbind"}},
		}},
		check: func(t *testing.T, got *api.Container) {
			n := 0
			for _, m := range got.Mounts {
				if m.Destination == "/data" {
					n++
					if m.Source != "/srv" {
						t.Errorf("/data from %s, want /srv", m.Source)
					}
				}
			}
			if n != 1 {
				t.Errorf("%d mounts at /data, want 1", n)
			}
		},
	},
	{
		name: "mounts removed and added together",
		adjust: &api.ContainerAdjustment{Mounts: []*api.Mount{
			{Destination: "-/dev/shm"},
			{Destination: "-/not/there"},
			{Destination: "/dev/shm/x", Type: "tmpfs", Source: "tmpfs"},
			{Destination: "-/data"},
			{Destination: "/data", Type: "bind", Source: "/srv"},
		}},
	},
	{
		name: "mount asking for shared propagation",
		adjust: &api.ContainerAdjustment{Mounts: []*api.Mount{
			{Destination: "/shared", Type: "bind", Source: "/", Options: []string{"rbind", "rshared"}},
		}},
		mayFail: true,
	},
	{
		name: "env set, replaced and removed",
		adjust: &api.ContainerAdjustment{Env: []*api.KeyValue{
			{Key: "-A"}, {Key: "B", Value: "3"}, {Key: "C", Value: "4"}, {Key: "-MISSING"},
		}},
		check: func(t *testing.T, got *api.Container) {
			// in place, new ones appended; an entry without '=' does not
			// survive the rewrite
			wantEqual(t, "env", got.Env, []string{"PATH=/bin", "B=3", "C=4"})
		},
	},
	{
		name:   "env removed and set again",
		adjust: &api.ContainerAdjustment{Env: []*api.KeyValue{{Key: "-A"}, {Key: "A", Value: "new"}, {Key: "D", Value: "1"}, {Key: "-D"}}},
	},
	{
		name: "hooks",
		adjust: &api.ContainerAdjustment{Hooks: &api.Hooks{
			Prestart:        []*api.Hook{hook("prestart")},
			CreateRuntime:   []*api.Hook{hook("create-runtime")},
			CreateContainer: []*api.Hook{hook("create-container")},
			StartContainer:  []*api.Hook{hook("start-container")},
			Poststart:       []*api.Hook{hook("poststart")},
			Poststop:        []*api.Hook{hook("poststop"), {Path: "/h/poststop2"}},
		}},
		check: func(t *testing.T, got *api.Container) {
			h := got.GetHooks()
			if len(h.GetCreateRuntime()) != 2 || len(h.GetPoststop()) != 2 || h.GetPrestart()[0].GetTimeout().GetValue() != 5 {
				t.Errorf("hooks %v", h)
			}
		},
	},
	{
		name: "rlimits",
		adjust: &api.ContainerAdjustment{Rlimits: []*api.POSIXRlimit{
			{Type: "RLIMIT_NOFILE", Hard: 4096, Soft: 2048}, {Type: "RLIMIT_NPROC", Hard: 10, Soft: 5},
		}},
		check: func(t *testing.T, got *api.Container) {
			if len(got.Rlimits) != 3 {
				t.Errorf("rlimits %v, want the existing one and two appended", got.Rlimits)
			}
		},
	},
	{
		// Container.CDI_devices are the devices the container was created
		// asking for (containerd: the CRI request); an adjustment's CDI
		// devices are injected into the spec by the runtime from the node's
		// CDI registry, which the model runtime does not have either.
		name:   "CDI devices",
		adjust: &api.ContainerAdjustment{CDIDevices: []*api.CDIDevice{{Name: "vendor.com/gpu=1"}}},
		check: func(t *testing.T, got *api.Container) {
			if len(got.CDIDevices) != 1 || got.CDIDevices[0].Name != "vendor.com/gpu=0" {
				t.Errorf("CDI devices %v, want the requested one only", got.CDIDevices)
			}
		},
	},
	{
		name:   "args",
		adjust: &api.ContainerAdjustment{Args: []string{"/bin/app", "--flag"}},
		check: func(t *testing.T, got *api.Container) {
			wantEqual(t, "args", got.Args, []string{"/bin/app", "--flag"})
		},
	},
	{
		name: "devices added, replaced and removed",
		adjust: linuxAdj(&api.LinuxContainerAdjustment{Devices: []*api.LinuxDevice{
			{Path: "/dev/nvidia0", Type: "c", Major: 195, Minor: 0, FileMode: api.FileMode(ptr[os.FileMode](0o660)), Uid: api.UInt32(uint32(0)), Gid: api.UInt32(uint32(44))},
			{Path: "/dev/sdb", Type: "b", Major: 8, Minor: 16},
			{Path: "-/dev/fuse"},
		}}),
		check: func(t *testing.T, got *api.Container) {
			var paths []string
			for _, d := range got.GetLinux().GetDevices() {
				paths = append(paths, d.Path)
			}
			wantEqual(t, "devices", paths, []string{"/dev/nvidia0", "/dev/sdb"})
			if n := len(got.GetLinux().GetResources().GetDevices()); n != 3 {
				t.Errorf("%d device cgroup rules, want the existing one and one per added device", n)
			}
		},
	},
	{
		name:   "device replaced",
		adjust: linuxAdj(&api.LinuxContainerAdjustment{Devices: []*api.LinuxDevice{{Path: "/dev/fuse", Type: "c", Major: 10, Minor: 230}}}),
	},
	{
		name: "memory",
		adjust: resAdj(&api.LinuxResources{Memory: &api.LinuxMemory{
			Limit: api.Int64(int64(2000)), Reservation: api.Int64(int64(1500)), Swap: api.Int64(int64(4000)),
			Kernel: api.Int64(int64(10)), KernelTcp: api.Int64(int64(11)), Swappiness: api.UInt64(uint64(60)),
			DisableOomKiller: api.Bool(true), UseHierarchy: api.Bool(true),
		}}),
		check: func(t *testing.T, got *api.Container) {
			m := got.GetLinux().GetResources().GetMemory()
			if m.GetLimit().GetValue() != 2000 || m.GetSwap().GetValue() != 2000 {
				t.Errorf("memory %v, want limit and swap 2000 (the limit sets swap; the rest is not applied)", m)
			}
		},
	},
	{
		name: "cpu",
		adjust: resAdj(&api.LinuxResources{Cpu: &api.LinuxCPU{
			Shares: api.UInt64(uint64(512)), Quota: api.Int64(int64(50000)), Period: api.UInt64(uint64(100000)),
			RealtimeRuntime: api.Int64(int64(950)), RealtimePeriod: api.UInt64(uint64(1000)), Cpus: "4-7", Mems: "1",
		}}),
	},
	{
		name: "hugepages, unified, pids, device rules",
		adjust: resAdj(&api.LinuxResources{
			HugepageLimits: []*api.HugepageLimit{{PageSize: "2MB", Limit: 1 << 22}, {PageSize: "1GB", Limit: 1 << 30}},
			Unified:        map[string]string{"memory.high": "800", "cpu.weight": "50"},
			Pids:           &api.LinuxPids{Limit: 42},
			Devices: []*api.LinuxDeviceCgroup{
				{Allow: true, Type: "c", Major: api.Int64(int64(1)), Minor: api.Int64(int64(3)), Access: "rw"},
			},
		}),
	},
	{
		name:   "pids unlimited leaves the limit",
		adjust: resAdj(&api.LinuxResources{Pids: &api.LinuxPids{Limit: generate.UnlimitedPidsLimit}}),
	},
	{
		name:   "block I/O and RDT classes",
		adjust: resAdj(&api.LinuxResources{BlockioClass: api.String("slow"), RdtClass: api.String("silver")}),
		check: func(t *testing.T, got *api.Container) {
			if got.GetLinux().GetRdt().GetClosId().GetValue() != "silver" {
				t.Errorf("RDT %v, want the class's CLOS", got.GetLinux().GetRdt())
			}
		},
	},
	{
		name:   "empty RDT class clears RDT",
		adjust: resAdj(&api.LinuxResources{RdtClass: api.String("")}),
		check: func(t *testing.T, got *api.Container) {
			if got.GetLinux().GetRdt() != nil {
				t.Errorf("RDT %v, want none", got.GetLinux().GetRdt())
			}
		},
	},
	{
		name:   "cgroups path",
		adjust: linuxAdj(&api.LinuxContainerAdjustment{CgroupsPath: "/kubepods/other"}),
	},
	{
		name:   "OOM score adjustment",
		adjust: linuxAdj(&api.LinuxContainerAdjustment{OomScoreAdj: api.Int(-999)}),
		check: func(t *testing.T, got *api.Container) {
			if v := got.GetLinux().GetOomScoreAdj(); v == nil || v.Value != -999 {
				t.Errorf("OOM score adjustment %v, want -999", v)
			}
		},
	},
	{
		name:   "I/O priority",
		adjust: linuxAdj(&api.LinuxContainerAdjustment{IoPriority: &api.LinuxIOPriority{Class: api.IOPrioClass_IOPRIO_CLASS_RT, Priority: 1}}),
	},
	{
		name: "seccomp policy",
		adjust: linuxAdj(&api.LinuxContainerAdjustment{SeccompPolicy: &api.LinuxSeccomp{
			DefaultAction: "SCMP_ACT_ALLOW", DefaultErrno: api.UInt32(uint32(38)),
			Architectures: []string{"SCMP_ARCH_AARCH64"}, Flags: []string{"SECCOMP_FILTER_FLAG_LOG"},
			ListenerPath: "/run/seccomp.sock", ListenerMetadata: "meta",
			Syscalls: []*api.LinuxSyscall{{
				Names: []string{"mkdir"}, Action: "SCMP_ACT_ERRNO", ErrnoRet: api.UInt32(uint32(1)),
				Args: []*api.LinuxSeccompArg{{Index: 1, Value: 2, ValueTwo: 3, Op: "SCMP_CMP_EQ"}},
			}},
		}}),
	},
	{
		name: "namespaces added, replaced and removed",
		adjust: linuxAdj(&api.LinuxContainerAdjustment{Namespaces: []*api.LinuxNamespace{
			{Type: "ipc", Path: "/proc/1/ns/ipc"}, {Type: "network", Path: "/var/run/netns/y"}, {Type: "-mount"},
		}}),
	},
	{
		name:    "unknown namespace type fails the creation",
		adjust:  linuxAdj(&api.LinuxContainerAdjustment{Namespaces: []*api.LinuxNamespace{{Type: "bogus"}}}),
		wantErr: true,
	},
	{
		name:   "sysctls set and removed",
		adjust: linuxAdj(&api.LinuxContainerAdjustment{Sysctl: map[string]string{"net.c": "3", "net.b": "22", "-net.a": ""}}),
		check: func(t *testing.T, got *api.Container) {
			if want := map[string]string{"net.b": "22", "net.c": "3"}; !maps.Equal(got.GetLinux().GetSysctl(), want) {
				t.Errorf("sysctls %v, want %v", got.GetLinux().GetSysctl(), want)
			}
		},
	},
	{
		name: "net devices added and removed",
		adjust: linuxAdj(&api.LinuxContainerAdjustment{NetDevices: map[string]*api.LinuxNetDevice{
			"eth2": {Name: "net2"}, "-eth1": nil,
		}}),
	},
	{
		name: "scheduler",
		adjust: linuxAdj(&api.LinuxContainerAdjustment{Scheduler: &api.LinuxScheduler{
			Policy: api.LinuxSchedulerPolicy_SCHED_DEADLINE, Nice: -5, Priority: 10,
			Flags:   []api.LinuxSchedulerFlag{api.LinuxSchedulerFlag_SCHED_FLAG_RECLAIM},
			Runtime: 100, Deadline: 200, Period: 300,
		}}),
	},
	{
		name: "RDT settings",
		adjust: linuxAdj(&api.LinuxContainerAdjustment{Rdt: &api.LinuxRdt{
			ClosId: api.String("bronze"), Schemata: api.RepeatedString([]string{"L3:0=3"}), EnableMonitoring: api.Bool(true),
		}}),
	},
	{
		name:   "RDT removed and set",
		adjust: linuxAdj(&api.LinuxContainerAdjustment{Rdt: &api.LinuxRdt{Remove: true, EnableMonitoring: api.Bool(true)}}),
	},
	{
		// api.LinuxContainer has no memory policy: nothing shows.
		name: "memory policy",
		adjust: linuxAdj(&api.LinuxContainerAdjustment{MemoryPolicy: &api.LinuxMemoryPolicy{
			Mode: api.MpolMode_MPOL_BIND, Nodes: "0-1", Flags: []api.MpolFlag{api.MpolFlag_MPOL_F_STATIC_NODES},
		}}),
	},
	{
		name:    "a container whose spec has no process or linux section",
		prepare: func(s *rspec.Spec) { s.Process, s.Linux, s.Hooks, s.Mounts, s.Annotations = nil, nil, nil, nil, nil },
		adjust: &api.ContainerAdjustment{
			Annotations: map[string]string{"a": "1"},
			Env:         []*api.KeyValue{{Key: "X", Value: "1"}},
			Rlimits:     []*api.POSIXRlimit{{Type: "RLIMIT_CORE"}},
			Linux: &api.LinuxContainerAdjustment{
				OomScoreAdj: api.Int(5),
				Resources:   &api.LinuxResources{Cpu: &api.LinuxCPU{Cpus: "1"}, Pids: &api.LinuxPids{Limit: 7}},
				Rdt:         &api.LinuxRdt{ClosId: api.String("c")},
			},
		},
	},
	{
		name: "everything at once",
		adjust: &api.ContainerAdjustment{
			Annotations: map[string]string{"-keep": "", "z": "26"},
			Mounts:      []*api.Mount{{Destination: "-/data"}, {Destination: "/z", Type: "tmpfs", Source: "tmpfs"}},
			Env:         []*api.KeyValue{{Key: "-PATH"}, {Key: "Z", Value: "26"}},
			Hooks:       &api.Hooks{Poststop: []*api.Hook{{Path: "/z"}}},
			Rlimits:     []*api.POSIXRlimit{{Type: "RLIMIT_AS", Hard: 1, Soft: 1}},
			Args:        []string{"/z"},
			Linux: &api.LinuxContainerAdjustment{
				Devices:     []*api.LinuxDevice{{Path: "/dev/z", Type: "c", Major: 1, Minor: 1}},
				CgroupsPath: "/z",
				OomScoreAdj: api.Int(0),
				IoPriority:  &api.LinuxIOPriority{Class: api.IOPrioClass_IOPRIO_CLASS_IDLE},
				Namespaces:  []*api.LinuxNamespace{{Type: "-network"}},
				Sysctl:      map[string]string{"-net.b": ""},
				NetDevices:  map[string]*api.LinuxNetDevice{"-eth1": nil},
				Scheduler:   &api.LinuxScheduler{Policy: api.LinuxSchedulerPolicy_SCHED_BATCH},
				Resources: &api.LinuxResources{
					Memory: &api.LinuxMemory{Limit: api.Int64(int64(1))},
					Cpu:    &api.LinuxCPU{Mems: "0"},
					Pids:   &api.LinuxPids{Limit: 0},
				},
				Rdt: &api.LinuxRdt{Schemata: api.RepeatedString([]string{})},
			},
		},
	},
}

func text(m proto.Message) string {
	return prototext.MarshalOptions{Multiline: true}.Format(m)
}

// Apply turns the container the runtime reported before NRI into exactly
// what the runtime reports once it applied the adjustment.
func TestApplyMatchesRuntime(t *testing.T) {
	for _, c := range applyCases {
		t.Run(c.name, func(t *testing.T) {
			before := baseSpec()
			if c.prepare != nil {
				c.prepare(before)
			}
			request := reported(meta(), before)

			after := baseSpec()
			if c.prepare != nil {
				c.prepare(after)
			}
			runtimeErr := runtimeAdjust(after, c.adjust)

			got := proto.Clone(request).(*api.Container)
			err := adjust.Apply(got, c.adjust)

			switch {
			case c.wantErr && (err == nil || runtimeErr == nil):
				t.Fatalf("Apply: %v, runtime: %v; both must fail", err, runtimeErr)
			case !c.mayFail && !c.wantErr && runtimeErr != nil:
				t.Fatalf("the model runtime failed: %v", runtimeErr)
			case (err == nil) != (runtimeErr == nil):
				t.Fatalf("Apply: %v, runtime: %v; Apply must fail exactly when the runtime does", err, runtimeErr)
			}
			if err != nil {
				if !proto.Equal(got, request) {
					t.Errorf("a failed Apply changed the container:\n%s", text(got))
				}
				return
			}
			if want := reported(meta(), after); !proto.Equal(got, want) {
				t.Errorf("Apply gave\n%s\nthe runtime reports\n%s", text(got), text(want))
			}
			if c.adjust == nil || proto.Size(c.adjust) == 0 {
				if !proto.Equal(got, request) {
					t.Errorf("an empty adjustment changed the container:\n%s\nwas\n%s", text(got), text(request))
				}
			}
			if c.check != nil {
				c.check(t, got)
			}
		})
	}
}

// A container that did not come from a spec (the test runtime's, or one
// with fields no spec holds) keeps whatever an adjustment does not touch.
func TestApplyLeavesWhatNoSpecHolds(t *testing.T) {
	c := &api.Container{
		Id:          "c",
		State:       api.ContainerState_CONTAINER_RUNNING,
		Annotations: map[string]string{},
		Args:        []string{"/bin/c"},
		Linux: &api.LinuxContainer{Resources: &api.LinuxResources{
			BlockioClass: api.String("gold"), RdtClass: api.String("gold"),
		}},
		StatusReason: "r",
	}
	want := proto.Clone(c).(*api.Container)
	want.Env = []string{"A=1"}
	if err := adjust.Apply(c, &api.ContainerAdjustment{Env: []*api.KeyValue{{Key: "A", Value: "1"}}}); err != nil {
		t.Fatal(err)
	}
	if !proto.Equal(c, want) {
		t.Errorf("got\n%s\nwant\n%s", text(c), text(want))
	}

	bare := &api.Container{Id: "bare"}
	if err := adjust.Apply(bare, &api.ContainerAdjustment{}); err != nil {
		t.Fatal(err)
	}
	if !proto.Equal(bare, &api.Container{Id: "bare"}) {
		t.Errorf("an empty adjustment filled in a bare container:\n%s", text(bare))
	}
}

// Every field of ContainerAdjustment, down to the leaves of the messages it
// holds, is set by some case: a field added to the API fails this test until
// a case shows what Apply does with it. Optional* wrappers count as leaves.
func TestApplyCasesCoverEveryField(t *testing.T) {
	covered := map[string]bool{}
	for _, c := range applyCases {
		if c.adjust != nil {
			populated(c.adjust.ProtoReflect(), "", covered)
		}
	}
	all := fieldPaths((&api.ContainerAdjustment{}).ProtoReflect().Descriptor(), "", nil)
	if len(all) < 100 {
		t.Fatalf("only %d field paths found: the walk is broken", len(all))
	}
	for _, p := range all {
		if !covered[p] {
			t.Errorf("no case sets %s", p)
		}
	}

	// Removal markers, for every keyed field that takes them.
	removes := map[string]bool{}
	for _, c := range applyCases {
		a := c.adjust
		for k := range a.GetAnnotations() {
			removes["annotations"] = removes["annotations"] || strings.HasPrefix(k, "-")
		}
		for _, m := range a.GetMounts() {
			removes["mounts"] = removes["mounts"] || strings.HasPrefix(m.Destination, "-")
		}
		for _, e := range a.GetEnv() {
			removes["env"] = removes["env"] || strings.HasPrefix(e.Key, "-")
		}
		for _, d := range a.GetLinux().GetDevices() {
			removes["linux.devices"] = removes["linux.devices"] || strings.HasPrefix(d.Path, "-")
		}
		for _, n := range a.GetLinux().GetNamespaces() {
			removes["linux.namespaces"] = removes["linux.namespaces"] || strings.HasPrefix(n.Type, "-")
		}
		for k := range a.GetLinux().GetSysctl() {
			removes["linux.sysctl"] = removes["linux.sysctl"] || strings.HasPrefix(k, "-")
		}
		for k := range a.GetLinux().GetNetDevices() {
			removes["linux.net_devices"] = removes["linux.net_devices"] || strings.HasPrefix(k, "-")
		}
	}
	for _, f := range []string{"annotations", "mounts", "env", "linux.devices", "linux.namespaces", "linux.sysctl", "linux.net_devices"} {
		if !removes[f] {
			t.Errorf("no case removes an entry of %s", f)
		}
	}
}

func isLeafMessage(md protoreflect.MessageDescriptor) bool {
	return strings.HasPrefix(string(md.Name()), "Optional")
}

// fieldPaths lists every field path under md ("linux.resources.cpu.shares").
func fieldPaths(md protoreflect.MessageDescriptor, prefix string, stack []protoreflect.FullName) []string {
	if slices.Contains(stack, md.FullName()) {
		return nil
	}
	stack = append(stack, md.FullName())
	var out []string
	fields := md.Fields()
	for i := range fields.Len() {
		fd := fields.Get(i)
		p := prefix + string(fd.Name())
		out = append(out, p)
		sub := fd.Message()
		if fd.IsMap() {
			sub = fd.MapValue().Message()
		}
		if sub != nil && !isLeafMessage(sub) {
			out = append(out, fieldPaths(sub, p+".", stack)...)
		}
	}
	return out
}

// populated records the paths of the fields set in m.
func populated(m protoreflect.Message, prefix string, out map[string]bool) {
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		p := prefix + string(fd.Name())
		out[p] = true
		switch {
		case fd.IsMap():
			if sub := fd.MapValue().Message(); sub != nil && !isLeafMessage(sub) {
				v.Map().Range(func(_ protoreflect.MapKey, mv protoreflect.Value) bool {
					if mv.Message().IsValid() {
						populated(mv.Message(), p+".", out)
					}
					return true
				})
			}
		case fd.IsList():
			if sub := fd.Message(); sub != nil && !isLeafMessage(sub) {
				for i := range v.List().Len() {
					populated(v.List().Get(i).Message(), p+".", out)
				}
			}
		case fd.Message() != nil && !isLeafMessage(fd.Message()):
			populated(v.Message(), p+".", out)
		}
		return true
	})
}

// An update that sets a list replaces the container's, as a runtime sets it
// in the spec: merging it twice (a listing that already showed it, then the
// update noted) leaves one entry, not two.
func TestMergeResourcesReplacesLists(t *testing.T) {
	c := &api.Container{Linux: &api.LinuxContainer{Resources: &api.LinuxResources{
		HugepageLimits: []*api.HugepageLimit{{PageSize: "1GB", Limit: 1}},
		Devices:        []*api.LinuxDeviceCgroup{{Allow: true, Access: "r"}},
	}}}
	res := &api.LinuxResources{
		HugepageLimits: []*api.HugepageLimit{{PageSize: "2MB", Limit: 4}},
		Devices:        []*api.LinuxDeviceCgroup{{Allow: false, Access: "rwm"}},
	}
	adjust.MergeResources(c, res)
	adjust.MergeResources(c, res)
	got := c.GetLinux().GetResources()
	if len(got.HugepageLimits) != 1 || got.HugepageLimits[0].PageSize != "2MB" {
		t.Errorf("hugepage limits %v, want the update's alone", got.HugepageLimits)
	}
	if len(got.Devices) != 1 || got.Devices[0].Access != "rwm" {
		t.Errorf("devices %v, want the update's alone", got.Devices)
	}
}
