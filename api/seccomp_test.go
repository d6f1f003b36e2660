package api

import (
	"reflect"
	"testing"

	rspec "github.com/opencontainers/runtime-spec/specs-go"
	"google.golang.org/protobuf/proto"
)

func TestSeccompConversion(t *testing.T) {
	errno, defErrno := uint(1), uint(38)
	oci := &rspec.LinuxSeccomp{
		DefaultAction:    rspec.ActErrno,
		DefaultErrnoRet:  &defErrno,
		Architectures:    []rspec.Arch{rspec.ArchX86_64, rspec.ArchAARCH64},
		Flags:            []rspec.LinuxSeccompFlag{"SECCOMP_FILTER_FLAG_LOG"},
		ListenerPath:     "/run/seccomp.sock",
		ListenerMetadata: "meta",
		Syscalls: []rspec.LinuxSyscall{
			{Names: []string{"read", "write"}, Action: rspec.ActAllow},
			{Names: []string{"clone"}, Action: rspec.ActErrno, ErrnoRet: &errno,
				Args: []rspec.LinuxSeccompArg{{Index: 0, Value: 1, ValueTwo: 2, Op: rspec.OpMaskedEqual}}},
		},
	}
	want := &LinuxSeccomp{
		DefaultAction:    "SCMP_ACT_ERRNO",
		DefaultErrno:     &OptionalUInt32{Value: 38},
		Architectures:    []string{"SCMP_ARCH_X86_64", "SCMP_ARCH_AARCH64"},
		Flags:            []string{"SECCOMP_FILTER_FLAG_LOG"},
		ListenerPath:     "/run/seccomp.sock",
		ListenerMetadata: "meta",
		Syscalls: []*LinuxSyscall{
			{Names: []string{"read", "write"}, Action: "SCMP_ACT_ALLOW", Args: []*LinuxSeccompArg{}},
			{Names: []string{"clone"}, Action: "SCMP_ACT_ERRNO", ErrnoRet: &OptionalUInt32{Value: 1},
				Args: []*LinuxSeccompArg{{Index: 0, Value: 1, ValueTwo: 2, Op: "SCMP_CMP_MASKED_EQ"}}},
		},
	}
	got := FromOCILinuxSeccomp(oci)
	if !proto.Equal(got, want) {
		t.Fatalf("FromOCILinuxSeccomp = %v\nwant %v", got, want)
	}
	back := ToOCILinuxSyscalls(got.Syscalls)
	wantBack := oci.Syscalls
	wantBack[0].Args = []rspec.LinuxSeccompArg{} // converted lists are never nil
	if !reflect.DeepEqual(back, wantBack) {
		t.Errorf("ToOCILinuxSyscalls = %+v\nwant %+v", back, wantBack)
	}
	if FromOCILinuxSeccomp(nil) != nil {
		t.Error("nil policy should give nil")
	}
	if got := ToOCILinuxSyscalls(nil); got == nil || len(got) != 0 {
		t.Errorf("ToOCILinuxSyscalls(nil) = %#v, want empty", got)
	}
}
