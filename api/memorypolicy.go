package api

import (
	rspec "github.com/opencontainers/runtime-spec/specs-go"
)

// FromOCILinuxMemoryPolicy converts an OCI NUMA memory policy; nil stays nil.
func FromOCILinuxMemoryPolicy(o *rspec.LinuxMemoryPolicy) *LinuxMemoryPolicy {
	if o == nil {
		return nil
	}
	return &LinuxMemoryPolicy{
		Mode:  FromOCIMemoryPolicyMode(o.Mode),
		Nodes: o.Nodes,
		Flags: FromOCIMemoryPolicyFlags(o.Flags...),
	}
}

// ToOCI converts the memory policy to its OCI form; nil stays nil.
func (memoryPolicy *LinuxMemoryPolicy) ToOCI() *rspec.LinuxMemoryPolicy {
	if memoryPolicy == nil {
		return nil
	}
	return &rspec.LinuxMemoryPolicy{
		Mode:  memoryPolicy.Mode.ToOCI(),
		Nodes: memoryPolicy.Nodes,
		Flags: ToOCIMemoryPolicyFlags(memoryPolicy.Flags...),
	}
}

// FromOCIMemoryPolicyMode maps an OCI mode name; unknown names give MPOL_DEFAULT.
func FromOCIMemoryPolicyMode(mode rspec.MemoryPolicyModeType) MpolMode {
	return enumFromOCI[MpolMode](MpolMode_value, mode)
}

// FromOCIMemoryPolicyFlags maps OCI flag names; nil stays nil.
func FromOCIMemoryPolicyFlags(flags ...rspec.MemoryPolicyFlagType) []MpolFlag {
	return enumSliceFromOCI[MpolFlag](MpolFlag_value, flags)
}

// ToOCI maps the mode to its OCI name. Unlike other enums, the zero value
// MPOL_DEFAULT is a real OCI mode and is spelled out.
func (mode MpolMode) ToOCI() rspec.MemoryPolicyModeType {
	return enumToOCI[rspec.MemoryPolicyModeType](MpolMode_name, mode)
}

// ToOCIMemoryPolicyFlags maps flags to OCI names; nil stays nil.
func ToOCIMemoryPolicyFlags(flags ...MpolFlag) []rspec.MemoryPolicyFlagType {
	return enumSliceToOCI[rspec.MemoryPolicyFlagType](MpolFlag_name, flags)
}
