package api

// Strip normalises a message for comparison: empty lists and maps become nil,
// nested messages that have a Strip method are stripped and dropped when
// empty, and a message left with nothing set becomes nil itself. Other nested
// messages (notably the Optional* wrappers) count as set whenever present,
// because an Optional holding a zero value still means "set to zero".
//
// Strip edits in place and returns the receiver or nil, so tests can compare
// got.Strip() with a literal using proto.Equal, go-cmp or reflect.DeepEqual
// without tripping over nil-vs-empty differences. It deliberately avoids
// protoreflect: reflecting on a message caches state inside it, which would
// make reflect.DeepEqual against a fresh literal fail.
//
// strip_test.go checks, field by field via protoreflect, that every field of
// every type here is accounted for, so a field added to the proto cannot be
// forgotten silently.

// setIf returns p if any of set is true and nil otherwise. Callers pass the
// per-field checks as arguments so all of them run (and normalise) first.
func setIf[T any](p *T, set ...bool) *T {
	for _, s := range set {
		if s {
			return p
		}
	}
	return nil
}

// list reports whether *s has elements, turning an empty slice into nil.
func list[S ~[]E, E any](s *S) bool {
	if len(*s) == 0 {
		*s = nil
		return false
	}
	return true
}

// dict reports whether *m has entries, turning an empty map into nil.
func dict[M ~map[K]V, K comparable, V any](m *M) bool {
	if len(*m) == 0 {
		*m = nil
		return false
	}
	return true
}

// Strip normalises h for comparison; see the file comment.
func (h *Hooks) Strip() *Hooks {
	if h == nil {
		return nil
	}
	return setIf(h,
		list(&h.Prestart), list(&h.CreateRuntime), list(&h.CreateContainer),
		list(&h.StartContainer), list(&h.Poststart), list(&h.Poststop))
}

// Strip normalises r for comparison; see the file comment.
func (r *LinuxResources) Strip() *LinuxResources {
	if r == nil {
		return nil
	}
	r.Memory, r.Cpu, r.Pids = r.Memory.Strip(), r.Cpu.Strip(), r.Pids.Strip()
	return setIf(r,
		r.Memory != nil, r.Cpu != nil, r.Pids != nil,
		list(&r.HugepageLimits), list(&r.Devices), dict(&r.Unified),
		r.BlockioClass != nil, r.RdtClass != nil)
}

// Strip normalises m for comparison; see the file comment.
func (m *LinuxMemory) Strip() *LinuxMemory {
	if m == nil {
		return nil
	}
	return setIf(m,
		m.Limit != nil, m.Reservation != nil, m.Swap != nil, m.Kernel != nil,
		m.KernelTcp != nil, m.Swappiness != nil, m.DisableOomKiller != nil, m.UseHierarchy != nil)
}

// Strip normalises c for comparison; see the file comment.
func (c *LinuxCPU) Strip() *LinuxCPU {
	if c == nil {
		return nil
	}
	return setIf(c,
		c.Shares != nil, c.Quota != nil, c.Period != nil, c.RealtimeRuntime != nil,
		c.RealtimePeriod != nil, c.Cpus != "", c.Mems != "")
}

// Strip normalises p for comparison; see the file comment.
func (p *LinuxPids) Strip() *LinuxPids {
	if p == nil {
		return nil
	}
	return setIf(p, p.Limit != 0)
}

// Strip normalises i for comparison; see the file comment.
func (i *LinuxIOPriority) Strip() *LinuxIOPriority {
	if i == nil {
		return nil
	}
	return setIf(i, i.Class != 0, i.Priority != 0)
}

// Strip normalises s for comparison; see the file comment.
func (s *LinuxScheduler) Strip() *LinuxScheduler {
	if s == nil {
		return nil
	}
	return setIf(s,
		s.Policy != 0, s.Nice != 0, s.Priority != 0, list(&s.Flags),
		s.Runtime != 0, s.Deadline != 0, s.Period != 0)
}

// Strip normalises a for comparison; see the file comment.
func (a *ContainerAdjustment) Strip() *ContainerAdjustment {
	if a == nil {
		return nil
	}
	a.Hooks, a.Linux = a.Hooks.Strip(), a.Linux.Strip()
	return setIf(a,
		a.Hooks != nil, a.Linux != nil,
		dict(&a.Annotations), list(&a.Mounts), list(&a.Env),
		list(&a.Rlimits), list(&a.CDIDevices), list(&a.Args))
}

// Strip normalises c for comparison; see the file comment.
func (c *LinuxContainerAdjustment) Strip() *LinuxContainerAdjustment {
	if c == nil {
		return nil
	}
	c.Resources, c.IoPriority, c.SeccompPolicy = c.Resources.Strip(), c.IoPriority.Strip(), c.SeccompPolicy.Strip()
	c.Scheduler, c.Rdt, c.MemoryPolicy = c.Scheduler.Strip(), c.Rdt.Strip(), c.MemoryPolicy.Strip()
	return setIf(c,
		c.Resources != nil, c.IoPriority != nil, c.SeccompPolicy != nil,
		c.Scheduler != nil, c.Rdt != nil, c.MemoryPolicy != nil,
		list(&c.Devices), list(&c.Namespaces), dict(&c.Sysctl), dict(&c.NetDevices),
		c.CgroupsPath != "", c.OomScoreAdj != nil)
}

// Strip normalises s for comparison; see the file comment.
func (s *LinuxSeccomp) Strip() *LinuxSeccomp {
	if s == nil {
		return nil
	}
	return setIf(s,
		s.DefaultAction != "", s.DefaultErrno != nil, list(&s.Architectures), list(&s.Flags),
		s.ListenerPath != "", s.ListenerMetadata != "", list(&s.Syscalls))
}

// Strip normalises m for comparison; see the file comment.
func (m *LinuxMemoryPolicy) Strip() *LinuxMemoryPolicy {
	if m == nil {
		return nil
	}
	return setIf(m, m.Mode != 0, m.Nodes != "", list(&m.Flags))
}

// Strip normalises u for comparison; see the file comment.
func (u *ContainerUpdate) Strip() *ContainerUpdate {
	if u == nil {
		return nil
	}
	u.Linux = u.Linux.Strip()
	return setIf(u, u.Linux != nil, u.ContainerId != "", u.IgnoreFailure)
}

// Strip normalises c for comparison; see the file comment.
func (c *LinuxContainerUpdate) Strip() *LinuxContainerUpdate {
	if c == nil {
		return nil
	}
	c.Resources = c.Resources.Strip()
	return setIf(c, c.Resources != nil)
}

// Strip normalises r for comparison; see the file comment.
func (r *LinuxRdt) Strip() *LinuxRdt {
	if r == nil {
		return nil
	}
	return setIf(r, r.ClosId != nil, r.Schemata != nil, r.EnableMonitoring != nil, r.Remove)
}
