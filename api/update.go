package api

// Builders for ContainerUpdate, the request to change resources of an
// existing container. They mirror the resource builders of
// ContainerAdjustment (adjustment_resources.go).

// SetContainerId selects the container to update.
//
//nolint:revive // the name matches the generated field ContainerId.
func (u *ContainerUpdate) SetContainerId(id string) {
	u.ContainerId = id
}

// SetIgnoreFailure lets the triggering container operation succeed even if
// this update cannot be applied.
func (u *ContainerUpdate) SetIgnoreFailure() {
	u.IgnoreFailure = true
}

// SetLinuxMemoryLimit records setting the memory limit in bytes.
func (u *ContainerUpdate) SetLinuxMemoryLimit(value int64) {
	u.ensureResources().ensureMemory().Limit = Int64(value)
}

// SetLinuxMemoryReservation records setting the memory soft limit in bytes.
func (u *ContainerUpdate) SetLinuxMemoryReservation(value int64) {
	u.ensureResources().ensureMemory().Reservation = Int64(value)
}

// SetLinuxMemorySwap records setting the memory+swap limit in bytes.
func (u *ContainerUpdate) SetLinuxMemorySwap(value int64) {
	u.ensureResources().ensureMemory().Swap = Int64(value)
}

// SetLinuxMemoryKernel records setting the kernel memory limit (cgroup v1 only).
func (u *ContainerUpdate) SetLinuxMemoryKernel(value int64) {
	u.ensureResources().ensureMemory().Kernel = Int64(value)
}

// SetLinuxMemoryKernelTCP records setting the kernel TCP buffer limit.
func (u *ContainerUpdate) SetLinuxMemoryKernelTCP(value int64) {
	u.ensureResources().ensureMemory().KernelTcp = Int64(value)
}

// SetLinuxMemorySwappiness records setting memory swappiness.
func (u *ContainerUpdate) SetLinuxMemorySwappiness(value uint64) {
	u.ensureResources().ensureMemory().Swappiness = UInt64(value)
}

// SetLinuxMemoryDisableOomKiller records disabling the OOM killer.
func (u *ContainerUpdate) SetLinuxMemoryDisableOomKiller() {
	u.ensureResources().ensureMemory().DisableOomKiller = Bool(true)
}

// SetLinuxMemoryUseHierarchy records enabling hierarchical memory accounting.
func (u *ContainerUpdate) SetLinuxMemoryUseHierarchy() {
	u.ensureResources().ensureMemory().UseHierarchy = Bool(true)
}

// SetLinuxCPUShares records setting CPU shares (weight).
func (u *ContainerUpdate) SetLinuxCPUShares(value uint64) {
	u.ensureResources().ensureCPU().Shares = UInt64(value)
}

// SetLinuxCPUQuota records setting the CFS quota in microseconds.
func (u *ContainerUpdate) SetLinuxCPUQuota(value int64) {
	u.ensureResources().ensureCPU().Quota = Int64(value)
}

// SetLinuxCPUPeriod records setting the CFS period in microseconds.
func (u *ContainerUpdate) SetLinuxCPUPeriod(value int64) {
	u.ensureResources().ensureCPU().Period = UInt64(value)
}

// SetLinuxCPURealtimeRuntime records setting the realtime runtime.
func (u *ContainerUpdate) SetLinuxCPURealtimeRuntime(value int64) {
	u.ensureResources().ensureCPU().RealtimeRuntime = Int64(value)
}

// SetLinuxCPURealtimePeriod records setting the realtime period.
func (u *ContainerUpdate) SetLinuxCPURealtimePeriod(value uint64) {
	u.ensureResources().ensureCPU().RealtimePeriod = UInt64(value)
}

// SetLinuxCPUSetCPUs records setting the cpuset CPUs.
func (u *ContainerUpdate) SetLinuxCPUSetCPUs(value string) {
	u.ensureResources().ensureCPU().Cpus = value
}

// SetLinuxCPUSetMems records setting the cpuset memory nodes.
func (u *ContainerUpdate) SetLinuxCPUSetMems(value string) {
	u.ensureResources().ensureCPU().Mems = value
}

// SetLinuxPidLimits records setting the maximum number of processes.
func (u *ContainerUpdate) SetLinuxPidLimits(value int64) {
	u.ensureResources().ensurePids().Limit = value
}

// AddLinuxHugepageLimit records adding a limit for hugepages of pageSize.
func (u *ContainerUpdate) AddLinuxHugepageLimit(pageSize string, value uint64) {
	r := u.ensureResources()
	r.HugepageLimits = append(r.HugepageLimits, &HugepageLimit{PageSize: pageSize, Limit: value})
}

// SetLinuxBlockIOClass records setting the block I/O class.
func (u *ContainerUpdate) SetLinuxBlockIOClass(value string) {
	u.ensureResources().BlockioClass = String(value)
}

// SetLinuxRDTClass records setting the RDT class (resctrl group).
func (u *ContainerUpdate) SetLinuxRDTClass(value string) {
	u.ensureResources().RdtClass = String(value)
}

// AddLinuxUnified records setting a cgroup v2 unified key to value.
func (u *ContainerUpdate) AddLinuxUnified(key, value string) {
	u.ensureResources().ensureUnified()[key] = value
}
