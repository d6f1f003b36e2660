package api

import "slices"

// Builders for the Linux-specific, non-cgroup parts of a ContainerAdjustment.

// SetLinuxMemoryPolicy records setting the NUMA memory policy.
func (a *ContainerAdjustment) SetLinuxMemoryPolicy(mode MpolMode, nodes string, flags ...MpolFlag) {
	a.ensureLinux().MemoryPolicy = &LinuxMemoryPolicy{
		Mode:  mode,
		Nodes: nodes,
		Flags: slices.Clone(flags),
	}
}

// SetLinuxCgroupsPath records setting the container's cgroups path.
func (a *ContainerAdjustment) SetLinuxCgroupsPath(value string) {
	a.ensureLinux().CgroupsPath = value
}

// SetLinuxOomScoreAdj records setting the OOM score adjustment; nil unsets
// any earlier request by this plugin.
func (a *ContainerAdjustment) SetLinuxOomScoreAdj(value *int) {
	a.ensureLinux().OomScoreAdj = Int(value)
}

// SetLinuxIOPriority records setting the container's I/O priority.
func (a *ContainerAdjustment) SetLinuxIOPriority(ioprio *LinuxIOPriority) {
	a.ensureLinux().IoPriority = ioprio
}

// SetLinuxSeccompPolicy records replacing the container's seccomp policy.
func (a *ContainerAdjustment) SetLinuxSeccompPolicy(seccomp *LinuxSeccomp) {
	a.ensureLinux().SeccompPolicy = seccomp
}

// SetLinuxSysctl records setting sysctl key to value inside the container.
func (a *ContainerAdjustment) SetLinuxSysctl(key, value string) {
	l := a.ensureLinux()
	if l.Sysctl == nil {
		l.Sysctl = map[string]string{}
	}
	l.Sysctl[key] = value
}

// SetLinuxScheduler records setting the container's scheduling attributes.
func (a *ContainerAdjustment) SetLinuxScheduler(sch *LinuxScheduler) {
	a.ensureLinux().Scheduler = sch
}

// SetLinuxRDTClosID records setting the RDT class of service (CLOS) id.
func (a *ContainerAdjustment) SetLinuxRDTClosID(value string) {
	a.ensureRdt().ClosId = String(value)
}

// SetLinuxRDTSchemata records setting the RDT schemata lines.
func (a *ContainerAdjustment) SetLinuxRDTSchemata(value []string) {
	a.ensureRdt().Schemata = RepeatedString(value)
}

// SetLinuxRDTEnableMonitoring records enabling or disabling RDT monitoring.
func (a *ContainerAdjustment) SetLinuxRDTEnableMonitoring(value bool) {
	a.ensureRdt().EnableMonitoring = Bool(value)
}

// RemoveLinuxRDT records dropping the container's RDT configuration.
func (a *ContainerAdjustment) RemoveLinuxRDT() {
	a.ensureRdt().Remove = true
}
