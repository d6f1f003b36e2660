// Package adjust applies a merged container adjustment to the NRI view of a
// container, as a runtime that honours it reports the container afterwards.
// The adaptation uses it to know what a container it saw created looks like
// without asking the runtime (the journal of a takeover); the test runtime
// uses it to create containers.
package adjust

import (
	"maps"

	rspec "github.com/opencontainers/runtime-spec/specs-go"
	"google.golang.org/protobuf/proto"

	"github.com/nri-handover/nri/api"
	"github.com/nri-handover/nri/internal/specgen"
	"github.com/nri-handover/nri/pkg/runtime-tools/generate"
)

// Apply applies a merged adjustment to c, a container being created, in
// place: c becomes what the runtime reports for the container (to SyncFn, in
// later events) once it created it with the adjustment.
//
// The runtime holds an OCI spec, applies the adjustment to it with
// pkg/runtime-tools/generate on a runtime-tools generator, and reports the
// container converted from the spec with the api's FromOCI helpers
// (containerd's internal/cri/nri). Apply does just that: it writes the part
// of c a spec holds back into a spec, adjusts the spec with the same
// generate code on a generator with runtime-tools' semantics
// (internal/specgen), and reads the container back. Re-implementing the
// rules field by field on api.Container would duplicate generate's (a
// variable changed in place, a mount replacing the one at its destination
// and all mounts sorted after, a cgroup rule per added device, swap set with
// the memory limit, the other memory settings ignored, a pids limit of -1
// ignored, RDT's Remove, ...) and drift from them; the round trip costs a
// conversion each way and is exact for every field a runtime reports
// (TestApplyMatchesRuntime, field by field).
//
// Where each field of ContainerAdjustment shows in api.Container:
//
//   - annotations, env, args, mounts, hooks, rlimits: the same-named
//     fields. Keys marked for removal ("-key", "-/dest") remove, and are
//     never added as entries.
//   - linux.devices: Linux.Devices, plus a cgroup rule allowing each added
//     device in Linux.Resources.Devices.
//   - linux.resources: Linux.Resources, except blockio_class and rdt_class,
//     which no OCI spec holds: the runtime resolves a class into OCI
//     settings. Apply resolves an RDT class as containerd does (the class is
//     the CLOS id, in Linux.Rdt); block I/O settings are nothing
//     api.Container carries, so a block I/O class shows nowhere.
//   - linux.cgroups_path, oom_score_adj, io_priority, seccomp_policy,
//     namespaces, sysctl, net_devices, scheduler, rdt: the same-named Linux
//     fields.
//   - linux.memory_policy: nowhere; api.LinuxContainer (upstream's too) has
//     no memory policy.
//   - CDI_devices: nowhere. Container.CDI_devices are the devices the
//     container was created asking for (containerd reports the CRI
//     request's); the adjustment's are injected into the spec by the
//     runtime from the node's CDI registry, which Apply cannot see, so what
//     an injection adds (devices, mounts, env, hooks) is missing here.
//
// The rest of what the runtime decides is not known here either: Apply
// installs no annotation filter and no resource checker (containerd's drops
// hugepage limits when its configuration disables the hugetlb controller).
//
// Fields of c no spec holds are left as they are: ids, name, state, labels,
// pid, times, exit status, CDI devices, user, image, the seccomp profile
// (the CRI request's) and the resources' block I/O and RDT class names. A
// spec-held value no runtime reports comes out as a runtime would report it
// (e.g. RDT settings with all three of CLOS id, schemata and monitoring
// set; a removal marker left in c itself is taken literally).
//
// An error is the one the runtime's generate returns for the adjustment (an
// unknown namespace type, a mount asking for shared propagation from a
// private host path: the adaptation runs in the runtime's process and sees
// its mounts), on which the runtime fails the creation; c is then left
// unchanged.
func Apply(c *api.Container, a *api.ContainerAdjustment) error {
	if a == nil {
		return nil
	}
	s := specOf(c)
	g := generate.SpecGenerator(specgen.New(s), generate.WithRdtResolver(rdtClosOfClass))
	if err := g.Adjust(a); err != nil {
		return err
	}
	fromSpec(c, s)
	return nil
}

// rdtClosOfClass is containerd's RDT class resolver.
func rdtClosOfClass(class string) (*rspec.LinuxIntelRdt, error) {
	return &rspec.LinuxIntelRdt{ClosID: class}, nil
}

