package api

import (
	"testing"

	"google.golang.org/protobuf/proto"
)

func TestContainerAdjustmentBuilders(t *testing.T) {
	mnt := &Mount{Destination: "/data", Source: "/host", Type: "bind", Options: []string{"rbind"}}
	dev := &LinuxDevice{Path: "/dev/fuse", Type: "c", Major: 10, Minor: 229}
	ns := &LinuxNamespace{Type: "network", Path: "/proc/1/ns/net"}
	hook := &Hook{Path: "/bin/hook"}
	ioprio := &LinuxIOPriority{Class: IOPrioClass_IOPRIO_CLASS_BE, Priority: 4}
	seccomp := &LinuxSeccomp{DefaultAction: "SCMP_ACT_ERRNO"}
	sched := &LinuxScheduler{Policy: LinuxSchedulerPolicy_SCHED_FIFO, Priority: 10}
	oom := 500
	linux := func(l *LinuxContainerAdjustment) *ContainerAdjustment { return &ContainerAdjustment{Linux: l} }
	res := func(r *LinuxResources) *ContainerAdjustment { return linux(&LinuxContainerAdjustment{Resources: r}) }

	for _, tc := range []struct {
		name  string
		build func(a *ContainerAdjustment)
		want  *ContainerAdjustment
	}{
		{"annotation add and remove", func(a *ContainerAdjustment) {
			a.RemoveAnnotation("old")
			a.AddAnnotation("new", "v")
		}, &ContainerAdjustment{Annotations: map[string]string{"-old": "", "new": "v"}}},
		{"mounts", func(a *ContainerAdjustment) {
			a.RemoveMount("/data")
			a.AddMount(mnt)
		}, &ContainerAdjustment{Mounts: []*Mount{{Destination: "-/data"}, mnt}}},
		{"env", func(a *ContainerAdjustment) {
			a.RemoveEnv("PATH")
			a.AddEnv("PATH", "/bin")
		}, &ContainerAdjustment{Env: []*KeyValue{{Key: "-PATH"}, {Key: "PATH", Value: "/bin"}}}},
		{"set args", func(a *ContainerAdjustment) { a.SetArgs([]string{"sh", "-c"}) },
			&ContainerAdjustment{Args: []string{"sh", "-c"}}},
		{"update args", func(a *ContainerAdjustment) { a.UpdateArgs([]string{"sh"}) },
			&ContainerAdjustment{Args: []string{"", "sh"}}},
		{"hooks accumulate", func(a *ContainerAdjustment) {
			a.AddHooks(&Hooks{Prestart: []*Hook{hook}, Poststop: []*Hook{hook}})
			a.AddHooks(&Hooks{Prestart: []*Hook{hook}})
			a.AddHooks(nil)
		}, &ContainerAdjustment{Hooks: &Hooks{Prestart: []*Hook{hook, hook}, Poststop: []*Hook{hook}}}},
		{"rlimit", func(a *ContainerAdjustment) { a.AddRlimit("RLIMIT_NOFILE", 1024, 512) },
			&ContainerAdjustment{Rlimits: []*POSIXRlimit{{Type: "RLIMIT_NOFILE", Hard: 1024, Soft: 512}}}},
		{"devices", func(a *ContainerAdjustment) {
			a.RemoveDevice("/dev/fuse")
			a.AddDevice(dev)
		}, linux(&LinuxContainerAdjustment{Devices: []*LinuxDevice{{Path: "-/dev/fuse"}, dev}})},
		{"cdi device", func(a *ContainerAdjustment) { a.AddCDIDevice(&CDIDevice{Name: "vendor.com/gpu=0"}) },
			&ContainerAdjustment{CDIDevices: []*CDIDevice{{Name: "vendor.com/gpu=0"}}}},
		{"namespaces", func(a *ContainerAdjustment) {
			a.RemoveNamespace(&LinuxNamespace{Type: "ipc"})
			a.AddOrReplaceNamespace(ns)
		}, linux(&LinuxContainerAdjustment{Namespaces: []*LinuxNamespace{{Type: "-ipc"}, ns}})},
		{"net devices", func(a *ContainerAdjustment) {
			a.AddLinuxNetDevice("eth1", &LinuxNetDevice{Name: "net1"})
			a.AddLinuxNetDevice("eth2", nil)
			a.RemoveLinuxNetDevice("eth3")
		}, linux(&LinuxContainerAdjustment{NetDevices: map[string]*LinuxNetDevice{"eth1": {Name: "net1"}, "-eth3": nil}})},
		{"memory policy", func(a *ContainerAdjustment) {
			a.SetLinuxMemoryPolicy(MpolMode_MPOL_BIND, "0-1", MpolFlag_MPOL_F_STATIC_NODES)
		}, linux(&LinuxContainerAdjustment{MemoryPolicy: &LinuxMemoryPolicy{Mode: MpolMode_MPOL_BIND, Nodes: "0-1", Flags: []MpolFlag{MpolFlag_MPOL_F_STATIC_NODES}}})},
		{"cgroups path", func(a *ContainerAdjustment) { a.SetLinuxCgroupsPath("/kubepods/x") },
			linux(&LinuxContainerAdjustment{CgroupsPath: "/kubepods/x"})},
		{"oom score adj", func(a *ContainerAdjustment) { a.SetLinuxOomScoreAdj(&oom) },
			linux(&LinuxContainerAdjustment{OomScoreAdj: &OptionalInt{Value: 500}})},
		{"oom score adj unset", func(a *ContainerAdjustment) {
			a.SetLinuxOomScoreAdj(&oom)
			a.SetLinuxOomScoreAdj(nil)
		}, linux(&LinuxContainerAdjustment{})},
		{"io priority", func(a *ContainerAdjustment) { a.SetLinuxIOPriority(ioprio) },
			linux(&LinuxContainerAdjustment{IoPriority: ioprio})},
		{"seccomp", func(a *ContainerAdjustment) { a.SetLinuxSeccompPolicy(seccomp) },
			linux(&LinuxContainerAdjustment{SeccompPolicy: seccomp})},
		{"sysctl", func(a *ContainerAdjustment) {
			a.SetLinuxSysctl("net.core.somaxconn", "1024")
			a.SetLinuxSysctl("kernel.shmmax", "1")
		}, linux(&LinuxContainerAdjustment{Sysctl: map[string]string{"net.core.somaxconn": "1024", "kernel.shmmax": "1"}})},
		{"scheduler", func(a *ContainerAdjustment) { a.SetLinuxScheduler(sched) },
			linux(&LinuxContainerAdjustment{Scheduler: sched})},
		{"rdt", func(a *ContainerAdjustment) {
			a.SetLinuxRDTClosID("gold")
			a.SetLinuxRDTSchemata([]string{"L3:0=ff"})
			a.SetLinuxRDTEnableMonitoring(true)
		}, linux(&LinuxContainerAdjustment{Rdt: &LinuxRdt{
			ClosId:           &OptionalString{Value: "gold"},
			Schemata:         &OptionalRepeatedString{Value: []string{"L3:0=ff"}},
			EnableMonitoring: &OptionalBool{Value: true},
		}})},
		{"rdt remove", func(a *ContainerAdjustment) { a.RemoveLinuxRDT() },
			linux(&LinuxContainerAdjustment{Rdt: &LinuxRdt{Remove: true}})},
		{"memory", func(a *ContainerAdjustment) {
			a.SetLinuxMemoryLimit(1 << 30)
			a.SetLinuxMemoryReservation(1 << 29)
			a.SetLinuxMemorySwap(1 << 31)
			a.SetLinuxMemoryKernel(1)
			a.SetLinuxMemoryKernelTCP(2)
			a.SetLinuxMemorySwappiness(60)
			a.SetLinuxMemoryDisableOomKiller()
			a.SetLinuxMemoryUseHierarchy()
		}, res(&LinuxResources{Memory: &LinuxMemory{
			Limit:            &OptionalInt64{Value: 1 << 30},
			Reservation:      &OptionalInt64{Value: 1 << 29},
			Swap:             &OptionalInt64{Value: 1 << 31},
			Kernel:           &OptionalInt64{Value: 1},
			KernelTcp:        &OptionalInt64{Value: 2},
			Swappiness:       &OptionalUInt64{Value: 60},
			DisableOomKiller: &OptionalBool{Value: true},
			UseHierarchy:     &OptionalBool{Value: true},
		}})},
		{"cpu", func(a *ContainerAdjustment) {
			a.SetLinuxCPUShares(1024)
			a.SetLinuxCPUQuota(50000)
			a.SetLinuxCPUPeriod(100000)
			a.SetLinuxCPURealtimeRuntime(1)
			a.SetLinuxCPURealtimePeriod(2)
			a.SetLinuxCPUSetCPUs("0-3")
			a.SetLinuxCPUSetMems("0")
		}, res(&LinuxResources{Cpu: &LinuxCPU{
			Shares:          &OptionalUInt64{Value: 1024},
			Quota:           &OptionalInt64{Value: 50000},
			Period:          &OptionalUInt64{Value: 100000},
			RealtimeRuntime: &OptionalInt64{Value: 1},
			RealtimePeriod:  &OptionalUInt64{Value: 2},
			Cpus:            "0-3",
			Mems:            "0",
		}})},
		{"other resources", func(a *ContainerAdjustment) {
			a.SetLinuxPidLimits(100)
			a.AddLinuxHugepageLimit("2MB", 4096)
			a.AddLinuxHugepageLimit("1GB", 0)
			a.SetLinuxBlockIOClass("slow")
			a.SetLinuxRDTClass("gold")
			a.AddLinuxUnified("memory.high", "1G")
		}, res(&LinuxResources{
			Pids:           &LinuxPids{Limit: 100},
			HugepageLimits: []*HugepageLimit{{PageSize: "2MB", Limit: 4096}, {PageSize: "1GB"}},
			BlockioClass:   &OptionalString{Value: "slow"},
			RdtClass:       &OptionalString{Value: "gold"},
			Unified:        map[string]string{"memory.high": "1G"},
		})},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := &ContainerAdjustment{}
			tc.build(got)
			if !proto.Equal(got, tc.want) {
				t.Errorf("got  %v\nwant %v", got, tc.want)
			}
		})
	}
}

// The builders must not keep references to caller-owned slices.
func TestAdjustmentBuildersCopySlices(t *testing.T) {
	args := []string{"a", "b"}
	schemata := []string{"L3:0=f"}
	flags := []MpolFlag{MpolFlag_MPOL_F_STATIC_NODES}
	a := &ContainerAdjustment{}
	a.SetArgs(args)
	a.SetLinuxRDTSchemata(schemata)
	a.SetLinuxMemoryPolicy(MpolMode_MPOL_BIND, "0", flags...)
	args[0], schemata[0], flags[0] = "x", "x", MpolFlag_MPOL_F_NUMA_BALANCING
	if a.Args[0] != "a" || a.Linux.Rdt.Schemata.Value[0] != "L3:0=f" || a.Linux.MemoryPolicy.Flags[0] != MpolFlag_MPOL_F_STATIC_NODES {
		t.Errorf("builder aliases caller slices: %v", a)
	}
}
