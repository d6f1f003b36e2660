package api

import "slices"

// Adjustments are declarative: a plugin records what it wants changed and the
// runtime merges the records of all plugins. Removals are recorded as entries
// whose key carries the removal marker (see MarkForRemoval). For keyed maps
// (annotations) a removal and a later addition of the same key by one plugin
// collapse into the addition: plugins remove first to claim a key another
// plugin set, then set their own value.

// AddAnnotation records setting annotation key to value.
func (a *ContainerAdjustment) AddAnnotation(key, value string) {
	if a.Annotations == nil {
		a.Annotations = map[string]string{}
	}
	a.Annotations[key] = value
}

// RemoveAnnotation records removing annotation key. This also lets the plugin
// set key afterwards even if another plugin had set it.
func (a *ContainerAdjustment) RemoveAnnotation(key string) {
	a.AddAnnotation(MarkForRemoval(key), "")
}

// AddMount records adding m. m is kept as is, not copied.
func (a *ContainerAdjustment) AddMount(m *Mount) {
	a.Mounts = append(a.Mounts, m)
}

// RemoveMount records removing the mount at containerPath, which also lets
// the plugin add its own mount there afterwards.
func (a *ContainerAdjustment) RemoveMount(containerPath string) {
	a.AddMount(&Mount{Destination: MarkForRemoval(containerPath)})
}

// AddEnv records setting environment variable key to value.
func (a *ContainerAdjustment) AddEnv(key, value string) {
	a.Env = append(a.Env, &KeyValue{Key: key, Value: value})
}

// RemoveEnv records removing environment variable key, which also lets the
// plugin set it afterwards.
func (a *ContainerAdjustment) RemoveEnv(key string) {
	a.AddEnv(MarkForRemoval(key), "")
}

// SetArgs replaces the container's command line. Conflicts with another
// plugin doing the same.
func (a *ContainerAdjustment) SetArgs(args []string) {
	a.Args = slices.Clone(args)
}

// UpdateArgs replaces the container's command line even if another plugin
// already did. On the wire this is SetArgs with an empty first element.
func (a *ContainerAdjustment) UpdateArgs(args []string) {
	a.Args = append([]string{""}, args...)
}

// AddHooks records adding every hook in h to the container's OCI hooks.
func (a *ContainerAdjustment) AddHooks(h *Hooks) {
	if a.Hooks == nil {
		a.Hooks = &Hooks{}
	}
	a.Hooks.Append(h)
}

// AddRlimit records setting the POSIX resource limit typ (e.g. RLIMIT_NOFILE).
func (a *ContainerAdjustment) AddRlimit(typ string, hard, soft uint64) {
	a.Rlimits = append(a.Rlimits, &POSIXRlimit{Type: typ, Hard: hard, Soft: soft})
}

// AddDevice records adding device d. d is kept as is, not copied.
func (a *ContainerAdjustment) AddDevice(d *LinuxDevice) {
	l := a.ensureLinux()
	l.Devices = append(l.Devices, d)
}

// RemoveDevice records removing the device at path, which also lets the
// plugin add its own device there afterwards.
func (a *ContainerAdjustment) RemoveDevice(path string) {
	a.AddDevice(&LinuxDevice{Path: MarkForRemoval(path)})
}

// AddCDIDevice records injecting the CDI device d (by fully qualified name).
func (a *ContainerAdjustment) AddCDIDevice(d *CDIDevice) {
	a.CDIDevices = append(a.CDIDevices, d)
}

// AddOrReplaceNamespace records adding n, or replacing the container's
// namespace of the same type.
func (a *ContainerAdjustment) AddOrReplaceNamespace(n *LinuxNamespace) {
	l := a.ensureLinux()
	l.Namespaces = append(l.Namespaces, n)
}

// RemoveNamespace records removing the container's namespace of n's type.
func (a *ContainerAdjustment) RemoveNamespace(n *LinuxNamespace) {
	a.AddOrReplaceNamespace(&LinuxNamespace{Type: MarkForRemoval(n.Type)})
}

// AddLinuxNetDevice records moving host network device hostDev into the
// container as d. A nil d records nothing.
func (a *ContainerAdjustment) AddLinuxNetDevice(hostDev string, d *LinuxNetDevice) {
	if d == nil {
		return
	}
	a.setNetDevice(hostDev, d)
}

// RemoveLinuxNetDevice records removing host device hostDev from the
// container, which also lets the plugin add it afterwards.
func (a *ContainerAdjustment) RemoveLinuxNetDevice(hostDev string) {
	a.setNetDevice(MarkForRemoval(hostDev), nil)
}

func (a *ContainerAdjustment) setNetDevice(key string, d *LinuxNetDevice) {
	l := a.ensureLinux()
	if l.NetDevices == nil {
		l.NetDevices = map[string]*LinuxNetDevice{}
	}
	l.NetDevices[key] = d
}