// MergeResources merges res into the container's Linux resources (a
// container update).
func MergeResources(c *api.Container, res *api.LinuxResources) {
	if res == nil || proto.Size(res) == 0 {
		return
	}
	if c.Linux == nil {
		c.Linux = &api.LinuxContainer{}
	}
	if c.Linux.Resources == nil {
		c.Linux.Resources = &api.LinuxResources{}
	}
	// A list the update sets replaces the container's, as a runtime sets
	// it in the spec; proto.Merge would append to it.
	if len(res.HugepageLimits) > 0 {
		c.Linux.Resources.HugepageLimits = nil
	}
	if len(res.Devices) > 0 {
		c.Linux.Resources.Devices = nil
	}
	proto.Merge(c.Linux.Resources, res)
}

// specOf is the spec a runtime reporting c holds: the inverse of fromSpec,
// so that fromSpec(specOf(c)) gives back what a runtime reports.
func specOf(c *api.Container) *rspec.Spec {
	s := &rspec.Spec{
		Annotations: maps.Clone(c.Annotations),
		Hooks:       ociHooks(c.Hooks),
		Process: &rspec.Process{
			Args: api.DupStringSlice(c.Args),
			Env:  api.DupStringSlice(c.Env),
		},
		Linux: &rspec.Linux{},
	}
	for _, m := range c.Mounts {
		if m != nil {
			s.Mounts = append(s.Mounts, m.ToOCI(nil))
		}
	}
	for _, r := range c.Rlimits {
		if r != nil {
			s.Process.Rlimits = append(s.Process.Rlimits, rspec.POSIXRlimit{Type: r.Type, Hard: r.Hard, Soft: r.Soft})
		}
	}
	l := c.GetLinux()
	if l == nil {
		return s
	}
	p, x := s.Process, s.Linux
	p.OOMScoreAdj = l.OomScoreAdj.Get()
	p.IOPriority = l.IoPriority.ToOCI()
	if sch := l.Scheduler; sch != nil {
		p.Scheduler = &rspec.Scheduler{
			Policy:   sch.Policy.ToOCI(),
			Nice:     sch.Nice,
			Priority: sch.Priority,
			Flags:    api.ToOCILinuxSchedulerFlags(sch.Flags),
			Runtime:  sch.Runtime,
			Deadline: sch.Deadline,
			Period:   sch.Period,
		}
	}
	for _, n := range l.Namespaces {
		if n != nil {
			x.Namespaces = append(x.Namespaces, rspec.LinuxNamespace{Type: rspec.LinuxNamespaceType(n.Type), Path: n.Path})
		}
	}
	for _, d := range l.Devices {
		if d != nil {
			x.Devices = append(x.Devices, d.ToOCI())
		}
	}
	x.Resources = ociResources(l.Resources)
	x.CgroupsPath = l.CgroupsPath
	x.Seccomp = ociSeccomp(l.SeccompPolicy)
	x.Sysctl = maps.Clone(l.Sysctl)
	x.NetDevices = api.ToOCILinuxNetDevices(l.NetDevices)
	if r := l.Rdt; r != nil {
		x.IntelRdt = &rspec.LinuxIntelRdt{
			ClosID:           r.ClosId.GetValue(),
			Schemata:         api.DupStringSlice(r.Schemata.GetValue()),
			EnableMonitoring: r.EnableMonitoring.GetValue(),
		}
	}
	return s
}

