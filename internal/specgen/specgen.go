// Package specgen is a plain OCI spec generator: the methods of
// runtime-tools' generate.Generator that pkg/runtime-tools/generate needs
// (its UnderlyingGenerator), working directly on an *rspec.Spec, with
// runtime-tools' semantics (adding an existing device, namespace, env var or
// hugepage size replaces it; mounts, hooks and device rules are appended).
// It is what a runtime like containerd hands pkg/runtime-tools/generate, so
// internal/adjust uses it to adjust a container as the runtime does; the
// tests (test/ocigen) use it on both sides of the comparison with upstream.
//
// It imports neither our API nor upstream's, so test/upstream/generate can
// link it next to upstream's.
package specgen

import (
	"fmt"
	"slices"
	"strings"

	rspec "github.com/opencontainers/runtime-spec/specs-go"
)

// Generator edits Spec in place.
type Generator struct{ spec *rspec.Spec }

// New returns a generator for spec (a new, empty spec if nil).
func New(spec *rspec.Spec) *Generator {
	if spec == nil {
		spec = &rspec.Spec{}
	}
	return &Generator{spec: spec}
}

// Spec is the spec being edited.
func (g *Generator) Spec() *rspec.Spec { return g.spec }

func (g *Generator) process() *rspec.Process {
	if g.spec.Process == nil {
		g.spec.Process = &rspec.Process{}
	}
	return g.spec.Process
}

func (g *Generator) linux() *rspec.Linux {
	if g.spec.Linux == nil {
		g.spec.Linux = &rspec.Linux{}
	}
	return g.spec.Linux
}

func (g *Generator) resources() *rspec.LinuxResources {
	l := g.linux()
	if l.Resources == nil {
		l.Resources = &rspec.LinuxResources{}
	}
	return l.Resources
}

func (g *Generator) cpu() *rspec.LinuxCPU {
	r := g.resources()
	if r.CPU == nil {
		r.CPU = &rspec.LinuxCPU{}
	}
	return r.CPU
}

func (g *Generator) memory() *rspec.LinuxMemory {
	r := g.resources()
	if r.Memory == nil {
		r.Memory = &rspec.LinuxMemory{}
	}
	return r.Memory
}

func (g *Generator) hooks() *rspec.Hooks {
	if g.spec.Hooks == nil {
		g.spec.Hooks = &rspec.Hooks{}
	}
	return g.spec.Hooks
}

// AddAnnotation sets an annotation.
func (g *Generator) AddAnnotation(key, value string) {
	if g.spec.Annotations == nil {
		g.spec.Annotations = map[string]string{}
	}
	g.spec.Annotations[key] = value
}

// RemoveAnnotation deletes an annotation.
func (g *Generator) RemoveAnnotation(key string) { delete(g.spec.Annotations, key) }

// AddDevice adds a device, replacing one with the same path.
func (g *Generator) AddDevice(device rspec.LinuxDevice) {
	l := g.linux()
	if i := slices.IndexFunc(l.Devices, func(d rspec.LinuxDevice) bool { return d.Path == device.Path }); i >= 0 {
		l.Devices[i] = device
		return
	}
	l.Devices = append(l.Devices, device)
}

// RemoveDevice removes the device with path.
func (g *Generator) RemoveDevice(path string) {
	if g.spec.Linux == nil {
		return
	}
	g.spec.Linux.Devices = slices.DeleteFunc(g.spec.Linux.Devices, func(d rspec.LinuxDevice) bool { return d.Path == path })
}

var namespaceTypes = map[string]rspec.LinuxNamespaceType{
	"network": rspec.NetworkNamespace, "pid": rspec.PIDNamespace, "mount": rspec.MountNamespace,
	"ipc": rspec.IPCNamespace, "uts": rspec.UTSNamespace, "user": rspec.UserNamespace,
	"cgroup": rspec.CgroupNamespace, "time": rspec.TimeNamespace,
}

func namespaceType(ns string) (rspec.LinuxNamespaceType, error) {
	if t, ok := namespaceTypes[ns]; ok {
		return t, nil
	}
	return "", fmt.Errorf("unrecognized namespace %q", ns)
}

// AddOrReplaceLinuxNamespace sets the path of the namespace of type ns.
func (g *Generator) AddOrReplaceLinuxNamespace(ns, path string) error {
	t, err := namespaceType(ns)
	if err != nil {
		return err
	}
	l := g.linux()
	if i := slices.IndexFunc(l.Namespaces, func(n rspec.LinuxNamespace) bool { return n.Type == t }); i >= 0 {
		l.Namespaces[i].Path = path
		return nil
	}
	l.Namespaces = append(l.Namespaces, rspec.LinuxNamespace{Type: t, Path: path})
	return nil
}

// RemoveLinuxNamespace removes the namespace of type ns.
func (g *Generator) RemoveLinuxNamespace(ns string) error {
	t, err := namespaceType(ns)
	if err != nil {
		return err
	}
	if g.spec.Linux != nil {
		g.spec.Linux.Namespaces = slices.DeleteFunc(g.spec.Linux.Namespaces, func(n rspec.LinuxNamespace) bool { return n.Type == t })
	}
	return nil
}

// AddPreStartHook appends a prestart hook.
func (g *Generator) AddPreStartHook(h rspec.Hook) {
	g.hooks().Prestart = append(g.hooks().Prestart, h) //nolint:staticcheck // still part of the spec
}

// AddPostStartHook appends a poststart hook.
func (g *Generator) AddPostStartHook(h rspec.Hook) {
	g.hooks().Poststart = append(g.hooks().Poststart, h)
}

// AddPostStopHook appends a poststop hook.
func (g *Generator) AddPostStopHook(h rspec.Hook) {
	g.hooks().Poststop = append(g.hooks().Poststop, h)
}

