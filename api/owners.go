package api

import (
	"fmt"
)

// Field ownership lets the runtime merge the adjustments of several plugins
// safely: the first plugin to set a field owns it, and a second plugin setting
// the same field is a conflict that fails the request, naming both plugins.
// A plugin may explicitly clear a field first (a removal marker on the wire),
// after which only that plugin may set it again.
//
// Ownership is recorded per container in OwningPlugins (the message is also
// sent to validator plugins). It is not safe for concurrent use: the runtime
// adaptation merges responses one plugin at a time.

// fieldNames names every adjustable field in conflict errors. Most fields
// have a single owner; per-key fields (annotation, mount, env, ...) have one
// owner per key; OCI hooks are shared and record every contributing plugin.
// Tests check the table covers the Field enum.
var fieldNames = map[Field]string{
	Field_Annotations:         "annotation",
	Field_Mounts:              "mount",
	Field_OciHooks:            "OCI hooks",
	Field_Devices:             "device",
	Field_CdiDevices:          "CDI device",
	Field_Env:                 "environment variable",
	Field_Args:                "arguments",
	Field_MemLimit:            "memory limit",
	Field_MemReservation:      "memory reservation",
	Field_MemSwapLimit:        "memory swap limit",
	Field_MemKernelLimit:      "memory kernel limit",
	Field_MemTCPLimit:         "memory kernel TCP limit",
	Field_MemSwappiness:       "memory swappiness",
	Field_MemDisableOomKiller: "memory disable OOM killer",
	Field_MemUseHierarchy:     "memory use hierarchy",
	Field_CPUShares:           "CPU shares",
	Field_CPUQuota:            "CPU quota",
	Field_CPUPeriod:           "CPU period",
	Field_CPURealtimeRuntime:  "CPU realtime runtime",
	Field_CPURealtimePeriod:   "CPU realtime period",
	Field_CPUSetCPUs:          "cpuset CPUs",
	Field_CPUSetMems:          "cpuset memory nodes",
	Field_PidsLimit:           "pids limit",
	Field_HugepageLimits:      "hugepage limit",
	Field_BlockioClass:        "block I/O class",
	Field_RdtClass:            "RDT class",
	Field_CgroupsUnified:      "unified cgroup parameter",
	Field_CgroupsPath:         "cgroups path",
	Field_OomScoreAdj:         "OOM score adjustment",
	Field_Rlimits:             "rlimit",
	Field_IoPriority:          "I/O priority",
	Field_SeccompPolicy:       "seccomp policy",
	Field_Namespace:           "namespace",
	Field_Sysctl:              "sysctl",
	Field_LinuxNetDevices:     "network device",
	Field_LinuxSched:          "scheduling policy",
	Field_RdtClosID:           "RDT CLOS ID",
	Field_RdtSchemata:         "RDT schemata",
	Field_RdtEnableMonitoring: "RDT monitoring",
	Field_MemoryPolicy:        "memory policy",
}

// Key returns the field as the key used in FieldOwners' maps.
func (f Field) Key() int32 {
	return int32(f)
}

// describe names a field (and key) for error messages.
func (f Field) describe(key ...string) string {
	name := f.String()
	if n, ok := fieldNames[f]; ok {
		name = n
	}
	for _, k := range key {
		name += fmt.Sprintf(" %q", k)
	}
	return name
}

// An owner recorded with a removal marker ("-plugin") means the plugin
// cleared the field: it may set the field again, nobody else may. Using the
// wire's removal marker keeps one convention for validators reading owners.
func clearedBy(plugin string) string { return MarkForRemoval(plugin) }

func clearer(owner string) (string, bool) { return IsMarkedForRemoval(owner) }

// NewOwningPlugins returns an empty ownership record for any number of containers.
func NewOwningPlugins() *OwningPlugins {
	return &OwningPlugins{Owners: map[string]*FieldOwners{}}
}

// NewFieldOwners returns an empty ownership record for one container.
func NewFieldOwners() *FieldOwners {
	return &FieldOwners{
		Simple:   map[int32]string{},
		Compound: map[int32]*CompoundFieldOwners{},
	}
}

// NewCompoundFieldOwners returns an empty per-key ownership record.
func NewCompoundFieldOwners() *CompoundFieldOwners {
	return &CompoundFieldOwners{Owners: map[string]string{}}
}

// forContainer returns the container's record, creating it for writers.
func (o *OwningPlugins) forContainer(id string) *FieldOwners {
	if o.Owners == nil {
		o.Owners = map[string]*FieldOwners{}
	}
	f, ok := o.Owners[id]
	if !ok {
		f = NewFieldOwners()
		o.Owners[id] = f
	}
	return f
}

// lookup returns the container's record for readers, nil if there is none.
// Every FieldOwners reader accepts a nil receiver.
func (o *OwningPlugins) lookup(id string) *FieldOwners {
	if o == nil {
		return nil
	}
	return o.Owners[id]
}

// Conflict returns the error for plugin trying to set a field other owns.
// qualifiers name the key of a per-key field.
func (f *FieldOwners) Conflict(field int32, plugin, other string, qualifiers ...string) error {
	return fmt.Errorf("plugins %q and %q both tried to set %s",
		plugin, other, Field(field).describe(qualifiers...))
}

// IsSimpleConflict returns a conflict error if plugin may not set field.
func (f *FieldOwners) IsSimpleConflict(field int32, plugin string) error {
	owner, claimed := f.Simple[field]
	if !claimed {
		return nil
	}
	return f.conflictWith(field, plugin, owner)
}

