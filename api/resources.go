package api

import (
	"maps"

	rspec "github.com/opencontainers/runtime-spec/specs-go"
	"google.golang.org/protobuf/proto"
)

// UnlimitedPidsLimit is the LinuxPids.Limit value meaning "no limit".
const UnlimitedPidsLimit = -1

// FromOCILinuxResources converts OCI cgroup resources; nil stays nil. The
// second argument (annotations) is accepted for API compatibility and unused:
// block I/O and RDT classes are not part of the OCI resources.
func FromOCILinuxResources(o *rspec.LinuxResources, _ map[string]string) *LinuxResources {
	if o == nil {
		return nil
	}
	r := &LinuxResources{}
	if m := o.Memory; m != nil {
		r.Memory = &LinuxMemory{
			Limit:            Int64(m.Limit),
			Reservation:      Int64(m.Reservation),
			Swap:             Int64(m.Swap),
			Kernel:           Int64(m.Kernel), //nolint:staticcheck // deprecated in OCI, still carried
			KernelTcp:        Int64(m.KernelTCP),
			Swappiness:       UInt64(m.Swappiness),
			DisableOomKiller: Bool(m.DisableOOMKiller),
			UseHierarchy:     Bool(m.UseHierarchy),
		}
	}
	if c := o.CPU; c != nil {
		r.Cpu = &LinuxCPU{
			Shares:          UInt64(c.Shares),
			Quota:           Int64(c.Quota),
			Period:          UInt64(c.Period),
			RealtimeRuntime: Int64(c.RealtimeRuntime),
			RealtimePeriod:  UInt64(c.RealtimePeriod),
			Cpus:            c.Cpus,
			Mems:            c.Mems,
		}
	}
	for _, h := range o.HugepageLimits {
		r.HugepageLimits = append(r.HugepageLimits, &HugepageLimit{PageSize: h.Pagesize, Limit: h.Limit})
	}
	for _, d := range o.Devices {
		r.Devices = append(r.Devices, &LinuxDeviceCgroup{
			Allow:  d.Allow,
			Type:   d.Type,
			Major:  Int64(d.Major),
			Minor:  Int64(d.Minor),
			Access: d.Access,
		})
	}
	if p := o.Pids; p != nil {
		r.Pids = &LinuxPids{}
		if p.Limit != nil {
			r.Pids.Limit = *p.Limit
		}
	}
	if len(o.Unified) > 0 {
		r.Unified = maps.Clone(o.Unified)
	}
	return r
}

// ToOCI converts the resources to their OCI form; nil stays nil. The result
// always carries (possibly empty) CPU and memory sections, which is what
// runtimes expect when they merge it into a spec. A pids limit of
// UnlimitedPidsLimit or below is expressed as an unset limit.
func (r *LinuxResources) ToOCI() *rspec.LinuxResources {
	if r == nil {
		return nil
	}
	o := &rspec.LinuxResources{
		CPU:    &rspec.LinuxCPU{},
		Memory: &rspec.LinuxMemory{},
	}
	if m := r.Memory; m != nil {
		o.Memory = &rspec.LinuxMemory{
			Limit:            m.Limit.Get(),
			Reservation:      m.Reservation.Get(),
			Swap:             m.Swap.Get(),
			Kernel:           m.Kernel.Get(),
			KernelTCP:        m.KernelTcp.Get(),
			Swappiness:       m.Swappiness.Get(),
			DisableOOMKiller: m.DisableOomKiller.Get(),
			UseHierarchy:     m.UseHierarchy.Get(),
		}
	}
	if c := r.Cpu; c != nil {
		o.CPU = &rspec.LinuxCPU{
			Shares:          c.Shares.Get(),
			Quota:           c.Quota.Get(),
			Period:          c.Period.Get(),
			RealtimeRuntime: c.RealtimeRuntime.Get(),
			RealtimePeriod:  c.RealtimePeriod.Get(),
			Cpus:            c.Cpus,
			Mems:            c.Mems,
		}
	}
	for _, h := range r.HugepageLimits {
		o.HugepageLimits = append(o.HugepageLimits, rspec.LinuxHugepageLimit{Pagesize: h.PageSize, Limit: h.Limit})
	}
	if len(r.Unified) > 0 {
		o.Unified = maps.Clone(r.Unified)
	}
	for _, d := range r.Devices {
		o.Devices = append(o.Devices, rspec.LinuxDeviceCgroup{
			Allow:  d.Allow,
			Type:   d.Type,
			Major:  d.Major.Get(),
			Minor:  d.Minor.Get(),
			Access: d.Access,
		})
	}
	if r.Pids != nil {
		o.Pids = &rspec.LinuxPids{}
		if r.Pids.Limit > UnlimitedPidsLimit {
			limit := r.Pids.Limit
			o.Pids.Limit = &limit
		}
	}
	return o
}

// Copy returns a deep copy of r; nil stays nil.
func (r *LinuxResources) Copy() *LinuxResources {
	if r == nil {
		return nil
	}
	c := proto.Clone(r).(*LinuxResources)
	if len(c.Unified) == 0 {
		c.Unified = nil
	}
	return c
}

// Copy returns a deep copy of r; nil stays nil.
func (r *LinuxRdt) Copy() *LinuxRdt {
	if r == nil {
		return nil
	}
	return proto.Clone(r).(*LinuxRdt)
}
