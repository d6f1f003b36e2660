package generate

import (
	"fmt"

	rspec "github.com/opencontainers/runtime-spec/specs-go"

	nri "github.com/nri-handover/nri/api"
)

// UnlimitedPidsLimit asks for no PID limit. The OCI spec expresses it with a
// nil limit (runtime-spec v1.3.0), our API with this value.
const UnlimitedPidsLimit = -1

// UnderlyingGenerator is the part of runtime-tools'
// [github.com/opencontainers/runtime-tools/generate.Generator] that Adjust
// uses. Runtimes may pass that generator or one of their own.
type UnderlyingGenerator interface {
	AddAnnotation(key, value string)
	AddDevice(device rspec.LinuxDevice)
	AddOrReplaceLinuxNamespace(ns string, path string) error
	AddPostStartHook(postStartHook rspec.Hook)
	AddPostStopHook(postStopHook rspec.Hook)
	AddPreStartHook(preStartHook rspec.Hook)
	AddProcessEnv(name, value string)
	AddLinuxResourcesDevice(allow bool, devType string, major, minor *int64, access string)
	AddLinuxResourcesHugepageLimit(pageSize string, limit uint64)
	AddLinuxResourcesUnified(key, val string)
	AddMount(mnt rspec.Mount)
	AddLinuxSysctl(key, value string)
	ClearMounts()
	ClearProcessEnv()
	Mounts() []rspec.Mount
	RemoveAnnotation(key string)
	RemoveDevice(path string)
	RemoveLinuxNamespace(ns string) error
	RemoveMount(dest string)
	RemoveLinuxSysctl(key string)
	SetProcessArgs(args []string)
	SetLinuxCgroupsPath(path string)
	SetLinuxResourcesCPUCpus(cpus string)
	SetLinuxResourcesCPUMems(mems string)
	SetLinuxResourcesCPUPeriod(period uint64)
	SetLinuxResourcesCPUQuota(quota int64)
	SetLinuxResourcesCPURealtimePeriod(period uint64)
	SetLinuxResourcesCPURealtimeRuntime(time int64)
	SetLinuxResourcesCPUShares(shares uint64)
	SetLinuxResourcesMemoryLimit(limit int64)
	SetLinuxResourcesMemorySwap(swap int64)
	SetLinuxRootPropagation(rp string) error
	SetProcessOOMScoreAdj(adj int)
	Spec() *rspec.Spec
}

// GeneratorOption configures a Generator.
type GeneratorOption func(*Generator)

// Generator is a runtime's spec generator extended with the NRI adjustments.
// Config is the spec the underlying generator works on; what the underlying
// generator has no method for, Generator sets in Config directly.
type Generator struct {
	UnderlyingGenerator
	Config *rspec.Spec

	filterLabels      func(map[string]string) (map[string]string, error)
	filterAnnotations func(map[string]string) (map[string]string, error)
	filterSysctl      func(map[string]string) (map[string]string, error)
	resolveBlockIO    func(string) (*rspec.LinuxBlockIO, error)
	resolveRdt        func(string) (*rspec.LinuxIntelRdt, error)
	injectCDIDevices  func(*rspec.Spec, []string) error
	checkResources    func(*rspec.LinuxResources) error
	// propagation reports a host path's mount propagation; tests replace it.
	propagation func(path string) (string, error)
}

// SpecGenerator wraps gg.
func SpecGenerator(gg UnderlyingGenerator, opts ...GeneratorOption) *Generator {
	g := &Generator{
		UnderlyingGenerator: gg,
		Config:              gg.Spec(),
		filterLabels:        keepAll,
		filterAnnotations:   keepAll,
		filterSysctl:        keepAll,
		propagation:         hostPropagation,
	}
	for _, o := range opts {
		o(g)
	}
	return g
}

func keepAll(m map[string]string) (map[string]string, error) { return m, nil }

// WithLabelFilter sets a function that may filter or reject labels. (Adjust
// does not touch labels; the filter is kept for upstream's API.)
func WithLabelFilter(fn func(map[string]string) (map[string]string, error)) GeneratorOption {
	return func(g *Generator) { g.filterLabels = fn }
}

// WithAnnotationFilter sets a function that may filter the annotations of an
// adjustment or reject them (an error fails Adjust).
func WithAnnotationFilter(fn func(map[string]string) (map[string]string, error)) GeneratorOption {
	return func(g *Generator) { g.filterAnnotations = fn }
}

