package api

// Builders fill adjustments and updates in place, creating intermediate
// messages only when something is actually set, so an untouched adjustment
// stays empty on the wire. These helpers do the lazy creation.

func (a *ContainerAdjustment) ensureLinux() *LinuxContainerAdjustment {
	if a.Linux == nil {
		a.Linux = &LinuxContainerAdjustment{}
	}
	return a.Linux
}

func (a *ContainerAdjustment) ensureResources() *LinuxResources {
	l := a.ensureLinux()
	if l.Resources == nil {
		l.Resources = &LinuxResources{}
	}
	return l.Resources
}

func (a *ContainerAdjustment) ensureRdt() *LinuxRdt {
	l := a.ensureLinux()
	if l.Rdt == nil {
		l.Rdt = &LinuxRdt{}
	}
	return l.Rdt
}

func (u *ContainerUpdate) ensureResources() *LinuxResources {
	if u.Linux == nil {
		u.Linux = &LinuxContainerUpdate{}
	}
	if u.Linux.Resources == nil {
		u.Linux.Resources = &LinuxResources{}
	}
	return u.Linux.Resources
}

func (r *LinuxResources) ensureMemory() *LinuxMemory {
	if r.Memory == nil {
		r.Memory = &LinuxMemory{}
	}
	return r.Memory
}

func (r *LinuxResources) ensureCPU() *LinuxCPU {
	if r.Cpu == nil {
		r.Cpu = &LinuxCPU{}
	}
	return r.Cpu
}

func (r *LinuxResources) ensurePids() *LinuxPids {
	if r.Pids == nil {
		r.Pids = &LinuxPids{}
	}
	return r.Pids
}

func (r *LinuxResources) ensureUnified() map[string]string {
	if r.Unified == nil {
		r.Unified = map[string]string{}
	}
	return r.Unified
}