// IsCompoundConflict returns a conflict error if plugin may not set key of field.
func (f *FieldOwners) IsCompoundConflict(field int32, key, plugin string) error {
	owner, claimed := f.compoundOwner(field, key)
	if !claimed {
		return nil
	}
	return f.conflictWith(field, plugin, owner, key)
}

// conflictWith decides whether plugin may set a field owner already holds.
// Only the plugin that cleared a field may set it again. A field set twice is
// a conflict even when both claims carry the same name: that is two
// instances of one plugin acting on the same container, as upstream reports.
func (f *FieldOwners) conflictWith(field int32, plugin, owner string, key ...string) error {
	if other, cleared := clearer(owner); cleared {
		if other == plugin {
			return nil
		}
		owner = other
	}
	return f.Conflict(field, plugin, owner, key...)
}

func (f *FieldOwners) claimSimple(field Field, plugin string) error {
	f.ensureMaps()
	if err := f.IsSimpleConflict(field.Key(), plugin); err != nil {
		return err
	}
	f.Simple[field.Key()] = plugin
	return nil
}

func (f *FieldOwners) claimCompound(field Field, key, plugin string) error {
	f.ensureMaps()
	if err := f.IsCompoundConflict(field.Key(), key, plugin); err != nil {
		return err
	}
	f.keys(field).Owners[key] = plugin
	return nil
}

// accumulate records one more plugin for a shared field, in claim order.
// Every claim is recorded, a plugin name twice for two instances of it, as
// upstream does: validators see the same owners from either library.
func (f *FieldOwners) accumulate(field Field, plugin string) {
	f.ensureMaps()
	if owners, ok := f.Simple[field.Key()]; ok {
		plugin = owners + "," + plugin
	}
	f.Simple[field.Key()] = plugin
}

func (f *FieldOwners) clearSimple(field Field, plugin string) {
	f.ensureMaps()
	f.Simple[field.Key()] = clearedBy(plugin)
}

func (f *FieldOwners) clearCompound(field Field, key, plugin string) {
	f.keys(field).Owners[key] = clearedBy(plugin)
}

// ensureMaps makes a record decoded from the wire (nil maps) writable.
func (f *FieldOwners) ensureMaps() {
	if f.Simple == nil {
		f.Simple = map[int32]string{}
	}
	if f.Compound == nil {
		f.Compound = map[int32]*CompoundFieldOwners{}
	}
}

// keys returns the per-key record of field, creating it.
func (f *FieldOwners) keys(field Field) *CompoundFieldOwners {
	f.ensureMaps()
	c, ok := f.Compound[field.Key()]
	if !ok || c == nil {
		c = NewCompoundFieldOwners()
		f.Compound[field.Key()] = c
	}
	if c.Owners == nil {
		c.Owners = map[string]string{}
	}
	return c
}

func (f *FieldOwners) simpleOwner(field Field) (string, bool) {
	if f == nil {
		return "", false
	}
	owner, ok := f.Simple[field.Key()]
	return owner, ok
}

func (f *FieldOwners) compoundOwner(field int32, key string) (string, bool) {
	if f == nil || f.Compound[field] == nil {
		return "", false
	}
	owner, ok := f.Compound[field].Owners[key]
	return owner, ok
}

func (f *FieldOwners) compoundOwners(field Field) (map[string]string, bool) {
	if f == nil || f.Compound[field.Key()] == nil {
		return nil, false
	}
	return f.Compound[field.Key()].Owners, true
}

// OCI hooks accumulate: the owner is a comma-separated list of plugins.

func (o *OwningPlugins) ClaimHooks(id, plugin string) error {
	return o.forContainer(id).ClaimHooks(plugin)
}
func (o *OwningPlugins) HooksOwner(id string) (string, bool) { return o.lookup(id).HooksOwner() }
func (o *OwningPlugins) ClearHooks(id, plugin string)        { o.forContainer(id).ClearHooks(plugin) }
func (f *FieldOwners) ClaimHooks(plugin string) error {
	f.accumulate(Field_OciHooks, plugin)
	return nil
}
func (f *FieldOwners) HooksOwner() (string, bool) { return f.simpleOwner(Field_OciHooks) }
func (f *FieldOwners) ClearHooks(plugin string)   { f.clearSimple(Field_OciHooks, plugin) }

// ClearRdt clears every RDT field: a plugin resets RDT as a whole.
func (o *OwningPlugins) ClearRdt(id, plugin string) { o.forContainer(id).ClearRdt(plugin) }

// ClearRdt clears every RDT field: a plugin resets RDT as a whole.
func (f *FieldOwners) ClearRdt(plugin string) {
	for _, field := range []Field{Field_RdtClosID, Field_RdtSchemata, Field_RdtEnableMonitoring} {
		f.clearSimple(field, plugin)
	}
}

// NamespaceOwners returns the owner of each adjusted namespace type.
func (o *OwningPlugins) NamespaceOwners(id string) (map[string]string, bool) {
	return o.lookup(id).compoundOwners(Field_Namespace)
}

// Per-key fields: Claim<X>(id, key, plugin), <X>Owner(id, key), Clear<X>(id, key, plugin),
// and the same on FieldOwners without the container ID.

func (o *OwningPlugins) ClaimAnnotation(id, key, plugin string) error {
	return o.forContainer(id).ClaimAnnotation(key, plugin)
}
func (o *OwningPlugins) AnnotationOwner(id, key string) (string, bool) {
	return o.lookup(id).AnnotationOwner(key)
}
func (o *OwningPlugins) ClearAnnotation(id, key, plugin string) {
	o.forContainer(id).ClearAnnotation(key, plugin)
}
func (f *FieldOwners) ClaimAnnotation(key, plugin string) error {
	return f.claimCompound(Field_Annotations, key, plugin)
}
func (f *FieldOwners) AnnotationOwner(key string) (string, bool) {
	return f.compoundOwner(Field_Annotations.Key(), key)
}
func (f *FieldOwners) ClearAnnotation(key, plugin string) {
	f.clearCompound(Field_Annotations, key, plugin)
}

