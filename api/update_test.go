package api

import (
	"testing"

	"google.golang.org/protobuf/proto"
)

func TestContainerUpdateBuilders(t *testing.T) {
	res := func(r *LinuxResources) *ContainerUpdate {
		return &ContainerUpdate{Linux: &LinuxContainerUpdate{Resources: r}}
	}
	for _, tc := range []struct {
		name  string
		build func(u *ContainerUpdate)
		want  *ContainerUpdate
	}{
		{"id and ignore failure", func(u *ContainerUpdate) {
			u.SetContainerId("c1")
			u.SetIgnoreFailure()
		}, &ContainerUpdate{ContainerId: "c1", IgnoreFailure: true}},
		{"memory", func(u *ContainerUpdate) {
			u.SetLinuxMemoryLimit(1 << 30)
			u.SetLinuxMemoryReservation(1 << 29)
			u.SetLinuxMemorySwap(1 << 31)
			u.SetLinuxMemoryKernel(1)
			u.SetLinuxMemoryKernelTCP(2)
			u.SetLinuxMemorySwappiness(0)
			u.SetLinuxMemoryDisableOomKiller()
			u.SetLinuxMemoryUseHierarchy()
		}, res(&LinuxResources{Memory: &LinuxMemory{
			Limit:            &OptionalInt64{Value: 1 << 30},
			Reservation:      &OptionalInt64{Value: 1 << 29},
			Swap:             &OptionalInt64{Value: 1 << 31},
			Kernel:           &OptionalInt64{Value: 1},
			KernelTcp:        &OptionalInt64{Value: 2},
			Swappiness:       &OptionalUInt64{Value: 0},
			DisableOomKiller: &OptionalBool{Value: true},
			UseHierarchy:     &OptionalBool{Value: true},
		}})},
		{"cpu", func(u *ContainerUpdate) {
			u.SetLinuxCPUShares(2)
			u.SetLinuxCPUQuota(-1)
			u.SetLinuxCPUPeriod(100000)
			u.SetLinuxCPURealtimeRuntime(3)
			u.SetLinuxCPURealtimePeriod(4)
			u.SetLinuxCPUSetCPUs("1")
			u.SetLinuxCPUSetMems("0-1")
		}, res(&LinuxResources{Cpu: &LinuxCPU{
			Shares:          &OptionalUInt64{Value: 2},
			Quota:           &OptionalInt64{Value: -1},
			Period:          &OptionalUInt64{Value: 100000},
			RealtimeRuntime: &OptionalInt64{Value: 3},
			RealtimePeriod:  &OptionalUInt64{Value: 4},
			Cpus:            "1",
			Mems:            "0-1",
		}})},
		{"other resources", func(u *ContainerUpdate) {
			u.SetLinuxPidLimits(-1)
			u.AddLinuxHugepageLimit("2MB", 1)
			u.SetLinuxBlockIOClass("fast")
			u.SetLinuxRDTClass("bronze")
			u.AddLinuxUnified("cpu.weight", "10")
			u.AddLinuxUnified("cpu.weight", "20")
		}, res(&LinuxResources{
			Pids:           &LinuxPids{Limit: -1},
			HugepageLimits: []*HugepageLimit{{PageSize: "2MB", Limit: 1}},
			BlockioClass:   &OptionalString{Value: "fast"},
			RdtClass:       &OptionalString{Value: "bronze"},
			Unified:        map[string]string{"cpu.weight": "20"},
		})},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := &ContainerUpdate{}
			tc.build(got)
			if !proto.Equal(got, tc.want) {
				t.Errorf("got  %v\nwant %v", got, tc.want)
			}
		})
	}
}
