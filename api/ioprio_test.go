package api

import (
	"reflect"
	"testing"

	rspec "github.com/opencontainers/runtime-spec/specs-go"
	"google.golang.org/protobuf/proto"
)

func TestIOPrioClassConversion(t *testing.T) {
	for _, tc := range []struct {
		oci   rspec.IOPriorityClass
		class IOPrioClass
		back  rspec.IOPriorityClass
	}{
		{"", IOPrioClass_IOPRIO_CLASS_NONE, ""},
		{rspec.IOPRIO_CLASS_RT, IOPrioClass_IOPRIO_CLASS_RT, rspec.IOPRIO_CLASS_RT},
		{rspec.IOPRIO_CLASS_BE, IOPrioClass_IOPRIO_CLASS_BE, rspec.IOPRIO_CLASS_BE},
		{rspec.IOPRIO_CLASS_IDLE, IOPrioClass_IOPRIO_CLASS_IDLE, rspec.IOPRIO_CLASS_IDLE},
		{"IOPRIO_CLASS_BOGUS", IOPrioClass_IOPRIO_CLASS_NONE, ""},
	} {
		c := FromOCIIOPriorityClass(tc.oci)
		if c != tc.class || c.ToOCI() != tc.back {
			t.Errorf("%q -> %v -> %q; want %v, %q", tc.oci, c, c.ToOCI(), tc.class, tc.back)
		}
	}
}

func TestLinuxIOPriorityConversion(t *testing.T) {
	oci := &rspec.LinuxIOPriority{Class: rspec.IOPRIO_CLASS_BE, Priority: 7}
	want := &LinuxIOPriority{Class: IOPrioClass_IOPRIO_CLASS_BE, Priority: 7}
	got := FromOCILinuxIOPriority(oci)
	if !proto.Equal(got, want) {
		t.Errorf("FromOCILinuxIOPriority = %v, want %v", got, want)
	}
	if back := got.ToOCI(); !reflect.DeepEqual(back, oci) {
		t.Errorf("ToOCI = %+v, want %+v", back, oci)
	}
	if FromOCILinuxIOPriority(nil) != nil || (*LinuxIOPriority)(nil).ToOCI() != nil {
		t.Error("nil should stay nil")
	}
}
