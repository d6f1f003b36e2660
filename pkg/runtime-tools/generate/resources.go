package generate

import (
	"fmt"
	"slices"

	rspec "github.com/opencontainers/runtime-spec/specs-go"

	nri "github.com/nri-handover/nri/api"
)

// AdjustResources applies the Linux resources: CPU, memory limit, hugepage
// limits, unified (cgroup v2) settings, the PID limit and device cgroup
// rules, then lets the resource checker (WithResourceChecker) see the
// result. Of the memory settings only the limit is applied, and it sets the
// swap limit to the same value (no swap beyond memory), as upstream does.
func (g *Generator) AdjustResources(r *nri.LinuxResources) error {
	if r == nil {
		return nil
	}
	g.linux()
	if cpu := r.Cpu; cpu != nil {
		if cpu.Period != nil {
			g.SetLinuxResourcesCPUPeriod(cpu.Period.GetValue())
		}
		if cpu.Quota != nil {
			g.SetLinuxResourcesCPUQuota(cpu.Quota.GetValue())
		}
		if cpu.Shares != nil {
			g.SetLinuxResourcesCPUShares(cpu.Shares.GetValue())
		}
		if cpu.Cpus != "" {
			g.SetLinuxResourcesCPUCpus(cpu.Cpus)
		}
		if cpu.Mems != "" {
			g.SetLinuxResourcesCPUMems(cpu.Mems)
		}
		if cpu.RealtimeRuntime != nil {
			g.SetLinuxResourcesCPURealtimeRuntime(cpu.RealtimeRuntime.GetValue())
		}
		if cpu.RealtimePeriod != nil {
			g.SetLinuxResourcesCPURealtimePeriod(cpu.RealtimePeriod.GetValue())
		}
	}
	if limit := r.GetMemory().GetLimit().GetValue(); limit != 0 {
		g.SetLinuxResourcesMemoryLimit(limit)
		g.SetLinuxResourcesMemorySwap(limit)
	}
	for _, h := range r.HugepageLimits {
		if h != nil {
			g.AddLinuxResourcesHugepageLimit(h.PageSize, h.Limit)
		}
	}
	keys := make([]string, 0, len(r.Unified))
	for k := range r.Unified {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		g.AddLinuxResourcesUnified(k, r.Unified[k])
	}
	if pids := r.GetPids(); pids != nil {
		g.SetLinuxResourcesPidsLimit(pids.GetLimit())
	}
	for _, d := range r.Devices {
		if d != nil {
			g.AddLinuxResourcesDevice(d.Allow, d.Type, d.Major.Get(), d.Minor.Get(), d.Access)
		}
	}
	if g.checkResources != nil {
		if err := g.checkResources(g.Config.Linux.Resources); err != nil {
			return fmt.Errorf("failed to adjust resources in OCI Spec: %w", err)
		}
	}
	return nil
}

// SetLinuxResourcesPidsLimit sets the PID limit. UnlimitedPidsLimit (or
// less) leaves the limit as it is, as upstream does, since runtime-spec
// v1.3.0 spells "unlimited" as no limit at all.
func (g *Generator) SetLinuxResourcesPidsLimit(limit int64) {
	r := g.resources()
	if r.Pids == nil {
		r.Pids = &rspec.LinuxPids{}
	}
	if limit > UnlimitedPidsLimit {
		r.Pids.Limit = &limit
	}
}

// AdjustBlockIOClass sets the block I/O settings of a class, through the
// resolver (WithBlockIOResolver); the empty class clears them. Without a
// resolver classes are ignored.
func (g *Generator) AdjustBlockIOClass(class *string) error {
	return adjustClass(class, g.resolveBlockIO, g.ClearLinuxResourcesBlockIO, g.SetLinuxResourcesBlockIO, "BlockIO")
}

// ClearLinuxResourcesBlockIO removes the block I/O settings.
func (g *Generator) ClearLinuxResourcesBlockIO() { g.resources().BlockIO = nil }

// SetLinuxResourcesBlockIO replaces the block I/O settings.
func (g *Generator) SetLinuxResourcesBlockIO(blockIO *rspec.LinuxBlockIO) {
	g.resources().BlockIO = blockIO
}

// AdjustRdtClass sets the RDT settings of a class, through the resolver
// (WithRdtResolver); the empty class clears them. Without a resolver classes
// are ignored.
func (g *Generator) AdjustRdtClass(class *string) error {
	return adjustClass(class, g.resolveRdt, g.ClearLinuxIntelRdt, g.SetLinuxIntelRdt, "RDT")
}

// adjustClass applies a class through the runtime's resolver: a class
// names a set of settings only the runtime knows.
func adjustClass[T any](class *string, resolve func(string) (*T, error), clear func(), set func(*T), kind string) error {
	if class == nil || resolve == nil {
		return nil
	}
	if *class == "" {
		clear()
		return nil
	}
	settings, err := resolve(*class)
	if err != nil {
		return fmt.Errorf("failed to adjust %s class in OCI Spec: %w", kind, err)
	}
	set(settings)
	return nil
}

// AdjustRdt applies explicit RDT settings: Remove clears what is there
// first, then the CLOS id, schemata and monitoring are set where given.
func (g *Generator) AdjustRdt(r *nri.LinuxRdt) {
	if r == nil {
		return
	}
	if r.Remove {
		g.ClearLinuxIntelRdt()
	}
	g.AdjustRdtClosID(r.ClosId.Get())
	g.AdjustRdtSchemata(r.Schemata.Get())
	g.AdjustRdtEnableMonitoring(r.EnableMonitoring.Get())
}

// AdjustRdtClosID sets the RDT CLOS id, if given.
func (g *Generator) AdjustRdtClosID(value *string) {
	if value != nil {
		g.SetLinuxIntelRdtClosID(*value)
	}
}

// AdjustRdtSchemata sets the RDT schemata, if given.
func (g *Generator) AdjustRdtSchemata(value *[]string) {
	if value != nil {
		g.SetLinuxIntelRdtSchemata(*value)
	}
}

// AdjustRdtEnableMonitoring sets RDT monitoring, if given.
func (g *Generator) AdjustRdtEnableMonitoring(value *bool) {
	if value != nil {
		g.SetLinuxIntelRdtEnableMonitoring(*value)
	}
}

// ClearLinuxIntelRdt removes the RDT settings.
func (g *Generator) ClearLinuxIntelRdt() { g.linux().IntelRdt = nil }

// SetLinuxIntelRdt replaces the RDT settings.
func (g *Generator) SetLinuxIntelRdt(rdt *rspec.LinuxIntelRdt) { g.linux().IntelRdt = rdt }

// SetLinuxIntelRdtClosID sets the RDT CLOS id.
func (g *Generator) SetLinuxIntelRdtClosID(closID string) { g.intelRdt().ClosID = closID }

// SetLinuxIntelRdtEnableMonitoring sets RDT monitoring.
func (g *Generator) SetLinuxIntelRdtEnableMonitoring(value bool) {
	g.intelRdt().EnableMonitoring = value
}

// SetLinuxIntelRdtSchemata sets the RDT schemata (a copy of schemata).
func (g *Generator) SetLinuxIntelRdtSchemata(schemata []string) {
	g.intelRdt().Schemata = slices.Clone(schemata)
}