func (o *OwningPlugins) ClaimMount(id, destination, plugin string) error {
	return o.forContainer(id).ClaimMount(destination, plugin)
}
func (o *OwningPlugins) MountOwner(id, destination string) (string, bool) {
	return o.lookup(id).MountOwner(destination)
}
func (o *OwningPlugins) ClearMount(id, destination, plugin string) {
	o.forContainer(id).ClearMount(destination, plugin)
}
func (f *FieldOwners) ClaimMount(destination, plugin string) error {
	return f.claimCompound(Field_Mounts, destination, plugin)
}
func (f *FieldOwners) MountOwner(destination string) (string, bool) {
	return f.compoundOwner(Field_Mounts.Key(), destination)
}
func (f *FieldOwners) ClearMount(destination, plugin string) {
	f.clearCompound(Field_Mounts, destination, plugin)
}

func (o *OwningPlugins) ClaimDevice(id, path, plugin string) error {
	return o.forContainer(id).ClaimDevice(path, plugin)
}
func (o *OwningPlugins) DeviceOwner(id, path string) (string, bool) {
	return o.lookup(id).DeviceOwner(path)
}
func (o *OwningPlugins) ClearDevice(id, path, plugin string) {
	o.forContainer(id).ClearDevice(path, plugin)
}
func (f *FieldOwners) ClaimDevice(path, plugin string) error {
	return f.claimCompound(Field_Devices, path, plugin)
}
func (f *FieldOwners) DeviceOwner(path string) (string, bool) {
	return f.compoundOwner(Field_Devices.Key(), path)
}
func (f *FieldOwners) ClearDevice(path, plugin string) { f.clearCompound(Field_Devices, path, plugin) }

func (o *OwningPlugins) ClaimCdiDevice(id, name, plugin string) error {
	return o.forContainer(id).ClaimCdiDevice(name, plugin)
}
func (o *OwningPlugins) CdiDeviceOwner(id, name string) (string, bool) {
	return o.lookup(id).CdiDeviceOwner(name)
}
func (o *OwningPlugins) ClearCdiDevice(id, name, plugin string) {
	o.forContainer(id).ClearCdiDevice(name, plugin)
}
func (f *FieldOwners) ClaimCdiDevice(name, plugin string) error {
	return f.claimCompound(Field_CdiDevices, name, plugin)
}
func (f *FieldOwners) CdiDeviceOwner(name string) (string, bool) {
	return f.compoundOwner(Field_CdiDevices.Key(), name)
}
func (f *FieldOwners) ClearCdiDevice(name, plugin string) {
	f.clearCompound(Field_CdiDevices, name, plugin)
}

func (o *OwningPlugins) ClaimEnv(id, name, plugin string) error {
	return o.forContainer(id).ClaimEnv(name, plugin)
}
func (o *OwningPlugins) EnvOwner(id, name string) (string, bool) { return o.lookup(id).EnvOwner(name) }
func (o *OwningPlugins) ClearEnv(id, name, plugin string)        { o.forContainer(id).ClearEnv(name, plugin) }
func (f *FieldOwners) ClaimEnv(name, plugin string) error {
	return f.claimCompound(Field_Env, name, plugin)
}
func (f *FieldOwners) EnvOwner(name string) (string, bool) {
	return f.compoundOwner(Field_Env.Key(), name)
}
func (f *FieldOwners) ClearEnv(name, plugin string) { f.clearCompound(Field_Env, name, plugin) }

func (o *OwningPlugins) ClaimHugepageLimit(id, size, plugin string) error {
	return o.forContainer(id).ClaimHugepageLimit(size, plugin)
}
func (o *OwningPlugins) HugepageLimitOwner(id, size string) (string, bool) {
	return o.lookup(id).HugepageLimitOwner(size)
}
func (o *OwningPlugins) ClearHugepageLimit(id, size, plugin string) {
	o.forContainer(id).ClearHugepageLimit(size, plugin)
}
func (f *FieldOwners) ClaimHugepageLimit(size, plugin string) error {
	return f.claimCompound(Field_HugepageLimits, size, plugin)
}
func (f *FieldOwners) HugepageLimitOwner(size string) (string, bool) {
	return f.compoundOwner(Field_HugepageLimits.Key(), size)
}
func (f *FieldOwners) ClearHugepageLimit(size, plugin string) {
	f.clearCompound(Field_HugepageLimits, size, plugin)
}

func (o *OwningPlugins) ClaimCgroupsUnified(id, key, plugin string) error {
	return o.forContainer(id).ClaimCgroupsUnified(key, plugin)
}
func (o *OwningPlugins) CgroupsUnifiedOwner(id, key string) (string, bool) {
	return o.lookup(id).CgroupsUnifiedOwner(key)
}
func (o *OwningPlugins) ClearCgroupsUnified(id, key, plugin string) {
	o.forContainer(id).ClearCgroupsUnified(key, plugin)
}
func (f *FieldOwners) ClaimCgroupsUnified(key, plugin string) error {
	return f.claimCompound(Field_CgroupsUnified, key, plugin)
}
func (f *FieldOwners) CgroupsUnifiedOwner(key string) (string, bool) {
	return f.compoundOwner(Field_CgroupsUnified.Key(), key)
}
func (f *FieldOwners) ClearCgroupsUnified(key, plugin string) {
	f.clearCompound(Field_CgroupsUnified, key, plugin)
}

