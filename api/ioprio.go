package api

import (
	rspec "github.com/opencontainers/runtime-spec/specs-go"
)

// FromOCILinuxIOPriority converts an OCI I/O priority; nil stays nil.
func FromOCILinuxIOPriority(o *rspec.LinuxIOPriority) *LinuxIOPriority {
	if o == nil {
		return nil
	}
	return &LinuxIOPriority{
		Class:    FromOCIIOPriorityClass(o.Class),
		Priority: int32(o.Priority),
	}
}

// ToOCI converts the I/O priority to its OCI form; nil stays nil.
func (ioprio *LinuxIOPriority) ToOCI() *rspec.LinuxIOPriority {
	if ioprio == nil {
		return nil
	}
	return &rspec.LinuxIOPriority{
		Class:    ioprio.Class.ToOCI(),
		Priority: int(ioprio.Priority),
	}
}

// FromOCIIOPriorityClass maps an OCI class name; unknown or empty names give
// IOPRIO_CLASS_NONE.
func FromOCIIOPriorityClass(o rspec.IOPriorityClass) IOPrioClass {
	return enumFromOCI[IOPrioClass](IOPrioClass_value, o)
}

// ToOCI maps the class to its OCI name. IOPRIO_CLASS_NONE has no OCI
// counterpart and becomes "" (not set).
func (c IOPrioClass) ToOCI() rspec.IOPriorityClass {
	if c == IOPrioClass_IOPRIO_CLASS_NONE {
		return ""
	}
	return enumToOCI[rspec.IOPriorityClass](IOPrioClass_name, c)
}
