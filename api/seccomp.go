package api

import (
	rspec "github.com/opencontainers/runtime-spec/specs-go"
)

// FromOCILinuxSeccomp converts an OCI seccomp policy; nil stays nil.
func FromOCILinuxSeccomp(o *rspec.LinuxSeccomp) *LinuxSeccomp {
	if o == nil {
		return nil
	}
	return &LinuxSeccomp{
		DefaultAction:    string(o.DefaultAction),
		DefaultErrno:     errnoFromOCI(o.DefaultErrnoRet),
		Architectures:    stringsOf(o.Architectures),
		Flags:            stringsOf(o.Flags),
		ListenerPath:     o.ListenerPath,
		ListenerMetadata: o.ListenerMetadata,
		Syscalls:         FromOCILinuxSyscalls(o.Syscalls),
	}
}

// FromOCILinuxSyscalls converts OCI syscall rules.
func FromOCILinuxSyscalls(o []rspec.LinuxSyscall) []*LinuxSyscall {
	out := make([]*LinuxSyscall, len(o))
	for i, sc := range o {
		out[i] = &LinuxSyscall{
			Names:    DupStringSlice(sc.Names),
			Action:   string(sc.Action),
			ErrnoRet: errnoFromOCI(sc.ErrnoRet),
			Args:     FromOCILinuxSeccompArgs(sc.Args),
		}
	}
	return out
}

// FromOCILinuxSeccompArgs converts OCI syscall argument filters.
func FromOCILinuxSeccompArgs(o []rspec.LinuxSeccompArg) []*LinuxSeccompArg {
	out := make([]*LinuxSeccompArg, len(o))
	for i, a := range o {
		out[i] = &LinuxSeccompArg{
			Index:    uint32(a.Index),
			Value:    a.Value,
			ValueTwo: a.ValueTwo,
			Op:       string(a.Op),
		}
	}
	return out
}

// ToOCILinuxSyscalls converts syscall rules to their OCI form.
func ToOCILinuxSyscalls(o []*LinuxSyscall) []rspec.LinuxSyscall {
	out := make([]rspec.LinuxSyscall, len(o))
	for i, sc := range o {
		out[i] = rspec.LinuxSyscall{
			Names:    DupStringSlice(sc.Names),
			Action:   rspec.LinuxSeccompAction(sc.Action),
			ErrnoRet: errnoToOCI(sc.ErrnoRet),
			Args:     ToOCILinuxSeccompArgs(sc.Args),
		}
	}
	return out
}

// ToOCILinuxSeccompArgs converts syscall argument filters to their OCI form.
func ToOCILinuxSeccompArgs(o []*LinuxSeccompArg) []rspec.LinuxSeccompArg {
	out := make([]rspec.LinuxSeccompArg, len(o))
	for i, a := range o {
		out[i] = rspec.LinuxSeccompArg{
			Index:    uint(a.Index),
			Value:    a.Value,
			ValueTwo: a.ValueTwo,
			Op:       rspec.LinuxSeccompOperator(a.Op),
		}
	}
	return out
}

func errnoFromOCI(e *uint) *OptionalUInt32 {
	if e == nil {
		return nil
	}
	return &OptionalUInt32{Value: uint32(*e)}
}

func errnoToOCI(e *OptionalUInt32) *uint {
	if e == nil {
		return nil
	}
	v := uint(e.Value)
	return &v
}

// stringsOf converts a list of string-typed OCI values to plain strings.
func stringsOf[S ~string](in []S) []string {
	out := make([]string, len(in))
	for i, s := range in {
		out[i] = string(s)
	}
	return out
}
