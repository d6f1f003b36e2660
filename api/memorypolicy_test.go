package api

import (
	"reflect"
	"testing"

	rspec "github.com/opencontainers/runtime-spec/specs-go"
	"google.golang.org/protobuf/proto"
)

func TestMemoryPolicyModeConversion(t *testing.T) {
	for _, tc := range []struct {
		oci  rspec.MemoryPolicyModeType
		mode MpolMode
		back rspec.MemoryPolicyModeType
	}{
		{rspec.MpolDefault, MpolMode_MPOL_DEFAULT, rspec.MpolDefault},
		{rspec.MpolBind, MpolMode_MPOL_BIND, rspec.MpolBind},
		{rspec.MpolInterleave, MpolMode_MPOL_INTERLEAVE, rspec.MpolInterleave},
		{rspec.MpolWeightedInterleave, MpolMode_MPOL_WEIGHTED_INTERLEAVE, rspec.MpolWeightedInterleave},
		{rspec.MpolPreferred, MpolMode_MPOL_PREFERRED, rspec.MpolPreferred},
		{rspec.MpolPreferredMany, MpolMode_MPOL_PREFERRED_MANY, rspec.MpolPreferredMany},
		{rspec.MpolLocal, MpolMode_MPOL_LOCAL, rspec.MpolLocal},
		{"", MpolMode_MPOL_DEFAULT, rspec.MpolDefault},
	} {
		m := FromOCIMemoryPolicyMode(tc.oci)
		if m != tc.mode || m.ToOCI() != tc.back {
			t.Errorf("%q -> %v -> %q; want %v, %q", tc.oci, m, m.ToOCI(), tc.mode, tc.back)
		}
	}
}

func TestMemoryPolicyConversion(t *testing.T) {
	oci := &rspec.LinuxMemoryPolicy{
		Mode:  rspec.MpolBind,
		Nodes: "0,2",
		Flags: []rspec.MemoryPolicyFlagType{rspec.MpolFStaticNodes, rspec.MpolFNumaBalancing},
	}
	want := &LinuxMemoryPolicy{
		Mode:  MpolMode_MPOL_BIND,
		Nodes: "0,2",
		Flags: []MpolFlag{MpolFlag_MPOL_F_STATIC_NODES, MpolFlag_MPOL_F_NUMA_BALANCING},
	}
	got := FromOCILinuxMemoryPolicy(oci)
	if !proto.Equal(got, want) {
		t.Errorf("FromOCILinuxMemoryPolicy = %v, want %v", got, want)
	}
	if back := got.ToOCI(); !reflect.DeepEqual(back, oci) {
		t.Errorf("ToOCI = %+v, want %+v", back, oci)
	}
	if FromOCILinuxMemoryPolicy(nil) != nil || (*LinuxMemoryPolicy)(nil).ToOCI() != nil {
		t.Error("nil should stay nil")
	}
	if FromOCIMemoryPolicyFlags() != nil || ToOCIMemoryPolicyFlags() != nil {
		t.Error("no flags should give nil")
	}
}
