package wire

import (
	"github.com/nri-handover/nri/api"
)

// Fixtures use only plain struct literals, so the wire tests depend on the
// generated code alone and not on the helpers built on top of it.

func samplePod() *api.PodSandbox {
	return &api.PodSandbox{
		Id:             "pod-1",
		Name:           "web",
		Uid:            "0b7c2d5e-6f1a-4c1e-9d2b-5a3e8f7c1d20",
		Namespace:      "default",
		Labels:         map[string]string{"app": "web", "tier": "front"},
		Annotations:    map[string]string{"example.com/owner": "team-a"},
		RuntimeHandler: "runc",
		Pid:            4242,
		Ips:            []string{"192.0.2.10"},
		Linux: &api.LinuxPodSandbox{
			CgroupParent: "/kubepods/burstable",
			CgroupsPath:  "/kubepods/burstable/pod-1",
			Namespaces:   []*api.LinuxNamespace{{Type: "network", Path: "/var/run/netns/pod-1"}},
			PodResources: sampleResources(),
		},
	}
}

func sampleResources() *api.LinuxResources {
	return &api.LinuxResources{
		Memory: &api.LinuxMemory{
			Limit:      &api.OptionalInt64{Value: 512 << 20},
			Swappiness: &api.OptionalUInt64{Value: 10},
		},
		Cpu: &api.LinuxCPU{
			Shares: &api.OptionalUInt64{Value: 512},
			Quota:  &api.OptionalInt64{Value: 50000},
			Period: &api.OptionalUInt64{Value: 100000},
			Cpus:   "0-1",
			Mems:   "0",
		},
		HugepageLimits: []*api.HugepageLimit{{PageSize: "2MB", Limit: 4 << 20}},
		BlockioClass:   &api.OptionalString{Value: "slow"},
		Unified:        map[string]string{"memory.high": "400M"},
	}
}

func sampleContainer() *api.Container {
	return &api.Container{
		Id:           "ctr-1",
		PodSandboxId: "pod-1",
		Name:         "nginx",
		State:        api.ContainerState_CONTAINER_RUNNING,
		Labels:       map[string]string{"app": "web"},
		Args:         []string{"nginx", "-g", "daemon off;"},
		Env:          []string{"PATH=/usr/bin", "MODE=prod"},
		Mounts: []*api.Mount{{
			Destination: "/data",
			Type:        "bind",
			Source:      "/srv/data",
			Options:     []string{"rbind", "ro"},
		}},
		Hooks: &api.Hooks{
			Prestart: []*api.Hook{{Path: "/bin/hook", Args: []string{"hook", "pre"}, Timeout: &api.OptionalInt{Value: 5}}},
		},
		Linux: &api.LinuxContainer{
			Resources:   sampleResources(),
			OomScoreAdj: &api.OptionalInt{Value: -500},
			CgroupsPath: "/kubepods/burstable/pod-1/ctr-1",
			Sysctl:      map[string]string{"net.core.somaxconn": "1024"},
		},
		Pid:        4343,
		Rlimits:    []*api.POSIXRlimit{{Type: "RLIMIT_NOFILE", Hard: 4096, Soft: 1024}},
		CreatedAt:  1700000000,
		StartedAt:  1700000001,
		CDIDevices: []*api.CDIDevice{{Name: "vendor.com/gpu=0"}},
	}
}

func sampleAdjustment() *api.ContainerAdjustment {
	return &api.ContainerAdjustment{
		Annotations: map[string]string{"example.com/adjusted": "true"},
		Mounts:      []*api.Mount{{Destination: "/cache", Type: "tmpfs", Source: "tmpfs", Options: []string{"size=64m"}}},
		Env:         []*api.KeyValue{{Key: "INJECTED", Value: "1"}},
		Args:        []string{"nginx", "-T"},
		Rlimits:     []*api.POSIXRlimit{{Type: "RLIMIT_NPROC", Hard: 512, Soft: 256}},
		Linux: &api.LinuxContainerAdjustment{
			Resources:   sampleResources(),
			CgroupsPath: "/custom/ctr-1",
			OomScoreAdj: &api.OptionalInt{Value: 100},
			Sysctl:      map[string]string{"vm.swappiness": "10"},
		},
	}
}
