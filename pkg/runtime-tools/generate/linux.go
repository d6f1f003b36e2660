package generate

import (
	rspec "github.com/opencontainers/runtime-spec/specs-go"

	nri "github.com/nri-handover/nri/api"
)

// AdjustDevices adds, replaces or removes devices. An added device is also
// allowed in the device cgroup.
func (g *Generator) AdjustDevices(devices []*nri.LinuxDevice) {
	for _, d := range devices {
		if d == nil {
			continue
		}
		path, remove := d.IsMarkedForRemoval()
		g.RemoveDevice(path)
		if remove {
			continue
		}
		g.AddDevice(d.ToOCI())
		major, minor := d.Major, d.Minor
		g.AddLinuxResourcesDevice(true, d.Type, &major, &minor, d.AccessString())
	}
}

// AdjustCgroupsPath sets the cgroup path, if path is not empty.
func (g *Generator) AdjustCgroupsPath(path string) {
	if path != "" {
		g.SetLinuxCgroupsPath(path)
	}
}

// AdjustNamespaces adds, replaces or removes namespaces (by type).
func (g *Generator) AdjustNamespaces(namespaces []*nri.LinuxNamespace) error {
	for _, n := range namespaces {
		if n == nil {
			continue
		}
		var err error
		if typ, remove := n.IsMarkedForRemoval(); remove {
			err = g.RemoveLinuxNamespace(typ)
		} else {
			err = g.AddOrReplaceLinuxNamespace(n.Type, n.Path)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// AdjustSysctl sets or removes sysctls.
func (g *Generator) AdjustSysctl(sysctl map[string]string) error {
	sysctl, err := g.filterSysctl(sysctl)
	if err != nil {
		return err
	}
	applyKeyed(sysctl, g.RemoveLinuxSysctl, g.AddLinuxSysctl)
	return nil
}

// AdjustLinuxNetDevices moves host network devices into the container, or
// takes back ones marked for removal.
func (g *Generator) AdjustLinuxNetDevices(devices map[string]*nri.LinuxNetDevice) error {
	applyKeyed(devices, g.RemoveLinuxNetDevice, g.AddLinuxNetDevice)
	return nil
}

// AddLinuxNetDevice moves hostDev into the container (nil: nothing).
func (g *Generator) AddLinuxNetDevice(hostDev string, device *nri.LinuxNetDevice) {
	if device == nil {
		return
	}
	g.netDevices()[hostDev] = device.ToOCI()
}

// RemoveLinuxNetDevice removes hostDev from the container's net devices.
func (g *Generator) RemoveLinuxNetDevice(hostDev string) {
	delete(g.netDevices(), hostDev)
}

func (g *Generator) netDevices() map[string]rspec.LinuxNetDevice {
	l := g.linux()
	if l.NetDevices == nil {
		l.NetDevices = map[string]rspec.LinuxNetDevice{}
	}
	return l.NetDevices
}

// AdjustSeccompPolicy replaces the seccomp policy, overriding the kubelet's.
// Actions, architectures and flags are taken in their OCI spelling
// (SCMP_ACT_ALLOW, SCMP_ARCH_X86_64), not runtime-tools' short names. The
// default errno is not carried over, as upstream does not.
func (g *Generator) AdjustSeccompPolicy(policy *nri.LinuxSeccomp) error {
	if policy == nil {
		return nil
	}
	archs := make([]rspec.Arch, 0, len(policy.Architectures))
	for _, a := range policy.Architectures {
		archs = append(archs, rspec.Arch(a))
	}
	flags := make([]rspec.LinuxSeccompFlag, 0, len(policy.Flags))
	for _, f := range policy.Flags {
		flags = append(flags, rspec.LinuxSeccompFlag(f))
	}
	g.linux().Seccomp = &rspec.LinuxSeccomp{
		DefaultAction:    rspec.LinuxSeccompAction(policy.DefaultAction),
		Architectures:    archs,
		ListenerPath:     policy.ListenerPath,
		ListenerMetadata: policy.ListenerMetadata,
		Flags:            flags,
		Syscalls:         nri.ToOCILinuxSyscalls(policy.Syscalls),
	}
	return nil
}

// AdjustMemoryPolicy sets the default NUMA memory policy of the container.
func (g *Generator) AdjustMemoryPolicy(policy *nri.LinuxMemoryPolicy) {
	if policy != nil {
		g.SetLinuxMemoryPolicy(policy.ToOCI())
	}
}

// SetLinuxMemoryPolicy sets the memory policy; one without a mode clears it.
func (g *Generator) SetLinuxMemoryPolicy(policy *rspec.LinuxMemoryPolicy) {
	l := g.linux()
	if policy != nil && policy.Mode == "" {
		policy = nil
	}
	l.MemoryPolicy = policy
}

// InjectCDIDevices asks the runtime's CDI injector (WithCDIDeviceInjector)
// to inject the devices, by their fully qualified CDI names. Without a
// device (nil entries are skipped) the injector is not called.
func (g *Generator) InjectCDIDevices(devices []*nri.CDIDevice) error {
	if g.injectCDIDevices == nil {
		return nil
	}
	names := make([]string, 0, len(devices))
	for _, d := range devices {
		if d != nil {
			names = append(names, d.Name)
		}
	}
	if len(names) == 0 {
		return nil
	}
	return g.injectCDIDevices(g.Config, names)
}
