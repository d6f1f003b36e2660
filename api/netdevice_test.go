package api

import (
	"reflect"
	"testing"

	rspec "github.com/opencontainers/runtime-spec/specs-go"
	"google.golang.org/protobuf/proto"
)

func TestNetDeviceConversion(t *testing.T) {
	for _, tc := range []struct {
		name string
		oci  map[string]rspec.LinuxNetDevice
		nri  map[string]*LinuxNetDevice
	}{
		{"nil", nil, nil},
		{"one", map[string]rspec.LinuxNetDevice{"eth1": {Name: "net1"}}, map[string]*LinuxNetDevice{"eth1": {Name: "net1"}}},
		{"two", map[string]rspec.LinuxNetDevice{"eth1": {Name: "a"}, "eth2": {}}, map[string]*LinuxNetDevice{"eth1": {Name: "a"}, "eth2": {}}},
	} {
		got := FromOCILinuxNetDevices(tc.oci)
		if len(got) != len(tc.nri) || (got == nil) != (tc.nri == nil) {
			t.Errorf("%s: FromOCILinuxNetDevices = %v, want %v", tc.name, got, tc.nri)
			continue
		}
		for k, v := range tc.nri {
			if !proto.Equal(got[k], v) {
				t.Errorf("%s: [%s] = %v, want %v", tc.name, k, got[k], v)
			}
		}
		if back := ToOCILinuxNetDevices(got); !reflect.DeepEqual(back, tc.oci) {
			t.Errorf("%s: round trip = %v, want %v", tc.name, back, tc.oci)
		}
	}
	if FromOCILinuxNetDevices(map[string]rspec.LinuxNetDevice{}) != nil {
		t.Error("empty map should give nil")
	}
	if got := ToOCILinuxNetDevices(map[string]*LinuxNetDevice{"eth0": nil}); !reflect.DeepEqual(got, map[string]rspec.LinuxNetDevice{"eth0": {}}) {
		t.Errorf("nil device should convert to the zero device, got %v", got)
	}
}
