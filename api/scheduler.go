package api

import (
	rspec "github.com/opencontainers/runtime-spec/specs-go"
)

// FromOCILinuxScheduler converts OCI scheduling attributes; nil stays nil.
func FromOCILinuxScheduler(o *rspec.Scheduler) *LinuxScheduler {
	if o == nil {
		return nil
	}
	return &LinuxScheduler{
		Policy:   FromOCISchedulerPolicy(o.Policy),
		Nice:     o.Nice,
		Priority: o.Priority,
		Flags:    FromOCILinuxSchedulerFlags(o.Flags),
		Runtime:  o.Runtime,
		Deadline: o.Deadline,
		Period:   o.Period,
	}
}

// ToOCI converts the scheduling attributes to their OCI form. Without a
// policy (SCHED_NONE) there is nothing the OCI spec could express, so the
// result is nil.
func (sch *LinuxScheduler) ToOCI() *rspec.Scheduler {
	if sch == nil || sch.Policy == LinuxSchedulerPolicy_SCHED_NONE {
		return nil
	}
	return &rspec.Scheduler{
		Policy:   sch.Policy.ToOCI(),
		Nice:     sch.Nice,
		Priority: sch.Priority,
		Flags:    ToOCILinuxSchedulerFlags(sch.Flags),
		Runtime:  sch.Runtime,
		Deadline: sch.Deadline,
		Period:   sch.Period,
	}
}

// FromOCISchedulerPolicy maps an OCI policy name; unknown or empty names give SCHED_NONE.
func FromOCISchedulerPolicy(o rspec.LinuxSchedulerPolicy) LinuxSchedulerPolicy {
	return enumFromOCI[LinuxSchedulerPolicy](LinuxSchedulerPolicy_value, o)
}

// ToOCI maps the policy to its OCI name; SCHED_NONE becomes "".
func (p LinuxSchedulerPolicy) ToOCI() rspec.LinuxSchedulerPolicy {
	if p == LinuxSchedulerPolicy_SCHED_NONE {
		return ""
	}
	return enumToOCI[rspec.LinuxSchedulerPolicy](LinuxSchedulerPolicy_name, p)
}

// FromOCILinuxSchedulerFlags maps OCI scheduler flags; nil stays nil.
func FromOCILinuxSchedulerFlags(o []rspec.LinuxSchedulerFlag) []LinuxSchedulerFlag {
	return enumSliceFromOCI[LinuxSchedulerFlag](LinuxSchedulerFlag_value, o)
}

// ToOCILinuxSchedulerFlags maps scheduler flags to OCI names; nil stays nil.
func ToOCILinuxSchedulerFlags(f []LinuxSchedulerFlag) []rspec.LinuxSchedulerFlag {
	return enumSliceToOCI[rspec.LinuxSchedulerFlag](LinuxSchedulerFlag_name, f)
}