func (o *OwningPlugins) ClaimRlimit(id, typ, plugin string) error {
	return o.forContainer(id).ClaimRlimit(typ, plugin)
}
func (o *OwningPlugins) RlimitOwner(id, typ string) (string, bool) {
	return o.lookup(id).RlimitOwner(typ)
}
func (o *OwningPlugins) ClearRlimit(id, typ, plugin string) {
	o.forContainer(id).ClearRlimit(typ, plugin)
}
func (f *FieldOwners) ClaimRlimit(typ, plugin string) error {
	return f.claimCompound(Field_Rlimits, typ, plugin)
}
func (f *FieldOwners) RlimitOwner(typ string) (string, bool) {
	return f.compoundOwner(Field_Rlimits.Key(), typ)
}
func (f *FieldOwners) ClearRlimit(typ, plugin string) { f.clearCompound(Field_Rlimits, typ, plugin) }

func (o *OwningPlugins) ClaimNamespace(id, typ, plugin string) error {
	return o.forContainer(id).ClaimNamespace(typ, plugin)
}
func (o *OwningPlugins) NamespaceOwner(id, typ string) (string, bool) {
	return o.lookup(id).NamespaceOwner(typ)
}
func (o *OwningPlugins) ClearNamespace(id, typ, plugin string) {
	o.forContainer(id).ClearNamespace(typ, plugin)
}
func (f *FieldOwners) ClaimNamespace(typ, plugin string) error {
	return f.claimCompound(Field_Namespace, typ, plugin)
}
func (f *FieldOwners) NamespaceOwner(typ string) (string, bool) {
	return f.compoundOwner(Field_Namespace.Key(), typ)
}
func (f *FieldOwners) ClearNamespace(typ, plugin string) {
	f.clearCompound(Field_Namespace, typ, plugin)
}

func (o *OwningPlugins) ClaimSysctl(id, key, plugin string) error {
	return o.forContainer(id).ClaimSysctl(key, plugin)
}
func (o *OwningPlugins) SysctlOwner(id, key string) (string, bool) {
	return o.lookup(id).SysctlOwner(key)
}
func (o *OwningPlugins) ClearSysctl(id, key, plugin string) {
	o.forContainer(id).ClearSysctl(key, plugin)
}
func (f *FieldOwners) ClaimSysctl(key, plugin string) error {
	return f.claimCompound(Field_Sysctl, key, plugin)
}
func (f *FieldOwners) SysctlOwner(key string) (string, bool) {
	return f.compoundOwner(Field_Sysctl.Key(), key)
}
func (f *FieldOwners) ClearSysctl(key, plugin string) { f.clearCompound(Field_Sysctl, key, plugin) }

func (o *OwningPlugins) ClaimLinuxNetDevice(id, path, plugin string) error {
	return o.forContainer(id).ClaimLinuxNetDevice(path, plugin)
}
func (o *OwningPlugins) LinuxNetDeviceOwner(id, path string) (string, bool) {
	return o.lookup(id).LinuxNetDeviceOwner(path)
}
func (o *OwningPlugins) ClearLinuxNetDevice(id, path, plugin string) {
	o.forContainer(id).ClearLinuxNetDevice(path, plugin)
}
func (f *FieldOwners) ClaimLinuxNetDevice(path, plugin string) error {
	return f.claimCompound(Field_LinuxNetDevices, path, plugin)
}
func (f *FieldOwners) LinuxNetDeviceOwner(path string) (string, bool) {
	return f.compoundOwner(Field_LinuxNetDevices.Key(), path)
}
func (f *FieldOwners) ClearLinuxNetDevice(path, plugin string) {
	f.clearCompound(Field_LinuxNetDevices, path, plugin)
}

// Exclusive fields: Claim<X>(id, plugin), <X>Owner(id), Clear<X>(id, plugin),
// and the same on FieldOwners without the container ID.

func (o *OwningPlugins) ClaimArgs(id, plugin string) error {
	return o.forContainer(id).ClaimArgs(plugin)
}
func (o *OwningPlugins) ArgsOwner(id string) (string, bool) { return o.lookup(id).ArgsOwner() }
func (o *OwningPlugins) ClearArgs(id, plugin string)        { o.forContainer(id).ClearArgs(plugin) }
func (f *FieldOwners) ClaimArgs(plugin string) error        { return f.claimSimple(Field_Args, plugin) }
func (f *FieldOwners) ArgsOwner() (string, bool)            { return f.simpleOwner(Field_Args) }
func (f *FieldOwners) ClearArgs(plugin string)              { f.clearSimple(Field_Args, plugin) }

func (o *OwningPlugins) ClaimMemLimit(id, plugin string) error {
	return o.forContainer(id).ClaimMemLimit(plugin)
}
func (o *OwningPlugins) MemLimitOwner(id string) (string, bool) { return o.lookup(id).MemLimitOwner() }
func (o *OwningPlugins) ClearMemLimit(id, plugin string)        { o.forContainer(id).ClearMemLimit(plugin) }
func (f *FieldOwners) ClaimMemLimit(plugin string) error {
	return f.claimSimple(Field_MemLimit, plugin)
}
func (f *FieldOwners) MemLimitOwner() (string, bool) { return f.simpleOwner(Field_MemLimit) }
func (f *FieldOwners) ClearMemLimit(plugin string)   { f.clearSimple(Field_MemLimit, plugin) }