// AddProcessEnv sets a variable, replacing an existing one of that name.
func (g *Generator) AddProcessEnv(name, value string) {
	if name == "" {
		return
	}
	p := g.process()
	if i := slices.IndexFunc(p.Env, func(e string) bool { return strings.HasPrefix(e, name+"=") }); i >= 0 {
		p.Env[i] = name + "=" + value
		return
	}
	p.Env = append(p.Env, name+"="+value)
}

// ClearProcessEnv empties the environment.
func (g *Generator) ClearProcessEnv() {
	if g.spec.Process != nil {
		g.spec.Process.Env = []string{}
	}
}

// AddLinuxResourcesDevice appends a device cgroup rule.
func (g *Generator) AddLinuxResourcesDevice(allow bool, devType string, major, minor *int64, access string) {
	r := g.resources()
	r.Devices = append(r.Devices, rspec.LinuxDeviceCgroup{Allow: allow, Type: devType, Major: major, Minor: minor, Access: access})
}

// AddLinuxResourcesHugepageLimit sets the limit of a page size.
func (g *Generator) AddLinuxResourcesHugepageLimit(pageSize string, limit uint64) {
	r := g.resources()
	if i := slices.IndexFunc(r.HugepageLimits, func(h rspec.LinuxHugepageLimit) bool { return h.Pagesize == pageSize }); i >= 0 {
		r.HugepageLimits[i].Limit = limit
		return
	}
	r.HugepageLimits = append(r.HugepageLimits, rspec.LinuxHugepageLimit{Pagesize: pageSize, Limit: limit})
}

// AddLinuxResourcesUnified sets a cgroup v2 setting.
func (g *Generator) AddLinuxResourcesUnified(key, val string) {
	r := g.resources()
	if r.Unified == nil {
		r.Unified = map[string]string{}
	}
	r.Unified[key] = val
}

// AddMount appends a mount.
func (g *Generator) AddMount(m rspec.Mount) { g.spec.Mounts = append(g.spec.Mounts, m) }

// RemoveMount removes the mounts at dest.
func (g *Generator) RemoveMount(dest string) {
	g.spec.Mounts = slices.DeleteFunc(g.spec.Mounts, func(m rspec.Mount) bool { return m.Destination == dest })
}

// ClearMounts removes every mount.
func (g *Generator) ClearMounts() { g.spec.Mounts = []rspec.Mount{} }

// Mounts returns the mounts.
func (g *Generator) Mounts() []rspec.Mount { return g.spec.Mounts }

// AddLinuxSysctl sets a sysctl.
func (g *Generator) AddLinuxSysctl(key, value string) {
	l := g.linux()
	if l.Sysctl == nil {
		l.Sysctl = map[string]string{}
	}
	l.Sysctl[key] = value
}

// RemoveLinuxSysctl deletes a sysctl.
func (g *Generator) RemoveLinuxSysctl(key string) {
	if g.spec.Linux != nil {
		delete(g.spec.Linux.Sysctl, key)
	}
}

// SetProcessArgs replaces the arguments.
func (g *Generator) SetProcessArgs(args []string) { g.process().Args = args }

// SetLinuxCgroupsPath sets the cgroup path.
func (g *Generator) SetLinuxCgroupsPath(path string) { g.linux().CgroupsPath = path }

// SetLinuxResourcesCPUCpus sets the cpuset CPUs.
func (g *Generator) SetLinuxResourcesCPUCpus(cpus string) { g.cpu().Cpus = cpus }

// SetLinuxResourcesCPUMems sets the cpuset memory nodes.
func (g *Generator) SetLinuxResourcesCPUMems(mems string) { g.cpu().Mems = mems }

// SetLinuxResourcesCPUPeriod sets the CFS period.
func (g *Generator) SetLinuxResourcesCPUPeriod(v uint64) { g.cpu().Period = &v }

// SetLinuxResourcesCPUQuota sets the CFS quota.
func (g *Generator) SetLinuxResourcesCPUQuota(v int64) { g.cpu().Quota = &v }

// SetLinuxResourcesCPURealtimePeriod sets the realtime period.
func (g *Generator) SetLinuxResourcesCPURealtimePeriod(v uint64) { g.cpu().RealtimePeriod = &v }

// SetLinuxResourcesCPURealtimeRuntime sets the realtime runtime.
func (g *Generator) SetLinuxResourcesCPURealtimeRuntime(v int64) { g.cpu().RealtimeRuntime = &v }

// SetLinuxResourcesCPUShares sets the CPU shares.
func (g *Generator) SetLinuxResourcesCPUShares(v uint64) { g.cpu().Shares = &v }

// SetLinuxResourcesMemoryLimit sets the memory limit.
func (g *Generator) SetLinuxResourcesMemoryLimit(v int64) { g.memory().Limit = &v }

// SetLinuxResourcesMemorySwap sets the memory+swap limit.
func (g *Generator) SetLinuxResourcesMemorySwap(v int64) { g.memory().Swap = &v }

// SetLinuxRootPropagation sets the rootfs propagation, which must be valid.
func (g *Generator) SetLinuxRootPropagation(rp string) error {
	switch rp {
	case "", "private", "rprivate", "slave", "rslave", "shared", "rshared", "unbindable", "runbindable":
		g.linux().RootfsPropagation = rp
		return nil
	}
	return fmt.Errorf("rootfs-propagation %q must be empty or one of (r)private|(r)slave|(r)shared|(r)unbindable", rp)
}

// SetProcessOOMScoreAdj sets the OOM score adjustment.
func (g *Generator) SetProcessOOMScoreAdj(adj int) { g.process().OOMScoreAdj = &adj }
