package api

import (
	"reflect"
	"testing"

	rspec "github.com/opencontainers/runtime-spec/specs-go"
	"google.golang.org/protobuf/proto"
)

func TestLinuxResourcesOCIRoundTrip(t *testing.T) {
	i64 := func(v int64) *int64 { return &v }
	u64 := func(v uint64) *uint64 { return &v }
	b := func(v bool) *bool { return &v }
	oci := &rspec.LinuxResources{
		Memory: &rspec.LinuxMemory{
			Limit: i64(1 << 30), Reservation: i64(1 << 29), Swap: i64(1 << 31), Kernel: i64(1),
			KernelTCP: i64(2), Swappiness: u64(10), DisableOOMKiller: b(true), UseHierarchy: b(false),
		},
		CPU: &rspec.LinuxCPU{
			Shares: u64(1024), Quota: i64(5000), Period: u64(10000), RealtimeRuntime: i64(1),
			RealtimePeriod: u64(2), Cpus: "0-1", Mems: "0",
		},
		HugepageLimits: []rspec.LinuxHugepageLimit{{Pagesize: "2MB", Limit: 10}},
		Devices: []rspec.LinuxDeviceCgroup{
			{Allow: false, Access: "rwm"},
			{Allow: true, Type: "c", Major: i64(1), Minor: i64(3), Access: "rw"},
		},
		Pids:    &rspec.LinuxPids{Limit: i64(64)},
		Unified: map[string]string{"memory.high": "1G"},
	}
	want := &LinuxResources{
		Memory: &LinuxMemory{
			Limit: Int64(1 << 30), Reservation: Int64(1 << 29), Swap: Int64(1 << 31), Kernel: Int64(1),
			KernelTcp: Int64(2), Swappiness: UInt64(10), DisableOomKiller: Bool(true), UseHierarchy: Bool(false),
		},
		Cpu: &LinuxCPU{
			Shares: UInt64(1024), Quota: Int64(5000), Period: UInt64(10000), RealtimeRuntime: Int64(1),
			RealtimePeriod: UInt64(2), Cpus: "0-1", Mems: "0",
		},
		HugepageLimits: []*HugepageLimit{{PageSize: "2MB", Limit: 10}},
		Devices: []*LinuxDeviceCgroup{
			{Allow: false, Access: "rwm"},
			{Allow: true, Type: "c", Major: Int64(1), Minor: Int64(3), Access: "rw"},
		},
		Pids:    &LinuxPids{Limit: 64},
		Unified: map[string]string{"memory.high": "1G"},
	}
	got := FromOCILinuxResources(oci, nil)
	if !proto.Equal(got, want) {
		t.Fatalf("FromOCILinuxResources = %v\nwant %v", got, want)
	}
	if back := got.ToOCI(); !reflect.DeepEqual(back, oci) {
		t.Errorf("ToOCI = %+v\nwant %+v", back, oci)
	}
	oci.Unified["memory.high"] = "2G"
	if got.Unified["memory.high"] != "1G" {
		t.Error("FromOCILinuxResources aliases the unified map")
	}
}

func TestLinuxResourcesEdgeCases(t *testing.T) {
	if FromOCILinuxResources(nil, nil) != nil || (*LinuxResources)(nil).ToOCI() != nil {
		t.Error("nil should stay nil")
	}

	// An empty resource set still carries empty CPU and memory sections.
	empty := (&LinuxResources{}).ToOCI()
	if !reflect.DeepEqual(empty, &rspec.LinuxResources{CPU: &rspec.LinuxCPU{}, Memory: &rspec.LinuxMemory{}}) {
		t.Errorf("empty ToOCI = %+v", empty)
	}

	limit := func(v int64) *int64 { return &v }
	for _, tc := range []struct {
		name string
		nri  int64
		oci  *int64
	}{
		{"limited", 10, limit(10)},
		{"zero", 0, limit(0)},
		{"unlimited", UnlimitedPidsLimit, nil},
		{"below unlimited", -5, nil},
	} {
		got := (&LinuxResources{Pids: &LinuxPids{Limit: tc.nri}}).ToOCI().Pids
		if got == nil || !reflect.DeepEqual(got.Limit, tc.oci) {
			t.Errorf("pids %s: ToOCI gave %+v, want limit %v", tc.name, got, tc.oci)
		}
	}
	if got := FromOCILinuxResources(&rspec.LinuxResources{Pids: &rspec.LinuxPids{}}, nil); got.Pids == nil || got.Pids.Limit != 0 {
		t.Errorf("OCI pids without limit gave %v", got.Pids)
	}
	if got := FromOCILinuxResources(&rspec.LinuxResources{Unified: map[string]string{}}, nil); got.Unified != nil {
		t.Errorf("empty unified map should give nil, got %v", got.Unified)
	}
}

func TestLinuxResourcesCopy(t *testing.T) {
	orig := &LinuxResources{
		Memory:         &LinuxMemory{Limit: Int64(1)},
		Cpu:            &LinuxCPU{Cpus: "1"},
		HugepageLimits: []*HugepageLimit{{PageSize: "2MB", Limit: 1}},
		BlockioClass:   String("io"),
		RdtClass:       String("rdt"),
		Unified:        map[string]string{"a": "b"},
		Devices:        []*LinuxDeviceCgroup{{Allow: true, Major: Int64(1)}},
		Pids:           &LinuxPids{Limit: 3},
	}
	c := orig.Copy()
	if !proto.Equal(c, orig) {
		t.Fatalf("Copy = %v, want %v", c, orig)
	}
	c.Memory.Limit.Value = 2
	c.Cpu.Cpus = "2"
	c.HugepageLimits[0].Limit = 2
	c.Unified["a"] = "c"
	c.Devices[0].Major.Value = 2
	c.Pids.Limit = 4
	c.BlockioClass.Value = "x"
	if orig.Memory.Limit.Value != 1 || orig.Cpu.Cpus != "1" || orig.HugepageLimits[0].Limit != 1 ||
		orig.Unified["a"] != "b" || orig.Devices[0].Major.Value != 1 || orig.Pids.Limit != 3 || orig.BlockioClass.Value != "io" {
		t.Errorf("Copy is shallow somewhere: original now %v", orig)
	}
	if (*LinuxResources)(nil).Copy() != nil {
		t.Error("nil Copy should be nil")
	}
	if c := (&LinuxResources{Unified: map[string]string{}}).Copy(); c.Unified != nil {
		t.Error("Copy should drop an empty unified map")
	}
}

func TestLinuxRdtCopy(t *testing.T) {
	orig := &LinuxRdt{ClosId: String("gold"), Schemata: RepeatedString([]string{"L3:0=f"}), EnableMonitoring: Bool(true), Remove: true}
	c := orig.Copy()
	if !proto.Equal(c, orig) {
		t.Fatalf("Copy = %v, want %v", c, orig)
	}
	c.Schemata.Value[0] = "x"
	c.ClosId.Value = "x"
	if orig.Schemata.Value[0] != "L3:0=f" || orig.ClosId.Value != "gold" {
		t.Error("Copy is shallow")
	}
	if (*LinuxRdt)(nil).Copy() != nil {
		t.Error("nil Copy should be nil")
	}
}