func (o *OwningPlugins) ClaimMemReservation(id, plugin string) error {
	return o.forContainer(id).ClaimMemReservation(plugin)
}
func (o *OwningPlugins) MemReservationOwner(id string) (string, bool) {
	return o.lookup(id).MemReservationOwner()
}
func (o *OwningPlugins) ClearMemReservation(id, plugin string) {
	o.forContainer(id).ClearMemReservation(plugin)
}
func (f *FieldOwners) ClaimMemReservation(plugin string) error {
	return f.claimSimple(Field_MemReservation, plugin)
}
func (f *FieldOwners) MemReservationOwner() (string, bool) {
	return f.simpleOwner(Field_MemReservation)
}
func (f *FieldOwners) ClearMemReservation(plugin string) { f.clearSimple(Field_MemReservation, plugin) }

func (o *OwningPlugins) ClaimMemSwapLimit(id, plugin string) error {
	return o.forContainer(id).ClaimMemSwapLimit(plugin)
}
func (o *OwningPlugins) MemSwapLimitOwner(id string) (string, bool) {
	return o.lookup(id).MemSwapLimitOwner()
}
func (o *OwningPlugins) ClearMemSwapLimit(id, plugin string) {
	o.forContainer(id).ClearMemSwapLimit(plugin)
}
func (f *FieldOwners) ClaimMemSwapLimit(plugin string) error {
	return f.claimSimple(Field_MemSwapLimit, plugin)
}
func (f *FieldOwners) MemSwapLimitOwner() (string, bool) { return f.simpleOwner(Field_MemSwapLimit) }
func (f *FieldOwners) ClearMemSwapLimit(plugin string)   { f.clearSimple(Field_MemSwapLimit, plugin) }

func (o *OwningPlugins) ClaimMemKernelLimit(id, plugin string) error {
	return o.forContainer(id).ClaimMemKernelLimit(plugin)
}
func (o *OwningPlugins) MemKernelLimitOwner(id string) (string, bool) {
	return o.lookup(id).MemKernelLimitOwner()
}
func (o *OwningPlugins) ClearMemKernelLimit(id, plugin string) {
	o.forContainer(id).ClearMemKernelLimit(plugin)
}
func (f *FieldOwners) ClaimMemKernelLimit(plugin string) error {
	return f.claimSimple(Field_MemKernelLimit, plugin)
}
func (f *FieldOwners) MemKernelLimitOwner() (string, bool) {
	return f.simpleOwner(Field_MemKernelLimit)
}
func (f *FieldOwners) ClearMemKernelLimit(plugin string) { f.clearSimple(Field_MemKernelLimit, plugin) }

func (o *OwningPlugins) ClaimMemTCPLimit(id, plugin string) error {
	return o.forContainer(id).ClaimMemTCPLimit(plugin)
}
func (o *OwningPlugins) MemTCPLimitOwner(id string) (string, bool) {
	return o.lookup(id).MemTCPLimitOwner()
}
func (o *OwningPlugins) ClearMemTCPLimit(id, plugin string) {
	o.forContainer(id).ClearMemTCPLimit(plugin)
}
func (f *FieldOwners) ClaimMemTCPLimit(plugin string) error {
	return f.claimSimple(Field_MemTCPLimit, plugin)
}
func (f *FieldOwners) MemTCPLimitOwner() (string, bool) { return f.simpleOwner(Field_MemTCPLimit) }
func (f *FieldOwners) ClearMemTCPLimit(plugin string)   { f.clearSimple(Field_MemTCPLimit, plugin) }

func (o *OwningPlugins) ClaimMemSwappiness(id, plugin string) error {
	return o.forContainer(id).ClaimMemSwappiness(plugin)
}
func (o *OwningPlugins) MemSwappinessOwner(id string) (string, bool) {
	return o.lookup(id).MemSwappinessOwner()
}
func (o *OwningPlugins) ClearMemSwappiness(id, plugin string) {
	o.forContainer(id).ClearMemSwappiness(plugin)
}
func (f *FieldOwners) ClaimMemSwappiness(plugin string) error {
	return f.claimSimple(Field_MemSwappiness, plugin)
}
func (f *FieldOwners) MemSwappinessOwner() (string, bool) { return f.simpleOwner(Field_MemSwappiness) }
func (f *FieldOwners) ClearMemSwappiness(plugin string)   { f.clearSimple(Field_MemSwappiness, plugin) }

func (o *OwningPlugins) ClaimMemDisableOomKiller(id, plugin string) error {
	return o.forContainer(id).ClaimMemDisableOomKiller(plugin)
}
func (o *OwningPlugins) MemDisableOomKillerOwner(id string) (string, bool) {
	return o.lookup(id).MemDisableOomKillerOwner()
}
func (o *OwningPlugins) ClearMemDisableOomKiller(id, plugin string) {
	o.forContainer(id).ClearMemDisableOomKiller(plugin)
}
func (f *FieldOwners) ClaimMemDisableOomKiller(plugin string) error {
	return f.claimSimple(Field_MemDisableOomKiller, plugin)
}
func (f *FieldOwners) MemDisableOomKillerOwner() (string, bool) {
	return f.simpleOwner(Field_MemDisableOomKiller)
}
func (f *FieldOwners) ClearMemDisableOomKiller(plugin string) {
	f.clearSimple(Field_MemDisableOomKiller, plugin)
}

func (o *OwningPlugins) ClaimMemUseHierarchy(id, plugin string) error {
	return o.forContainer(id).ClaimMemUseHierarchy(plugin)
}
func (o *OwningPlugins) MemUseHierarchyOwner(id string) (string, bool) {
	return o.lookup(id).MemUseHierarchyOwner()
}
func (o *OwningPlugins) ClearMemUseHierarchy(id, plugin string) {
	o.forContainer(id).ClearMemUseHierarchy(plugin)
}
func (f *FieldOwners) ClaimMemUseHierarchy(plugin string) error {
	return f.claimSimple(Field_MemUseHierarchy, plugin)
}
func (f *FieldOwners) MemUseHierarchyOwner() (string, bool) {
	return f.simpleOwner(Field_MemUseHierarchy)
}
func (f *FieldOwners) ClearMemUseHierarchy(plugin string) {
	f.clearSimple(Field_MemUseHierarchy, plugin)
}

