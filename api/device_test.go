package api

import (
	"os"
	"reflect"
	"testing"

	rspec "github.com/opencontainers/runtime-spec/specs-go"
	"google.golang.org/protobuf/proto"
)

func TestDeviceOCIConversion(t *testing.T) {
	mode := os.FileMode(0o666)
	uid, gid := uint32(1), uint32(2)
	oci := []rspec.LinuxDevice{
		{Path: "/dev/null", Type: "c", Major: 1, Minor: 3, FileMode: &mode, UID: &uid, GID: &gid},
		{Path: "/dev/sda", Type: "b", Major: 8},
	}
	want := []*LinuxDevice{
		{Path: "/dev/null", Type: "c", Major: 1, Minor: 3, FileMode: &OptionalFileMode{Value: 0o666},
			Uid: &OptionalUInt32{Value: 1}, Gid: &OptionalUInt32{Value: 2}},
		{Path: "/dev/sda", Type: "b", Major: 8},
	}
	got := FromOCILinuxDevices(oci)
	if len(got) != len(want) {
		t.Fatalf("FromOCILinuxDevices = %v", got)
	}
	for i := range got {
		if !proto.Equal(got[i], want[i]) {
			t.Errorf("[%d] = %v, want %v", i, got[i], want[i])
		}
		if back := got[i].ToOCI(); !reflect.DeepEqual(back, oci[i]) {
			t.Errorf("[%d] round trip = %+v, want %+v", i, back, oci[i])
		}
	}
	if FromOCILinuxDevices(nil) != nil {
		t.Error("nil devices should give nil")
	}
	if !reflect.DeepEqual((*LinuxDevice)(nil).ToOCI(), rspec.LinuxDevice{}) {
		t.Error("nil device should convert to the zero device")
	}
}

func TestDeviceAccessString(t *testing.T) {
	for _, tc := range []struct {
		dev  *LinuxDevice
		want string
	}{
		{&LinuxDevice{Type: "c"}, "rw"},
		{&LinuxDevice{Type: "u"}, "rw"},
		{&LinuxDevice{Type: "b"}, "rwm"},
		{&LinuxDevice{Type: "c", FileMode: FileMode(os.FileMode(0o444))}, "rw"},
		{&LinuxDevice{Type: "b", FileMode: FileMode(os.FileMode(0))}, "rwm"},
	} {
		if got := tc.dev.AccessString(); got != tc.want {
			t.Errorf("%v: AccessString = %q, want %q", tc.dev, got, tc.want)
		}
	}
}

func TestDeviceCmp(t *testing.T) {
	base := &LinuxDevice{Path: "/dev/a", Type: "c", Major: 1, Minor: 2}
	for _, tc := range []struct {
		name  string
		other *LinuxDevice
		want  bool
	}{
		{"nil", nil, false},
		{"same node other path", &LinuxDevice{Path: "/dev/b", Type: "c", Major: 1, Minor: 2}, true},
		{"major", &LinuxDevice{Type: "c", Major: 9, Minor: 2}, false},
		{"minor", &LinuxDevice{Type: "c", Major: 1, Minor: 9}, false},
		{"type", &LinuxDevice{Type: "b", Major: 1, Minor: 2}, false},
	} {
		if got := base.Cmp(tc.other); got != tc.want {
			t.Errorf("%s: Cmp = %v, want %v", tc.name, got, tc.want)
		}
	}
}
