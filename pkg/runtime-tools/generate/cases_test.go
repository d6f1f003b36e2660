package generate_test

import (
	"encoding/json"
	"os"

	rspec "github.com/opencontainers/runtime-spec/specs-go"

	"github.com/nri-handover/nri/api"
	"github.com/nri-handover/nri/test/ocigen"
)

// adjustCase is one adjustment applied to a copy of baseSpec (after
// prepare). want edits a copy of the same prepared spec into the expected
// result; a case without want is checked against upstream only. oursOnly
// marks cases where upstream's result depends on map order.
type adjustCase struct {
	name      string
	prepare   func(*rspec.Spec)
	adjust    *api.ContainerAdjustment
	callbacks bool // install test/ocigen's resolvers, injector, filter, checker
	want      func(*rspec.Spec)
	wantErr   string
	oursOnly  bool
}

func ptr[T any](v T) *T { return &v }

// baseSpec is what a runtime hands the generator before NRI: a bit of
// everything, so that adjustments meet existing entries.
func baseSpec() *rspec.Spec {
	return &rspec.Spec{
		Version: "1.2.0",
		Root:    &rspec.Root{Path: "rootfs"},
		Process: &rspec.Process{
			Args:    []string{"/bin/sh"},
			Env:     []string{"PATH=/bin", "A=1", "B=2"},
			Rlimits: []rspec.POSIXRlimit{{Type: "RLIMIT_NOFILE", Hard: 1024, Soft: 1024}},
		},
		Annotations: map[string]string{"keep": "1", "old": "x"},
		Mounts: []rspec.Mount{
			{Destination: "/proc", Type: "proc", Source: "proc"},
			{Destination: "/dev", Type: "tmpfs", Source: "tmpfs", Options: []string{"nosuid"}},
			{Destination: "/dev/shm", Type: "tmpfs", Source: "shm"},
		},
		Hooks: &rspec.Hooks{CreateRuntime: []rspec.Hook{{Path: "/bin/true"}}},
		Linux: &rspec.Linux{
			Namespaces: []rspec.LinuxNamespace{
				{Type: rspec.PIDNamespace}, {Type: rspec.NetworkNamespace, Path: "/var/run/netns/x"}, {Type: rspec.MountNamespace},
			},
			Devices:     []rspec.LinuxDevice{{Path: "/dev/fuse", Type: "c", Major: 10, Minor: 229}},
			Sysctl:      map[string]string{"net.a": "1"},
			CgroupsPath: "/kubepods/pod",
			Resources: &rspec.LinuxResources{
				Memory:  &rspec.LinuxMemory{Limit: ptr[int64](1000)},
				CPU:     &rspec.LinuxCPU{Shares: ptr[uint64](2), Cpus: "0-3"},
				Pids:    &rspec.LinuxPids{Limit: ptr[int64](100)},
				Devices: []rspec.LinuxDeviceCgroup{{Allow: false, Access: "rwm"}},
			},
		},
	}
}

func cloneSpec(s *rspec.Spec) *rspec.Spec {
	b, err := json.Marshal(s)
	if err != nil {
		panic(err)
	}
	out := &rspec.Spec{}
	if err := json.Unmarshal(b, out); err != nil {
		panic(err)
	}
	return out
}

func linuxAdjust(l *api.LinuxContainerAdjustment) *api.ContainerAdjustment {
	return &api.ContainerAdjustment{Linux: l}
}

func resourcesAdjust(r *api.LinuxResources) *api.ContainerAdjustment {
	return linuxAdjust(&api.LinuxContainerAdjustment{Resources: r})
}

func kv(k, v string) *api.KeyValue { return &api.KeyValue{Key: k, Value: v} }

