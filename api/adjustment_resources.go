package api

// Builders for the cgroup resources of a ContainerAdjustment. ContainerUpdate
// has the same set (update.go); both fill a LinuxResources.

// SetLinuxMemoryLimit records setting the memory limit in bytes.
func (a *ContainerAdjustment) SetLinuxMemoryLimit(value int64) {
	a.ensureResources().ensureMemory().Limit = Int64(value)
}

// SetLinuxMemoryReservation records setting the memory soft limit in bytes.
func (a *ContainerAdjustment) SetLinuxMemoryReservation(value int64) {
	a.ensureResources().ensureMemory().Reservation = Int64(value)
}

// SetLinuxMemorySwap records setting the memory+swap limit in bytes.
func (a *ContainerAdjustment) SetLinuxMemorySwap(value int64) {
	a.ensureResources().ensureMemory().Swap = Int64(value)
}

// SetLinuxMemoryKernel records setting the kernel memory limit (cgroup v1 only).
func (a *ContainerAdjustment) SetLinuxMemoryKernel(value int64) {
	a.ensureResources().ensureMemory().Kernel = Int64(value)
}

// SetLinuxMemoryKernelTCP records setting the kernel TCP buffer limit.
func (a *ContainerAdjustment) SetLinuxMemoryKernelTCP(value int64) {
	a.ensureResources().ensureMemory().KernelTcp = Int64(value)
}

// SetLinuxMemorySwappiness records setting memory swappiness.
func (a *ContainerAdjustment) SetLinuxMemorySwappiness(value uint64) {
	a.ensureResources().ensureMemory().Swappiness = UInt64(value)
}

// SetLinuxMemoryDisableOomKiller records disabling the OOM killer.
func (a *ContainerAdjustment) SetLinuxMemoryDisableOomKiller() {
	a.ensureResources().ensureMemory().DisableOomKiller = Bool(true)
}

// SetLinuxMemoryUseHierarchy records enabling hierarchical memory accounting.
func (a *ContainerAdjustment) SetLinuxMemoryUseHierarchy() {
	a.ensureResources().ensureMemory().UseHierarchy = Bool(true)
}

// SetLinuxCPUShares records setting CPU shares (weight).
func (a *ContainerAdjustment) SetLinuxCPUShares(value uint64) {
	a.ensureResources().ensureCPU().Shares = UInt64(value)
}

// SetLinuxCPUQuota records setting the CFS quota in microseconds.
func (a *ContainerAdjustment) SetLinuxCPUQuota(value int64) {
	a.ensureResources().ensureCPU().Quota = Int64(value)
}

// SetLinuxCPUPeriod records setting the CFS period in microseconds.
func (a *ContainerAdjustment) SetLinuxCPUPeriod(value int64) {
	a.ensureResources().ensureCPU().Period = UInt64(value)
}

// SetLinuxCPURealtimeRuntime records setting the realtime runtime.
func (a *ContainerAdjustment) SetLinuxCPURealtimeRuntime(value int64) {
	a.ensureResources().ensureCPU().RealtimeRuntime = Int64(value)
}

// SetLinuxCPURealtimePeriod records setting the realtime period.
func (a *ContainerAdjustment) SetLinuxCPURealtimePeriod(value uint64) {
	a.ensureResources().ensureCPU().RealtimePeriod = UInt64(value)
}

// SetLinuxCPUSetCPUs records setting the cpuset CPUs (e.g. "0-3,8").
func (a *ContainerAdjustment) SetLinuxCPUSetCPUs(value string) {
	a.ensureResources().ensureCPU().Cpus = value
}

// SetLinuxCPUSetMems records setting the cpuset memory nodes.
func (a *ContainerAdjustment) SetLinuxCPUSetMems(value string) {
	a.ensureResources().ensureCPU().Mems = value
}

// SetLinuxPidLimits records setting the maximum number of processes.
func (a *ContainerAdjustment) SetLinuxPidLimits(value int64) {
	a.ensureResources().ensurePids().Limit = value
}

// AddLinuxHugepageLimit records adding a limit for hugepages of pageSize.
func (a *ContainerAdjustment) AddLinuxHugepageLimit(pageSize string, value uint64) {
	r := a.ensureResources()
	r.HugepageLimits = append(r.HugepageLimits, &HugepageLimit{PageSize: pageSize, Limit: value})
}

// SetLinuxBlockIOClass records setting the block I/O class.
func (a *ContainerAdjustment) SetLinuxBlockIOClass(value string) {
	a.ensureResources().BlockioClass = String(value)
}

// SetLinuxRDTClass records setting the RDT class (resctrl group).
func (a *ContainerAdjustment) SetLinuxRDTClass(value string) {
	a.ensureResources().RdtClass = String(value)
}

// AddLinuxUnified records setting a cgroup v2 unified key to value.
func (a *ContainerAdjustment) AddLinuxUnified(key, value string) {
	a.ensureResources().ensureUnified()[key] = value
}