// WithBlockIOResolver sets how block I/O class names become OCI settings.
// Without one, block I/O classes are ignored.
func WithBlockIOResolver(fn func(string) (*rspec.LinuxBlockIO, error)) GeneratorOption {
	return func(g *Generator) { g.resolveBlockIO = fn }
}

// WithRdtResolver sets how RDT class names become OCI settings. Without one,
// RDT classes are ignored.
func WithRdtResolver(fn func(string) (*rspec.LinuxIntelRdt, error)) GeneratorOption {
	return func(g *Generator) { g.resolveRdt = fn }
}

// WithResourceChecker sets a function that sees, and may fix or reject, the
// Linux resources once they are adjusted.
func WithResourceChecker(fn func(*rspec.LinuxResources) error) GeneratorOption {
	return func(g *Generator) { g.checkResources = fn }
}

// WithCDIDeviceInjector sets the runtime's CDI injection; without one, CDI
// devices in adjustments are ignored.
func WithCDIDeviceInjector(fn func(*rspec.Spec, []string) error) GeneratorOption {
	return func(g *Generator) { g.injectCDIDevices = fn }
}

// Adjust applies every part of adjust to the spec, in upstream's order (which
// matters: devices before resources, the RDT class before explicit RDT
// settings, mounts last but one).
func (g *Generator) Adjust(adjust *nri.ContainerAdjustment) error {
	if adjust == nil {
		return nil
	}
	linux := adjust.GetLinux()

	if err := g.AdjustAnnotations(adjust.GetAnnotations()); err != nil {
		return fmt.Errorf("failed to adjust annotations in OCI Spec: %w", err)
	}
	g.AdjustEnv(adjust.GetEnv())
	g.AdjustArgs(adjust.GetArgs())
	g.AdjustHooks(adjust.GetHooks())
	if err := g.InjectCDIDevices(adjust.GetCDIDevices()); err != nil {
		return err
	}
	g.AdjustDevices(linux.GetDevices())
	g.AdjustCgroupsPath(linux.GetCgroupsPath())
	g.AdjustOomScoreAdj(linux.GetOomScoreAdj())
	g.AdjustIOPriority(linux.GetIoPriority())
	g.AdjustLinuxScheduler(linux.GetScheduler())
	if err := g.AdjustSeccompPolicy(linux.GetSeccompPolicy()); err != nil {
		return err
	}
	if err := g.AdjustNamespaces(linux.GetNamespaces()); err != nil {
		return err
	}
	if err := g.AdjustSysctl(linux.GetSysctl()); err != nil {
		return err
	}
	if err := g.AdjustLinuxNetDevices(linux.GetNetDevices()); err != nil {
		return err
	}
	g.AdjustMemoryPolicy(linux.GetMemoryPolicy())

	resources := linux.GetResources()
	if err := g.AdjustResources(resources); err != nil {
		return err
	}
	if err := g.AdjustBlockIOClass(resources.GetBlockioClass().Get()); err != nil {
		return err
	}
	if err := g.AdjustRdtClass(resources.GetRdtClass().Get()); err != nil {
		return err
	}
	g.AdjustRdt(linux.GetRdt())

	if err := g.AdjustMounts(adjust.GetMounts()); err != nil {
		return err
	}
	return g.AdjustRlimits(adjust.GetRlimits())
}

// The sections Generator fills in itself are created on first use.

func (g *Generator) spec() *rspec.Spec {
	if g.Config == nil {
		g.Config = &rspec.Spec{}
	}
	return g.Config
}

func (g *Generator) process() *rspec.Process {
	s := g.spec()
	if s.Process == nil {
		s.Process = &rspec.Process{}
	}
	return s.Process
}

func (g *Generator) hooks() *rspec.Hooks {
	s := g.spec()
	if s.Hooks == nil {
		s.Hooks = &rspec.Hooks{}
	}
	return s.Hooks
}

func (g *Generator) linux() *rspec.Linux {
	s := g.spec()
	if s.Linux == nil {
		s.Linux = &rspec.Linux{}
	}
	return s.Linux
}

func (g *Generator) resources() *rspec.LinuxResources {
	l := g.linux()
	if l.Resources == nil {
		l.Resources = &rspec.LinuxResources{}
	}
	return l.Resources
}

func (g *Generator) intelRdt() *rspec.LinuxIntelRdt {
	l := g.linux()
	if l.IntelRdt == nil {
		l.IntelRdt = &rspec.LinuxIntelRdt{}
	}
	return l.IntelRdt
}