func (o *OwningPlugins) ClaimCPUShares(id, plugin string) error {
	return o.forContainer(id).ClaimCPUShares(plugin)
}
func (o *OwningPlugins) CPUSharesOwner(id string) (string, bool) {
	return o.lookup(id).CPUSharesOwner()
}
func (o *OwningPlugins) ClearCPUShares(id, plugin string) { o.forContainer(id).ClearCPUShares(plugin) }
func (f *FieldOwners) ClaimCPUShares(plugin string) error {
	return f.claimSimple(Field_CPUShares, plugin)
}
func (f *FieldOwners) CPUSharesOwner() (string, bool) { return f.simpleOwner(Field_CPUShares) }
func (f *FieldOwners) ClearCPUShares(plugin string)   { f.clearSimple(Field_CPUShares, plugin) }

func (o *OwningPlugins) ClaimCPUQuota(id, plugin string) error {
	return o.forContainer(id).ClaimCPUQuota(plugin)
}
func (o *OwningPlugins) CPUQuotaOwner(id string) (string, bool) { return o.lookup(id).CPUQuotaOwner() }
func (o *OwningPlugins) ClearCPUQuota(id, plugin string)        { o.forContainer(id).ClearCPUQuota(plugin) }
func (f *FieldOwners) ClaimCPUQuota(plugin string) error {
	return f.claimSimple(Field_CPUQuota, plugin)
}
func (f *FieldOwners) CPUQuotaOwner() (string, bool) { return f.simpleOwner(Field_CPUQuota) }
func (f *FieldOwners) ClearCPUQuota(plugin string)   { f.clearSimple(Field_CPUQuota, plugin) }

func (o *OwningPlugins) ClaimCPUPeriod(id, plugin string) error {
	return o.forContainer(id).ClaimCPUPeriod(plugin)
}
func (o *OwningPlugins) CPUPeriodOwner(id string) (string, bool) {
	return o.lookup(id).CPUPeriodOwner()
}
func (o *OwningPlugins) ClearCPUPeriod(id, plugin string) { o.forContainer(id).ClearCPUPeriod(plugin) }
func (f *FieldOwners) ClaimCPUPeriod(plugin string) error {
	return f.claimSimple(Field_CPUPeriod, plugin)
}
func (f *FieldOwners) CPUPeriodOwner() (string, bool) { return f.simpleOwner(Field_CPUPeriod) }
func (f *FieldOwners) ClearCPUPeriod(plugin string)   { f.clearSimple(Field_CPUPeriod, plugin) }

func (o *OwningPlugins) ClaimCPURealtimeRuntime(id, plugin string) error {
	return o.forContainer(id).ClaimCPURealtimeRuntime(plugin)
}
func (o *OwningPlugins) CPURealtimeRuntimeOwner(id string) (string, bool) {
	return o.lookup(id).CPURealtimeRuntimeOwner()
}
func (o *OwningPlugins) ClearCPURealtimeRuntime(id, plugin string) {
	o.forContainer(id).ClearCPURealtimeRuntime(plugin)
}
func (f *FieldOwners) ClaimCPURealtimeRuntime(plugin string) error {
	return f.claimSimple(Field_CPURealtimeRuntime, plugin)
}
func (f *FieldOwners) CPURealtimeRuntimeOwner() (string, bool) {
	return f.simpleOwner(Field_CPURealtimeRuntime)
}
func (f *FieldOwners) ClearCPURealtimeRuntime(plugin string) {
	f.clearSimple(Field_CPURealtimeRuntime, plugin)
}

func (o *OwningPlugins) ClaimCPURealtimePeriod(id, plugin string) error {
	return o.forContainer(id).ClaimCPURealtimePeriod(plugin)
}
func (o *OwningPlugins) CPURealtimePeriodOwner(id string) (string, bool) {
	return o.lookup(id).CPURealtimePeriodOwner()
}
func (o *OwningPlugins) ClearCPURealtimePeriod(id, plugin string) {
	o.forContainer(id).ClearCPURealtimePeriod(plugin)
}
func (f *FieldOwners) ClaimCPURealtimePeriod(plugin string) error {
	return f.claimSimple(Field_CPURealtimePeriod, plugin)
}
func (f *FieldOwners) CPURealtimePeriodOwner() (string, bool) {
	return f.simpleOwner(Field_CPURealtimePeriod)
}
func (f *FieldOwners) ClearCPURealtimePeriod(plugin string) {
	f.clearSimple(Field_CPURealtimePeriod, plugin)
}

func (o *OwningPlugins) ClaimCPUSetCPUs(id, plugin string) error {
	return o.forContainer(id).ClaimCPUSetCPUs(plugin)
}
func (o *OwningPlugins) CPUSetCPUsOwner(id string) (string, bool) {
	return o.lookup(id).CPUSetCPUsOwner()
}
func (o *OwningPlugins) ClearCPUSetCPUs(id, plugin string) {
	o.forContainer(id).ClearCPUSetCPUs(plugin)
}
func (f *FieldOwners) ClaimCPUSetCPUs(plugin string) error {
	return f.claimSimple(Field_CPUSetCPUs, plugin)
}
func (f *FieldOwners) CPUSetCPUsOwner() (string, bool) { return f.simpleOwner(Field_CPUSetCPUs) }
func (f *FieldOwners) ClearCPUSetCPUs(plugin string)   { f.clearSimple(Field_CPUSetCPUs, plugin) }

