package api

import "testing"

// Builders create only the intermediate messages on the path to what they
// set, and reuse existing ones instead of replacing them.
func TestEnsureCreatesOnlyWhatIsNeeded(t *testing.T) {
	a := &ContainerAdjustment{}
	a.SetLinuxCPUShares(1)
	r := a.Linux.Resources
	if r.Memory != nil || r.Pids != nil || r.Unified != nil || a.Linux.Rdt != nil || a.Hooks != nil {
		t.Errorf("unrelated parts created: %v", a)
	}
	a.SetLinuxCPUQuota(2)
	a.SetLinuxMemoryLimit(3)
	if a.Linux.Resources != r || r.Cpu.Shares.GetValue() != 1 || r.Cpu.Quota.GetValue() != 2 || r.Memory.Limit.GetValue() != 3 {
		t.Errorf("existing parts replaced or lost: %v", a)
	}

	u := &ContainerUpdate{}
	u.AddLinuxUnified("k", "v")
	res := u.Linux.Resources
	u.SetLinuxPidLimits(5)
	if u.Linux.Resources != res || res.Cpu != nil || res.Memory != nil || res.Unified["k"] != "v" || res.Pids.Limit != 5 {
		t.Errorf("update built wrongly: %v", u)
	}
}