var adjustCases = []adjustCase{
	{name: "nil adjustment", want: func(*rspec.Spec) {}},
	{
		name:   "empty adjustment",
		adjust: &api.ContainerAdjustment{Linux: &api.LinuxContainerAdjustment{Resources: &api.LinuxResources{}}},
		want:   func(*rspec.Spec) {},
	},

	// annotations
	{
		name:   "annotations added, replaced and removed",
		adjust: &api.ContainerAdjustment{Annotations: map[string]string{"new": "v", "keep": "2", api.MarkForRemoval("old"): ""}},
		want:   func(s *rspec.Spec) { s.Annotations = map[string]string{"keep": "2", "new": "v"} },
	},
	{
		name:    "annotations on a spec without any",
		prepare: func(s *rspec.Spec) { s.Annotations = nil },
		adjust:  &api.ContainerAdjustment{Annotations: map[string]string{"a": "1", api.MarkForRemoval("b"): ""}},
		want:    func(s *rspec.Spec) { s.Annotations = map[string]string{"a": "1"} },
	},
	{
		name:     "annotation removed by one plugin and set by a later one",
		adjust:   &api.ContainerAdjustment{Annotations: map[string]string{api.MarkForRemoval("keep"): "", "keep": "3"}},
		want:     func(s *rspec.Spec) { s.Annotations["keep"] = "3" },
		oursOnly: true,
	},
	{
		name:      "annotation filter drops",
		callbacks: true,
		adjust:    &api.ContainerAdjustment{Annotations: map[string]string{"drop.me": "x", "ok": "y"}},
		want:      func(s *rspec.Spec) { s.Annotations["ok"] = "y" },
	},
	{
		name:      "annotation filter rejects",
		callbacks: true,
		adjust:    &api.ContainerAdjustment{Annotations: map[string]string{ocigen.ForbiddenAnnotation: "x"}},
		wantErr:   "failed to adjust annotations in OCI Spec: annotation forbidden.test/key is not allowed",
	},

	// environment
	{
		name:   "env changed in place, removed and appended",
		adjust: &api.ContainerAdjustment{Env: []*api.KeyValue{kv("A", "10"), kv(api.MarkForRemoval("B"), ""), kv("C", "3"), kv("D", "4")}},
		want:   func(s *rspec.Spec) { s.Process.Env = []string{"PATH=/bin", "A=10", "C=3", "D=4"} },
	},
	{
		name:   "env: the last change of an existing variable wins",
		adjust: &api.ContainerAdjustment{Env: []*api.KeyValue{kv("A", "5"), kv("E", "1"), kv("A", "6"), kv("E", "2")}},
		want:   func(s *rspec.Spec) { s.Process.Env = []string{"PATH=/bin", "A=6", "B=2", "E=2"} },
	},
	{
		name:   "env: a new variable set, then marked for removal, is still set",
		adjust: &api.ContainerAdjustment{Env: []*api.KeyValue{kv("F", "1"), kv(api.MarkForRemoval("F"), "")}},
		want:   func(s *rspec.Spec) { s.Process.Env = append(s.Process.Env, "F=1") },
	},
	{
		name:   "env: an existing variable set, then marked for removal, is removed",
		adjust: &api.ContainerAdjustment{Env: []*api.KeyValue{kv("A", "7"), kv(api.MarkForRemoval("A"), "")}},
		want:   func(s *rspec.Spec) { s.Process.Env = []string{"PATH=/bin", "B=2"} },
	},
	{
		name:    "env: entries without '=' are dropped when the environment is rewritten",
		prepare: func(s *rspec.Spec) { s.Process.Env = append(s.Process.Env, "MALFORMED") },
		adjust:  &api.ContainerAdjustment{Env: []*api.KeyValue{kv("A", "1")}},
		want:    func(s *rspec.Spec) { s.Process.Env = []string{"PATH=/bin", "A=1", "B=2"} },
	},
	{
		name:    "env on a spec without a process",
		prepare: func(s *rspec.Spec) { s.Process = nil },
		adjust:  &api.ContainerAdjustment{Env: []*api.KeyValue{kv("A", "1"), kv(api.MarkForRemoval("Z"), "")}},
		want:    func(s *rspec.Spec) { s.Process = &rspec.Process{Env: []string{"A=1"}} },
	},

	// args, rlimits, OOM score, I/O priority, scheduler
	{
		name:   "args replaced",
		adjust: &api.ContainerAdjustment{Args: []string{"/bin/app", "-v"}},
		want:   func(s *rspec.Spec) { s.Process.Args = []string{"/bin/app", "-v"} },
	},
	{
		name:   "rlimits appended",
		adjust: &api.ContainerAdjustment{Rlimits: []*api.POSIXRlimit{{Type: "RLIMIT_NOFILE", Hard: 4096, Soft: 2048}, {Type: "RLIMIT_CORE"}}},
		want: func(s *rspec.Spec) {
			s.Process.Rlimits = append(s.Process.Rlimits,
				rspec.POSIXRlimit{Type: "RLIMIT_NOFILE", Hard: 4096, Soft: 2048}, rspec.POSIXRlimit{Type: "RLIMIT_CORE"})
		},
	},
	{
		name:   "OOM score adjustment",
		adjust: linuxAdjust(&api.LinuxContainerAdjustment{OomScoreAdj: api.Int(-998)}),
		want:   func(s *rspec.Spec) { s.Process.OOMScoreAdj = ptr(-998) },
	},
	{
		name:    "OOM score left alone when not adjusted",
		prepare: func(s *rspec.Spec) { s.Process.OOMScoreAdj = ptr(5) },
		adjust:  linuxAdjust(&api.LinuxContainerAdjustment{CgroupsPath: ""}),
		want:    func(*rspec.Spec) {},
	},
	{
		name: "I/O priority",
		adjust: linuxAdjust(&api.LinuxContainerAdjustment{IoPriority: &api.LinuxIOPriority{
			Class: api.IOPrioClass_IOPRIO_CLASS_RT, Priority: 3}}),
		want: func(s *rspec.Spec) {
			s.Process.IOPriority = &rspec.LinuxIOPriority{Class: rspec.IOPRIO_CLASS_RT, Priority: 3}
		},
	},
	{
		name:    "I/O priority without a class clears it",
		prepare: func(s *rspec.Spec) { s.Process.IOPriority = &rspec.LinuxIOPriority{Class: rspec.IOPRIO_CLASS_BE} },
		adjust:  linuxAdjust(&api.LinuxContainerAdjustment{IoPriority: &api.LinuxIOPriority{Priority: 1}}),
		want:    func(s *rspec.Spec) { s.Process.IOPriority = nil },
	},
	{
		name: "scheduler",
		adjust: linuxAdjust(&api.LinuxContainerAdjustment{Scheduler: &api.LinuxScheduler{
			Policy: api.LinuxSchedulerPolicy_SCHED_FIFO, Priority: 10, Nice: -1,
			Flags: []api.LinuxSchedulerFlag{api.LinuxSchedulerFlag_SCHED_FLAG_RESET_ON_FORK}}}),
		want: func(s *rspec.Spec) {
			s.Process.Scheduler = &rspec.Scheduler{Policy: rspec.SchedFIFO, Priority: 10, Nice: -1,
				Flags: []rspec.LinuxSchedulerFlag{rspec.SchedFlagResetOnFork}}
		},
	},
	{
		name:    "scheduler without a policy clears it",
		prepare: func(s *rspec.Spec) { s.Process.Scheduler = &rspec.Scheduler{Policy: rspec.SchedRR} },
		adjust:  linuxAdjust(&api.LinuxContainerAdjustment{Scheduler: &api.LinuxScheduler{Nice: 3}}),
		want:    func(s *rspec.Spec) { s.Process.Scheduler = nil },
	},

	// hooks
	{
		name: "hooks of every kind appended",
		adjust: &api.ContainerAdjustment{Hooks: &api.Hooks{
			Prestart:        []*api.Hook{{Path: "/h/prestart", Args: []string{"a"}, Env: []string{"E=1"}, Timeout: api.Int(5)}},
			CreateRuntime:   []*api.Hook{{Path: "/h/create-runtime"}},
			CreateContainer: []*api.Hook{{Path: "/h/create-container"}},
			StartContainer:  []*api.Hook{{Path: "/h/start-container"}},
			Poststart:       []*api.Hook{{Path: "/h/poststart"}},
			Poststop:        []*api.Hook{{Path: "/h/poststop"}, {Path: "/h/poststop2"}},
		}},
		want: func(s *rspec.Spec) {
			h := s.Hooks
			h.Prestart = []rspec.Hook{{Path: "/h/prestart", Args: []string{"a"}, Env: []string{"E=1"}, Timeout: ptr(5)}} //nolint:staticcheck
			h.CreateRuntime = append(h.CreateRuntime, rspec.Hook{Path: "/h/create-runtime"})
			h.CreateContainer = []rspec.Hook{{Path: "/h/create-container"}}
			h.StartContainer = []rspec.Hook{{Path: "/h/start-container"}}
			h.Poststart = []rspec.Hook{{Path: "/h/poststart"}}
			h.Poststop = []rspec.Hook{{Path: "/h/poststop"}, {Path: "/h/poststop2"}}
		},
	},
	{
		name:    "hooks on a spec without any",
		prepare: func(s *rspec.Spec) { s.Hooks = nil },
		adjust:  &api.ContainerAdjustment{Hooks: &api.Hooks{StartContainer: []*api.Hook{{Path: "/h/s"}}}},
		want:    func(s *rspec.Spec) { s.Hooks = &rspec.Hooks{StartContainer: []rspec.Hook{{Path: "/h/s"}}} },
	},

	// CDI
	{
		name:      "CDI devices injected by the runtime",
		callbacks: true,
		adjust:    &api.ContainerAdjustment{CDIDevices: []*api.CDIDevice{{Name: "vendor.com/gpu=0"}, {Name: "vendor.com/gpu=1"}}},
		want:      func(s *rspec.Spec) { s.Annotations["cdi.test/injected"] = "vendor.com/gpu=0,vendor.com/gpu=1" },
	},
	{
		name:      "CDI injection failing",
		callbacks: true,
		adjust:    &api.ContainerAdjustment{CDIDevices: []*api.CDIDevice{{Name: "vendor.com/bad=0"}}},
		wantErr:   `unresolvable CDI device "vendor.com/bad=0"`,
	},
	{
		name:   "CDI devices without an injector are ignored",
		adjust: &api.ContainerAdjustment{CDIDevices: []*api.CDIDevice{{Name: "vendor.com/gpu=0"}}},
		want:   func(*rspec.Spec) {},
	},

	// devices
	{
		name: "devices added, replaced and removed",
		adjust: linuxAdjust(&api.LinuxContainerAdjustment{Devices: []*api.LinuxDevice{
			{Path: "/dev/foo", Type: "c", Major: 1, Minor: 2, FileMode: api.FileMode(os.FileMode(0o620)), Uid: api.UInt32(uint32(1)), Gid: api.UInt32(uint32(2))},
			{Path: "/dev/fuse", Type: "c", Major: 10, Minor: 230},
			{Path: "/dev/bar", Type: "b", Major: 8, Minor: 1},
			{Path: api.MarkForRemoval("/dev/bar")},
		}}),
		want: func(s *rspec.Spec) {
			s.Linux.Devices = []rspec.LinuxDevice{
				{Path: "/dev/foo", Type: "c", Major: 1, Minor: 2, FileMode: ptr[os.FileMode](0o620), UID: ptr[uint32](1), GID: ptr[uint32](2)},
				{Path: "/dev/fuse", Type: "c", Major: 10, Minor: 230},
			}
			r := s.Linux.Resources
			r.Devices = append(r.Devices,
				rspec.LinuxDeviceCgroup{Allow: true, Type: "c", Major: ptr[int64](1), Minor: ptr[int64](2), Access: "rw"},
				rspec.LinuxDeviceCgroup{Allow: true, Type: "c", Major: ptr[int64](10), Minor: ptr[int64](230), Access: "rw"},
				rspec.LinuxDeviceCgroup{Allow: true, Type: "b", Major: ptr[int64](8), Minor: ptr[int64](1), Access: "rwm"})
		},
	},
	{
		name:   "cgroups path",
		adjust: linuxAdjust(&api.LinuxContainerAdjustment{CgroupsPath: "/kubepods/other"}),
		want:   func(s *rspec.Spec) { s.Linux.CgroupsPath = "/kubepods/other" },
	},

	// seccomp
	{
		name: "seccomp policy replaced",
		prepare: func(s *rspec.Spec) {
			s.Linux.Seccomp = &rspec.LinuxSeccomp{DefaultAction: rspec.ActKill}
		},
		adjust: linuxAdjust(&api.LinuxContainerAdjustment{SeccompPolicy: &api.LinuxSeccomp{
			DefaultAction: "SCMP_ACT_ERRNO", DefaultErrno: api.UInt32(uint32(1)),
			Architectures: []string{"SCMP_ARCH_X86_64"}, Flags: []string{"SECCOMP_FILTER_FLAG_LOG"},
			ListenerPath: "/run/seccomp.sock", ListenerMetadata: "meta",
			Syscalls: []*api.LinuxSyscall{{Names: []string{"mkdir"}, Action: "SCMP_ACT_ALLOW", ErrnoRet: api.UInt32(uint32(2)),
				Args: []*api.LinuxSeccompArg{{Index: 1, Value: 2, ValueTwo: 3, Op: "SCMP_CMP_EQ"}}}},
		}}),
		want: func(s *rspec.Spec) {
			s.Linux.Seccomp = &rspec.LinuxSeccomp{
				DefaultAction: rspec.ActErrno, Architectures: []rspec.Arch{rspec.ArchX86_64},
				Flags: []rspec.LinuxSeccompFlag{rspec.LinuxSeccompFlagLog}, ListenerPath: "/run/seccomp.sock", ListenerMetadata: "meta",
				Syscalls: []rspec.LinuxSyscall{{Names: []string{"mkdir"}, Action: rspec.ActAllow, ErrnoRet: ptr[uint](2),
					Args: []rspec.LinuxSeccompArg{{Index: 1, Value: 2, ValueTwo: 3, Op: rspec.OpEqualTo}}}},
			}
		},
	},

	// namespaces
	{
		name: "namespaces replaced, added and removed",
		adjust: linuxAdjust(&api.LinuxContainerAdjustment{Namespaces: []*api.LinuxNamespace{
			{Type: "network", Path: "/var/run/netns/y"}, {Type: "ipc"}, {Type: api.MarkForRemoval("pid")},
		}}),
		want: func(s *rspec.Spec) {
			s.Linux.Namespaces = []rspec.LinuxNamespace{
				{Type: rspec.NetworkNamespace, Path: "/var/run/netns/y"}, {Type: rspec.MountNamespace}, {Type: rspec.IPCNamespace},
			}
		},
	},
	{
		name:    "unknown namespace type",
		adjust:  linuxAdjust(&api.LinuxContainerAdjustment{Namespaces: []*api.LinuxNamespace{{Type: "bogus"}}}),
		wantErr: `unrecognized namespace "bogus"`,
	},

	// sysctl
	{
		name:   "sysctls set, replaced and removed",
		adjust: linuxAdjust(&api.LinuxContainerAdjustment{Sysctl: map[string]string{"net.b": "2", api.MarkForRemoval("net.a"): "", "kernel.x": "y"}}),
		want:   func(s *rspec.Spec) { s.Linux.Sysctl = map[string]string{"net.b": "2", "kernel.x": "y"} },
	},
	{
		name:     "sysctl removed by one plugin and set by a later one",
		adjust:   linuxAdjust(&api.LinuxContainerAdjustment{Sysctl: map[string]string{api.MarkForRemoval("net.a"): "", "net.a": "9"}}),
		want:     func(s *rspec.Spec) { s.Linux.Sysctl["net.a"] = "9" },
		oursOnly: true,
	},

	// net devices
	{
		name: "net devices moved in and taken back",
		prepare: func(s *rspec.Spec) {
			s.Linux.NetDevices = map[string]rspec.LinuxNetDevice{"eth9": {Name: "n9"}}
		},
		adjust: linuxAdjust(&api.LinuxContainerAdjustment{NetDevices: map[string]*api.LinuxNetDevice{
			"eth1": {Name: "net1"}, api.MarkForRemoval("eth9"): nil, "eth2": nil,
		}}),
		want: func(s *rspec.Spec) { s.Linux.NetDevices = map[string]rspec.LinuxNetDevice{"eth1": {Name: "net1"}} },
	},

	// memory policy
	{
		name: "memory policy",
		adjust: linuxAdjust(&api.LinuxContainerAdjustment{MemoryPolicy: &api.LinuxMemoryPolicy{
			Mode: api.MpolMode_MPOL_BIND, Nodes: "0-1", Flags: []api.MpolFlag{api.MpolFlag_MPOL_F_STATIC_NODES}}}),
		want: func(s *rspec.Spec) {
			s.Linux.MemoryPolicy = &rspec.LinuxMemoryPolicy{Mode: rspec.MpolBind, Nodes: "0-1",
				Flags: []rspec.MemoryPolicyFlagType{rspec.MpolFStaticNodes}}
		},
	},
	{
		name:   "default memory policy",
		adjust: linuxAdjust(&api.LinuxContainerAdjustment{MemoryPolicy: &api.LinuxMemoryPolicy{}}),
		want:   func(s *rspec.Spec) { s.Linux.MemoryPolicy = &rspec.LinuxMemoryPolicy{Mode: rspec.MpolDefault} },
	},

	// resources
	{
		name: "CPU",
		adjust: resourcesAdjust(&api.LinuxResources{Cpu: &api.LinuxCPU{
			Shares: api.UInt64(512), Quota: api.Int64(50000), Period: api.UInt64(100000),
			RealtimeRuntime: api.Int64(950), RealtimePeriod: api.UInt64(1000), Cpus: "4-7", Mems: "1"}}),
		want: func(s *rspec.Spec) {
			s.Linux.Resources.CPU = &rspec.LinuxCPU{Shares: ptr[uint64](512), Quota: ptr[int64](50000), Period: ptr[uint64](100000),
				RealtimeRuntime: ptr[int64](950), RealtimePeriod: ptr[uint64](1000), Cpus: "4-7", Mems: "1"}
		},
	},
	{
		name:   "CPU fields not given are kept",
		adjust: resourcesAdjust(&api.LinuxResources{Cpu: &api.LinuxCPU{Quota: api.Int64(1000)}}),
		want:   func(s *rspec.Spec) { s.Linux.Resources.CPU.Quota = ptr[int64](1000) },
	},
	{
		name: "memory: the limit also limits swap, other settings are not applied",
		adjust: resourcesAdjust(&api.LinuxResources{Memory: &api.LinuxMemory{
			Limit: api.Int64(1 << 30), Reservation: api.Int64(1 << 20), Swappiness: api.UInt64(10), DisableOomKiller: api.Bool(true)}}),
		want: func(s *rspec.Spec) {
			s.Linux.Resources.Memory = &rspec.LinuxMemory{Limit: ptr[int64](1 << 30), Swap: ptr[int64](1 << 30)}
		},
	},
	{
		name:   "memory limit 0 is not applied",
		adjust: resourcesAdjust(&api.LinuxResources{Memory: &api.LinuxMemory{Limit: api.Int64(0)}}),
		want:   func(*rspec.Spec) {},
	},
	{
		name: "hugepage limits set and replaced",
		prepare: func(s *rspec.Spec) {
			s.Linux.Resources.HugepageLimits = []rspec.LinuxHugepageLimit{{Pagesize: "1GB", Limit: 1}}
		},
		adjust: resourcesAdjust(&api.LinuxResources{HugepageLimits: []*api.HugepageLimit{{PageSize: "2MB", Limit: 4 << 20}, {PageSize: "1GB", Limit: 0}}}),
		want: func(s *rspec.Spec) {
			s.Linux.Resources.HugepageLimits = []rspec.LinuxHugepageLimit{{Pagesize: "1GB", Limit: 0}, {Pagesize: "2MB", Limit: 4 << 20}}
		},
	},
	{
		name:      "resource checker drops hugepage limits",
		callbacks: true,
		adjust:    resourcesAdjust(&api.LinuxResources{HugepageLimits: []*api.HugepageLimit{{PageSize: "2MB", Limit: 1}}}),
		want:      func(*rspec.Spec) {},
	},
	{
		name:      "resource checker rejects",
		callbacks: true,
		adjust:    resourcesAdjust(&api.LinuxResources{Cpu: &api.LinuxCPU{Quota: api.Int64(1)}}),
		wantErr:   "failed to adjust resources in OCI Spec: cpu quota 1 is too small",
	},
	{
		name:   "unified",
		adjust: resourcesAdjust(&api.LinuxResources{Unified: map[string]string{"memory.high": "100M", "io.weight": "10"}}),
		want: func(s *rspec.Spec) {
			s.Linux.Resources.Unified = map[string]string{"memory.high": "100M", "io.weight": "10"}
		},
	},
	{
		name:   "PID limit",
		adjust: resourcesAdjust(&api.LinuxResources{Pids: &api.LinuxPids{Limit: 200}}),
		want:   func(s *rspec.Spec) { s.Linux.Resources.Pids.Limit = ptr[int64](200) },
	},
	{
		name:   "unlimited PIDs leaves an existing limit",
		adjust: resourcesAdjust(&api.LinuxResources{Pids: &api.LinuxPids{Limit: -1}}),
		want:   func(*rspec.Spec) {},
	},
	{
		name:    "unlimited PIDs on a spec without a PID section",
		prepare: func(s *rspec.Spec) { s.Linux.Resources.Pids = nil },
		adjust:  resourcesAdjust(&api.LinuxResources{Pids: &api.LinuxPids{Limit: -1}}),
		want:    func(s *rspec.Spec) { s.Linux.Resources.Pids = &rspec.LinuxPids{} },
	},
	{
		name: "device cgroup rules appended",
		adjust: resourcesAdjust(&api.LinuxResources{Devices: []*api.LinuxDeviceCgroup{
			{Allow: true, Type: "c", Major: api.Int64(1), Minor: api.Int64(3), Access: "rw"}, {Allow: false, Type: "a"}}}),
		want: func(s *rspec.Spec) {
			r := s.Linux.Resources
			r.Devices = append(r.Devices, rspec.LinuxDeviceCgroup{Allow: true, Type: "c", Major: ptr[int64](1), Minor: ptr[int64](3), Access: "rw"},
				rspec.LinuxDeviceCgroup{Type: "a"})
		},
	},
	{
		name:    "resources on a spec without a Linux section",
		prepare: func(s *rspec.Spec) { s.Linux = nil },
		adjust:  resourcesAdjust(&api.LinuxResources{Cpu: &api.LinuxCPU{Cpus: "1"}, Pids: &api.LinuxPids{Limit: 5}}),
		want: func(s *rspec.Spec) {
			s.Linux = &rspec.Linux{Resources: &rspec.LinuxResources{CPU: &rspec.LinuxCPU{Cpus: "1"}, Pids: &rspec.LinuxPids{Limit: ptr[int64](5)}}}
		},
	},

	// block I/O and RDT classes
	{
		name:      "block I/O class resolved",
		callbacks: true,
		adjust:    resourcesAdjust(&api.LinuxResources{BlockioClass: api.String("gold")}),
		want:      func(s *rspec.Spec) { s.Linux.Resources.BlockIO = &rspec.LinuxBlockIO{Weight: ptr[uint16](104)} },
	},
	{
		name:      "empty block I/O class clears",
		callbacks: true,
		prepare:   func(s *rspec.Spec) { s.Linux.Resources.BlockIO = &rspec.LinuxBlockIO{Weight: ptr[uint16](7)} },
		adjust:    resourcesAdjust(&api.LinuxResources{BlockioClass: api.String("")}),
		want:      func(s *rspec.Spec) { s.Linux.Resources.BlockIO = nil },
	},
	{
		name:      "unknown block I/O class",
		callbacks: true,
		adjust:    resourcesAdjust(&api.LinuxResources{BlockioClass: api.String(ocigen.FailingClass)}),
		wantErr:   `failed to adjust BlockIO class in OCI Spec: unknown block I/O class "no-such-class"`,
	},
	{
		name:   "classes without resolvers are ignored",
		adjust: resourcesAdjust(&api.LinuxResources{BlockioClass: api.String("gold"), RdtClass: api.String("gold")}),
		want:   func(*rspec.Spec) {},
	},
	{
		name:      "RDT class resolved",
		callbacks: true,
		adjust:    resourcesAdjust(&api.LinuxResources{RdtClass: api.String("gold")}),
		want:      func(s *rspec.Spec) { s.Linux.IntelRdt = &rspec.LinuxIntelRdt{ClosID: "gold"} },
	},
	{
		name:      "empty RDT class clears",
		callbacks: true,
		prepare:   func(s *rspec.Spec) { s.Linux.IntelRdt = &rspec.LinuxIntelRdt{ClosID: "old"} },
		adjust:    resourcesAdjust(&api.LinuxResources{RdtClass: api.String("")}),
		want:      func(s *rspec.Spec) { s.Linux.IntelRdt = nil },
	},
	{
		name:      "unknown RDT class",
		callbacks: true,
		adjust:    resourcesAdjust(&api.LinuxResources{RdtClass: api.String(ocigen.FailingClass)}),
		wantErr:   `failed to adjust RDT class in OCI Spec: unknown RDT class "no-such-class"`,
	},

	// explicit RDT
	{
		name: "RDT settings",
		adjust: linuxAdjust(&api.LinuxContainerAdjustment{Rdt: &api.LinuxRdt{
			ClosId: api.String("foo"), Schemata: api.RepeatedString([]string{"L3:0=f"}), EnableMonitoring: api.Bool(true)}}),
		want: func(s *rspec.Spec) {
			s.Linux.IntelRdt = &rspec.LinuxIntelRdt{ClosID: "foo", Schemata: []string{"L3:0=f"}, EnableMonitoring: true}
		},
	},
	{
		name:    "RDT removed",
		prepare: func(s *rspec.Spec) { s.Linux.IntelRdt = &rspec.LinuxIntelRdt{ClosID: "bar", Schemata: []string{"x"}} },
		adjust:  linuxAdjust(&api.LinuxContainerAdjustment{Rdt: &api.LinuxRdt{Remove: true}}),
		want:    func(s *rspec.Spec) { s.Linux.IntelRdt = nil },
	},
	{
		name:    "RDT removed and set again",
		prepare: func(s *rspec.Spec) { s.Linux.IntelRdt = &rspec.LinuxIntelRdt{ClosID: "bar", Schemata: []string{"x"}} },
		adjust:  linuxAdjust(&api.LinuxContainerAdjustment{Rdt: &api.LinuxRdt{Remove: true, EnableMonitoring: api.Bool(true)}}),
		want:    func(s *rspec.Spec) { s.Linux.IntelRdt = &rspec.LinuxIntelRdt{EnableMonitoring: true} },
	},
	{
		name:      "RDT class, then explicit schemata on top",
		callbacks: true,
		adjust: linuxAdjust(&api.LinuxContainerAdjustment{
			Resources: &api.LinuxResources{RdtClass: api.String("gold")},
			Rdt:       &api.LinuxRdt{Schemata: api.RepeatedString([]string{"MB:0=50"})}}),
		want: func(s *rspec.Spec) {
			s.Linux.IntelRdt = &rspec.LinuxIntelRdt{ClosID: "gold", Schemata: []string{"MB:0=50"}}
		},
	},

	// mounts
	{
		name: "mounts added, replaced, removed and sorted",
		adjust: &api.ContainerAdjustment{Mounts: []*api.Mount{
			{Destination: "/a/b/c", Source: "/host/c", Type: "bind", Options: []string{"rbind", "ro"}},
			{Destination: "/a", Source: "/host/a", Type: "bind"},
			{Destination: "/dev", Source: "devtmpfs", Type: "devtmpfs"},
			{Destination: api.MarkForRemoval("/dev/shm")},
			{Destination: "/a/b", Source: "/host/b", Type: "bind", Options: []string{"rprivate"}},
		}},
		want: func(s *rspec.Spec) {
			s.Mounts = []rspec.Mount{
				{Destination: "/a", Source: "/host/a", Type: "bind"},
				{Destination: "/dev", Source: "devtmpfs", Type: "devtmpfs"},
				{Destination: "/proc", Type: "proc", Source: "proc"},
				{Destination: "/a/b", Source: "/host/b", Type: "bind", Options: []string{"rprivate"}},
				{Destination: "/a/b/c", Source: "/host/c", Type: "bind", Options: []string{"rbind", "ro"}},
			}
		},
	},
	{
		// Whether "/" is shared on the host decides: compared with upstream.
		name: "mounts asking for rslave and rshared propagation",
		adjust: &api.ContainerAdjustment{Mounts: []*api.Mount{
			{Destination: "/s", Source: "/", Type: "bind", Options: []string{"rbind", "rslave"}},
			{Destination: "/t", Source: "/", Type: "bind", Options: []string{"rbind"}},
			{Destination: "/u", Source: "/", Type: "bind", Options: []string{"rbind", "rshared"}},
		}},
	},

	// everything together
	{
		name:      "every field at once",
		callbacks: true,
		adjust: &api.ContainerAdjustment{
			Annotations: map[string]string{"all": "1", api.MarkForRemoval("old"): ""},
			Mounts:      []*api.Mount{{Destination: "/data", Source: "/host/data", Type: "bind", Options: []string{"rbind"}}},
			Env:         []*api.KeyValue{kv("ALL", "1"), kv(api.MarkForRemoval("A"), "")},
			Hooks:       &api.Hooks{Poststop: []*api.Hook{{Path: "/h/stop"}}},
			Rlimits:     []*api.POSIXRlimit{{Type: "RLIMIT_NPROC", Hard: 9, Soft: 9}},
			CDIDevices:  []*api.CDIDevice{{Name: "vendor.com/x=1"}},
			Args:        []string{"/all"},
			Linux: &api.LinuxContainerAdjustment{
				Devices:      []*api.LinuxDevice{{Path: "/dev/all", Type: "c", Major: 3, Minor: 4}},
				CgroupsPath:  "/all",
				OomScoreAdj:  api.Int(10),
				IoPriority:   &api.LinuxIOPriority{Class: api.IOPrioClass_IOPRIO_CLASS_IDLE},
				Namespaces:   []*api.LinuxNamespace{{Type: "uts"}},
				Sysctl:       map[string]string{"all": "1"},
				NetDevices:   map[string]*api.LinuxNetDevice{"eth5": {Name: "all"}},
				Scheduler:    &api.LinuxScheduler{Policy: api.LinuxSchedulerPolicy_SCHED_BATCH},
				Rdt:          &api.LinuxRdt{EnableMonitoring: api.Bool(true)},
				MemoryPolicy: &api.LinuxMemoryPolicy{Mode: api.MpolMode_MPOL_INTERLEAVE, Nodes: "0"},
				Resources: &api.LinuxResources{
					Memory: &api.LinuxMemory{Limit: api.Int64(4096)}, Cpu: &api.LinuxCPU{Cpus: "2"},
					BlockioClass: api.String("silver"), RdtClass: api.String("gold"),
					Unified: map[string]string{"cpu.idle": "1"}, Pids: &api.LinuxPids{Limit: 7},
				},
			},
		},
	},
}