func (o *OwningPlugins) ClaimCPUSetMems(id, plugin string) error {
	return o.forContainer(id).ClaimCPUSetMems(plugin)
}
func (o *OwningPlugins) CPUSetMemsOwner(id string) (string, bool) {
	return o.lookup(id).CPUSetMemsOwner()
}
func (o *OwningPlugins) ClearCPUSetMems(id, plugin string) {
	o.forContainer(id).ClearCPUSetMems(plugin)
}
func (f *FieldOwners) ClaimCPUSetMems(plugin string) error {
	return f.claimSimple(Field_CPUSetMems, plugin)
}
func (f *FieldOwners) CPUSetMemsOwner() (string, bool) { return f.simpleOwner(Field_CPUSetMems) }
func (f *FieldOwners) ClearCPUSetMems(plugin string)   { f.clearSimple(Field_CPUSetMems, plugin) }

func (o *OwningPlugins) ClaimPidsLimit(id, plugin string) error {
	return o.forContainer(id).ClaimPidsLimit(plugin)
}
func (o *OwningPlugins) PidsLimitOwner(id string) (string, bool) {
	return o.lookup(id).PidsLimitOwner()
}
func (o *OwningPlugins) ClearPidsLimit(id, plugin string) { o.forContainer(id).ClearPidsLimit(plugin) }
func (f *FieldOwners) ClaimPidsLimit(plugin string) error {
	return f.claimSimple(Field_PidsLimit, plugin)
}
func (f *FieldOwners) PidsLimitOwner() (string, bool) { return f.simpleOwner(Field_PidsLimit) }
func (f *FieldOwners) ClearPidsLimit(plugin string)   { f.clearSimple(Field_PidsLimit, plugin) }

func (o *OwningPlugins) ClaimBlockioClass(id, plugin string) error {
	return o.forContainer(id).ClaimBlockioClass(plugin)
}
func (o *OwningPlugins) BlockioClassOwner(id string) (string, bool) {
	return o.lookup(id).BlockioClassOwner()
}
func (o *OwningPlugins) ClearBlockioClass(id, plugin string) {
	o.forContainer(id).ClearBlockioClass(plugin)
}
func (f *FieldOwners) ClaimBlockioClass(plugin string) error {
	return f.claimSimple(Field_BlockioClass, plugin)
}
func (f *FieldOwners) BlockioClassOwner() (string, bool) { return f.simpleOwner(Field_BlockioClass) }
func (f *FieldOwners) ClearBlockioClass(plugin string)   { f.clearSimple(Field_BlockioClass, plugin) }

func (o *OwningPlugins) ClaimRdtClass(id, plugin string) error {
	return o.forContainer(id).ClaimRdtClass(plugin)
}
func (o *OwningPlugins) RdtClassOwner(id string) (string, bool) { return o.lookup(id).RdtClassOwner() }
func (o *OwningPlugins) ClearRdtClass(id, plugin string)        { o.forContainer(id).ClearRdtClass(plugin) }
func (f *FieldOwners) ClaimRdtClass(plugin string) error {
	return f.claimSimple(Field_RdtClass, plugin)
}
func (f *FieldOwners) RdtClassOwner() (string, bool) { return f.simpleOwner(Field_RdtClass) }
func (f *FieldOwners) ClearRdtClass(plugin string)   { f.clearSimple(Field_RdtClass, plugin) }

func (o *OwningPlugins) ClaimCgroupsPath(id, plugin string) error {
	return o.forContainer(id).ClaimCgroupsPath(plugin)
}
func (o *OwningPlugins) CgroupsPathOwner(id string) (string, bool) {
	return o.lookup(id).CgroupsPathOwner()
}
func (o *OwningPlugins) ClearCgroupsPath(id, plugin string) {
	o.forContainer(id).ClearCgroupsPath(plugin)
}
func (f *FieldOwners) ClaimCgroupsPath(plugin string) error {
	return f.claimSimple(Field_CgroupsPath, plugin)
}
func (f *FieldOwners) CgroupsPathOwner() (string, bool) { return f.simpleOwner(Field_CgroupsPath) }
func (f *FieldOwners) ClearCgroupsPath(plugin string)   { f.clearSimple(Field_CgroupsPath, plugin) }

func (o *OwningPlugins) ClaimOomScoreAdj(id, plugin string) error {
	return o.forContainer(id).ClaimOomScoreAdj(plugin)
}
func (o *OwningPlugins) OomScoreAdjOwner(id string) (string, bool) {
	return o.lookup(id).OomScoreAdjOwner()
}
func (o *OwningPlugins) ClearOomScoreAdj(id, plugin string) {
	o.forContainer(id).ClearOomScoreAdj(plugin)
}
func (f *FieldOwners) ClaimOomScoreAdj(plugin string) error {
	return f.claimSimple(Field_OomScoreAdj, plugin)
}
func (f *FieldOwners) OomScoreAdjOwner() (string, bool) { return f.simpleOwner(Field_OomScoreAdj) }
func (f *FieldOwners) ClearOomScoreAdj(plugin string)   { f.clearSimple(Field_OomScoreAdj, plugin) }

func (o *OwningPlugins) ClaimIOPriority(id, plugin string) error {
	return o.forContainer(id).ClaimIOPriority(plugin)
}
func (o *OwningPlugins) IOPriorityOwner(id string) (string, bool) {
	return o.lookup(id).IOPriorityOwner()
}
func (o *OwningPlugins) ClearIOPriority(id, plugin string) {
	o.forContainer(id).ClearIOPriority(plugin)
}
func (f *FieldOwners) ClaimIOPriority(plugin string) error {
	return f.claimSimple(Field_IoPriority, plugin)
}
func (f *FieldOwners) IOPriorityOwner() (string, bool) { return f.simpleOwner(Field_IoPriority) }
func (f *FieldOwners) ClearIOPriority(plugin string)   { f.clearSimple(Field_IoPriority, plugin) }