// fromSpec sets the fields of c a spec holds from s, as a runtime reports
// them (containerd's internal/cri/nri, plus the rlimits, sysctls and seccomp
// policy it holds in the spec too). c takes over s's maps and lists: s is
// Apply's own (specOf's copy), used no more.
func fromSpec(c *api.Container, s *rspec.Spec) {
	old := c.GetLinux()
	c.Annotations = s.Annotations
	c.Mounts = api.FromOCIMounts(s.Mounts)
	c.Hooks = api.FromOCIHooks(s.Hooks)
	c.Args, c.Env, c.Rlimits = nil, nil, nil
	l := &api.LinuxContainer{SeccompProfile: old.GetSeccompProfile()}
	if p := s.Process; p != nil {
		c.Args = p.Args
		c.Env = p.Env
		for _, r := range p.Rlimits {
			c.Rlimits = append(c.Rlimits, &api.POSIXRlimit{Type: r.Type, Hard: r.Hard, Soft: r.Soft})
		}
		l.OomScoreAdj = api.Int(p.OOMScoreAdj)
		l.IoPriority = api.FromOCILinuxIOPriority(p.IOPriority)
		l.Scheduler = api.FromOCILinuxScheduler(p.Scheduler)
	}
	if x := s.Linux; x != nil {
		l.Namespaces = api.FromOCILinuxNamespaces(x.Namespaces)
		l.Devices = api.FromOCILinuxDevices(x.Devices)
		l.Resources = api.FromOCILinuxResources(x.Resources, s.Annotations)
		l.CgroupsPath = x.CgroupsPath
		l.SeccompPolicy = api.FromOCILinuxSeccomp(x.Seccomp)
		l.Sysctl = x.Sysctl
		l.NetDevices = api.FromOCILinuxNetDevices(x.NetDevices)
		if r := x.IntelRdt; r != nil {
			l.Rdt = &api.LinuxRdt{
				ClosId:           api.String(r.ClosID),
				Schemata:         api.RepeatedString(r.Schemata),
				EnableMonitoring: api.Bool(r.EnableMonitoring),
			}
		}
	}
	// The class names are no spec's: they stay what they were.
	if blockio, rdt := old.GetResources().GetBlockioClass(), old.GetResources().GetRdtClass(); blockio != nil || rdt != nil {
		if l.Resources == nil {
			l.Resources = &api.LinuxResources{}
		}
		l.Resources.BlockioClass, l.Resources.RdtClass = blockio, rdt
	}
	if old == nil && proto.Size(l) == 0 {
		l = nil // nothing to report, and nothing was
	}
	c.Linux = l
}

func ociHooks(h *api.Hooks) *rspec.Hooks {
	if h == nil {
		return nil
	}
	list := func(hooks []*api.Hook) []rspec.Hook {
		var out []rspec.Hook
		for _, h := range hooks {
			if h != nil {
				out = append(out, h.ToOCI())
			}
		}
		return out
	}
	return &rspec.Hooks{
		Prestart:        list(h.Prestart), //nolint:staticcheck // deprecated in OCI, still carried
		CreateRuntime:   list(h.CreateRuntime),
		CreateContainer: list(h.CreateContainer),
		StartContainer:  list(h.StartContainer),
		Poststart:       list(h.Poststart),
		Poststop:        list(h.Poststop),
	}
}

// ociResources is the inverse of api.FromOCILinuxResources (LinuxResources'
// ToOCI is not: it always adds CPU and memory sections and drops a pids limit
// of -1).
func ociResources(r *api.LinuxResources) *rspec.LinuxResources {
	if r == nil {
		return nil
	}
	o := &rspec.LinuxResources{}
	if m := r.Memory; m != nil {
		o.Memory = &rspec.LinuxMemory{
			Limit:            m.Limit.Get(),
			Reservation:      m.Reservation.Get(),
			Swap:             m.Swap.Get(),
			Kernel:           m.Kernel.Get(), //nolint:staticcheck // deprecated in OCI, still carried
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
		if h != nil {
			o.HugepageLimits = append(o.HugepageLimits, rspec.LinuxHugepageLimit{Pagesize: h.PageSize, Limit: h.Limit})
		}
	}
	o.Unified = maps.Clone(r.Unified)
	for _, d := range r.Devices {
		if d != nil {
			o.Devices = append(o.Devices, rspec.LinuxDeviceCgroup{
				Allow: d.Allow, Type: d.Type, Major: d.Major.Get(), Minor: d.Minor.Get(), Access: d.Access,
			})
		}
	}
	if p := r.Pids; p != nil {
		limit := p.Limit
		o.Pids = &rspec.LinuxPids{Limit: &limit}
	}
	return o
}

// ociSeccomp is the inverse of api.FromOCILinuxSeccomp.
func ociSeccomp(p *api.LinuxSeccomp) *rspec.LinuxSeccomp {
	if p == nil {
		return nil
	}
	o := &rspec.LinuxSeccomp{
		DefaultAction:    rspec.LinuxSeccompAction(p.DefaultAction),
		ListenerPath:     p.ListenerPath,
		ListenerMetadata: p.ListenerMetadata,
		Syscalls:         api.ToOCILinuxSyscalls(p.Syscalls),
	}
	if e := p.DefaultErrno; e != nil {
		v := uint(e.Value)
		o.DefaultErrnoRet = &v
	}
	for _, a := range p.Architectures {
		o.Architectures = append(o.Architectures, rspec.Arch(a))
	}
	for _, f := range p.Flags {
		o.Flags = append(o.Flags, rspec.LinuxSeccompFlag(f))
	}
	return o
}
