package adaptation

// Tables of single-owner fields, merged generically by proto field name:
// each scalar a plugin sets is claimed for it (OwningPlugins), so that a
// second plugin setting it fails the merge as upstream's does.

import (
	"fmt"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/nri-handover/nri/api"
)

// scalarField ties a proto field to the claim guarding it.
type scalarField struct {
	name  protoreflect.Name
	claim func(o *api.OwningPlugins, id, plugin string) error
}

var memoryFields = []scalarField{
	{"limit", (*api.OwningPlugins).ClaimMemLimit},
	{"reservation", (*api.OwningPlugins).ClaimMemReservation},
	{"swap", (*api.OwningPlugins).ClaimMemSwapLimit},
	{"kernel", (*api.OwningPlugins).ClaimMemKernelLimit},
	{"kernel_tcp", (*api.OwningPlugins).ClaimMemTCPLimit},
	{"swappiness", (*api.OwningPlugins).ClaimMemSwappiness},
	{"disable_oom_killer", (*api.OwningPlugins).ClaimMemDisableOomKiller},
	{"use_hierarchy", (*api.OwningPlugins).ClaimMemUseHierarchy},
}

var cpuFields = []scalarField{
	{"shares", (*api.OwningPlugins).ClaimCPUShares},
	{"quota", (*api.OwningPlugins).ClaimCPUQuota},
	{"period", (*api.OwningPlugins).ClaimCPUPeriod},
	{"realtime_runtime", (*api.OwningPlugins).ClaimCPURealtimeRuntime},
	{"realtime_period", (*api.OwningPlugins).ClaimCPURealtimePeriod},
	{"cpus", (*api.OwningPlugins).ClaimCPUSetCPUs},
	{"mems", (*api.OwningPlugins).ClaimCPUSetMems},
}

// resourceFields are the single-owner fields of LinuxResources itself.
var resourceFields = []scalarField{
	{"blockio_class", (*api.OwningPlugins).ClaimBlockioClass},
	{"rdt_class", (*api.OwningPlugins).ClaimRdtClass},
	{"pids", (*api.OwningPlugins).ClaimPidsLimit},
}

// linuxFields are the single-owner fields of LinuxContainerAdjustment; the
// request's LinuxContainer has the same names, except memory_policy, which
// is only forwarded to the runtime.
var linuxFields = []scalarField{
	{"cgroups_path", (*api.OwningPlugins).ClaimCgroupsPath},
	{"oom_score_adj", (*api.OwningPlugins).ClaimOomScoreAdj},
	{"io_priority", (*api.OwningPlugins).ClaimIOPriority},
	{"seccomp_policy", (*api.OwningPlugins).ClaimSeccompPolicy},
	{"scheduler", (*api.OwningPlugins).ClaimLinuxScheduler},
	{"memory_policy", (*api.OwningPlugins).ClaimMemoryPolicy},
}

var rdtFields = []scalarField{
	{"clos_id", (*api.OwningPlugins).ClaimRdtClosID},
	{"schemata", (*api.OwningPlugins).ClaimRdtSchemata},
	{"enable_monitoring", (*api.OwningPlugins).ClaimRdtEnableMonitoring},
}

// mergeScalars claims every field of fields that is set in src (a wrapper
// message present, or a non-empty string) and copies it into each target
// that has a field of that name. Nil src or targets are skipped.
func (r *result) mergeScalars(id, plugin string, fields []scalarField, src proto.Message, targets ...proto.Message) error {
	s := src.ProtoReflect()
	if !s.IsValid() {
		return nil
	}
	for _, f := range fields {
		fd := s.Descriptor().Fields().ByName(f.name)
		if fd == nil {
			panic(fmt.Sprintf("NRI result: %s has no field %q", s.Descriptor().FullName(), f.name))
		}
		if !s.Has(fd) {
			continue
		}
		if err := f.claim(r.owners, id, plugin); err != nil {
			return err
		}
		for _, t := range targets {
			tm := t.ProtoReflect()
			if !tm.IsValid() {
				continue
			}
			if tfd := tm.Descriptor().Fields().ByName(f.name); tfd != nil {
				tm.Set(tfd, cloneValue(s.Get(fd), fd))
			}
		}
	}
	return nil
}

// cloneValue deep-copies message values so that request and reply never share
// a message a later plugin might change.
func cloneValue(v protoreflect.Value, fd protoreflect.FieldDescriptor) protoreflect.Value {
	if fd.Kind() == protoreflect.MessageKind && !fd.IsList() && !fd.IsMap() {
		return protoreflect.ValueOfMessage(proto.Clone(v.Message().Interface()).ProtoReflect())
	}
	return v
}

// appendLists appends every list field of src to the same field of each
// target, reporting whether src had anything.
func appendLists(src proto.Message, targets ...proto.Message) bool {
	s := src.ProtoReflect()
	found := false
	s.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		if !fd.IsList() {
			return true
		}
		for _, t := range targets {
			dst := t.ProtoReflect().Mutable(fd).List()
			for i := range v.List().Len() {
				dst.Append(v.List().Get(i))
			}
		}
		found = true
		return true
	})
	return found
}

// fillResources makes the parts of res that merging writes into non-nil.
func fillResources(res *api.LinuxResources) *api.LinuxResources {
	if res.Memory == nil {
		res.Memory = &api.LinuxMemory{}
	}
	if res.Cpu == nil {
		res.Cpu = &api.LinuxCPU{}
	}
	if res.HugepageLimits == nil {
		res.HugepageLimits = []*api.HugepageLimit{}
	}
	if res.Unified == nil {
		res.Unified = map[string]string{}
	}
	return res
}