func (o *OwningPlugins) ClaimSeccompPolicy(id, plugin string) error {
	return o.forContainer(id).ClaimSeccompPolicy(plugin)
}
func (o *OwningPlugins) SeccompPolicyOwner(id string) (string, bool) {
	return o.lookup(id).SeccompPolicyOwner()
}
func (o *OwningPlugins) ClearSeccompPolicy(id, plugin string) {
	o.forContainer(id).ClearSeccompPolicy(plugin)
}
func (f *FieldOwners) ClaimSeccompPolicy(plugin string) error {
	return f.claimSimple(Field_SeccompPolicy, plugin)
}
func (f *FieldOwners) SeccompPolicyOwner() (string, bool) { return f.simpleOwner(Field_SeccompPolicy) }
func (f *FieldOwners) ClearSeccompPolicy(plugin string)   { f.clearSimple(Field_SeccompPolicy, plugin) }

func (o *OwningPlugins) ClaimLinuxScheduler(id, plugin string) error {
	return o.forContainer(id).ClaimLinuxScheduler(plugin)
}
func (o *OwningPlugins) LinuxSchedulerOwner(id string) (string, bool) {
	return o.lookup(id).LinuxSchedulerOwner()
}
func (o *OwningPlugins) ClearLinuxScheduler(id, plugin string) {
	o.forContainer(id).ClearLinuxScheduler(plugin)
}
func (f *FieldOwners) ClaimLinuxScheduler(plugin string) error {
	return f.claimSimple(Field_LinuxSched, plugin)
}
func (f *FieldOwners) LinuxSchedulerOwner() (string, bool) { return f.simpleOwner(Field_LinuxSched) }
func (f *FieldOwners) ClearLinuxScheduler(plugin string)   { f.clearSimple(Field_LinuxSched, plugin) }

func (o *OwningPlugins) ClaimRdtClosID(id, plugin string) error {
	return o.forContainer(id).ClaimRdtClosID(plugin)
}
func (o *OwningPlugins) RdtClosIDOwner(id string) (string, bool) {
	return o.lookup(id).RdtClosIDOwner()
}
func (o *OwningPlugins) ClearRdtClosID(id, plugin string) { o.forContainer(id).ClearRdtClosID(plugin) }
func (f *FieldOwners) ClaimRdtClosID(plugin string) error {
	return f.claimSimple(Field_RdtClosID, plugin)
}
func (f *FieldOwners) RdtClosIDOwner() (string, bool) { return f.simpleOwner(Field_RdtClosID) }
func (f *FieldOwners) ClearRdtClosID(plugin string)   { f.clearSimple(Field_RdtClosID, plugin) }

func (o *OwningPlugins) ClaimRdtSchemata(id, plugin string) error {
	return o.forContainer(id).ClaimRdtSchemata(plugin)
}
func (o *OwningPlugins) RdtSchemataOwner(id string) (string, bool) {
	return o.lookup(id).RdtSchemataOwner()
}
func (o *OwningPlugins) ClearRdtSchemata(id, plugin string) {
	o.forContainer(id).ClearRdtSchemata(plugin)
}
func (f *FieldOwners) ClaimRdtSchemata(plugin string) error {
	return f.claimSimple(Field_RdtSchemata, plugin)
}
func (f *FieldOwners) RdtSchemataOwner() (string, bool) { return f.simpleOwner(Field_RdtSchemata) }
func (f *FieldOwners) ClearRdtSchemata(plugin string)   { f.clearSimple(Field_RdtSchemata, plugin) }

func (o *OwningPlugins) ClaimRdtEnableMonitoring(id, plugin string) error {
	return o.forContainer(id).ClaimRdtEnableMonitoring(plugin)
}
func (o *OwningPlugins) RdtEnableMonitoringOwner(id string) (string, bool) {
	return o.lookup(id).RdtEnableMonitoringOwner()
}
func (o *OwningPlugins) ClearRdtEnableMonitoring(id, plugin string) {
	o.forContainer(id).ClearRdtEnableMonitoring(plugin)
}
func (f *FieldOwners) ClaimRdtEnableMonitoring(plugin string) error {
	return f.claimSimple(Field_RdtEnableMonitoring, plugin)
}
func (f *FieldOwners) RdtEnableMonitoringOwner() (string, bool) {
	return f.simpleOwner(Field_RdtEnableMonitoring)
}
func (f *FieldOwners) ClearRdtEnableMonitoring(plugin string) {
	f.clearSimple(Field_RdtEnableMonitoring, plugin)
}

func (o *OwningPlugins) ClaimMemoryPolicy(id, plugin string) error {
	return o.forContainer(id).ClaimMemoryPolicy(plugin)
}
func (o *OwningPlugins) MemoryPolicyOwner(id string) (string, bool) {
	return o.lookup(id).MemoryPolicyOwner()
}
func (o *OwningPlugins) ClearMemoryPolicy(id, plugin string) {
	o.forContainer(id).ClearMemoryPolicy(plugin)
}
func (f *FieldOwners) ClaimMemoryPolicy(plugin string) error {
	return f.claimSimple(Field_MemoryPolicy, plugin)
}
func (f *FieldOwners) MemoryPolicyOwner() (string, bool) { return f.simpleOwner(Field_MemoryPolicy) }
func (f *FieldOwners) ClearMemoryPolicy(plugin string)   { f.clearSimple(Field_MemoryPolicy, plugin) }
