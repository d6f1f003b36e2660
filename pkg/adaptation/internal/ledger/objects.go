package ledger

import (
	"bytes"
	"maps"
	"slices"
	"strings"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/nri-handover/nri/api"
)

// Copying and comparing the runtime's pods and containers without
// reflection. The ledger copies every event's object and compares every
// object SyncFn reports with what it holds; proto.Clone and proto.Equal walk
// maps through reflection, with an allocation per entry, which made the
// ledger most of what the event path allocates and most of a join's time at
// large node sizes. The fields a runtime always reports (ids, labels,
// annotations, args, env, mounts) are handled here directly; the nested
// messages every runtime fills in (a container's linux part, with its
// resources, and its hooks) too, each part shared with the entry's previous
// copy where equal: an event changes a container's resources, not its
// namespaces or devices. The nested messages only some runtimes fill in
// (seccomp, scheduling, RDT, devices) go through proto.Clone and
// proto.Equal. TestObjectsCoverEveryField fails when a field is added to
// any of these messages and not handled here.

// clonePod returns a deep copy of p, as proto.Clone would.
func clonePod(p *api.PodSandbox) *api.PodSandbox { return clonePodReusing(p, nil) }

// clonePodReusing copies p as clonePod does, but takes each map, list and
// nested message from prev where they are equal: prev is the ledger's,
// which never modifies what it holds, so the two may share it. An event
// changes little of its object; copying only that keeps an event's cost
// small.
func clonePodReusing(p, prev *api.PodSandbox) *api.PodSandbox {
	if p == nil || len(p.ProtoReflect().GetUnknown()) > 0 {
		return cloneMsg(p)
	}
	if prev == nil {
		prev = &api.PodSandbox{}
	}
	return &api.PodSandbox{
		Id:             p.Id,
		Name:           p.Name,
		Uid:            p.Uid,
		Namespace:      p.Namespace,
		Labels:         reuseMap(p.Labels, prev.Labels),
		Annotations:    reuseMap(p.Annotations, prev.Annotations),
		RuntimeHandler: p.RuntimeHandler,
		Linux:          reuseMsg(p.Linux, prev.Linux),
		Pid:            p.Pid,
		Ips:            reuseStrings(p.Ips, prev.Ips),
	}
}

// CloneContainer returns a deep copy of c, as proto.Clone would.
func CloneContainer(c *api.Container) *api.Container { return cloneContainerReusing(c, nil) }

// cloneContainerReusing copies c reusing what it shares with prev (see
// clonePodReusing).
func cloneContainerReusing(c, prev *api.Container) *api.Container {
	if c == nil || hasUnknown(c) {
		return cloneMsg(c)
	}
	out := &api.Container{}
	copyContainer(out, c, prev, false)
	return out
}

// recycleContainer copies c into own, a copy of the ledger's that nobody
// else holds or has read, and returns it: the parts equal to c's are kept,
// and its maps and lists are refilled in place where they hold enough, so
// that the copy of a container whose creation the ledger holds unsettled
// (its start) costs only what changed.
func recycleContainer(c, own *api.Container) *api.Container {
	if c == nil || own == nil || hasUnknown(c) || hasUnknown(own) {
		return cloneContainerReusing(c, own)
	}
	copyContainer(own, c, own, true)
	return own
}

// copyContainer sets dst to a copy of c reusing prev's parts, which it
// refills in place if own (prev is then dst, and the caller's alone).
func copyContainer(dst, c, prev *api.Container, own bool) {
	if prev == nil {
		prev = &api.Container{}
	}
	strMap, strs := reuseMap, reuseStrings
	hooks, linux := prev.Hooks, prev.Linux
	if own {
		strMap, strs = refillMap, refillStrings
		// own is a creation's copy taken before merging, which sets
		// the parts a runtime left unset, empty: where own has none, a
		// start's container shares those of mergedEmpty.
		if hooks == nil {
			hooks = mergedEmpty.Hooks
		}
		if linux == nil {
			linux = mergedEmpty.Linux
		}
	}
	*dst = api.Container{
		Id:            c.Id,
		PodSandboxId:  c.PodSandboxId,
		Name:          c.Name,
		State:         c.State,
		Labels:        strMap(c.Labels, prev.Labels),
		Annotations:   strMap(c.Annotations, prev.Annotations),
		Args:          strs(c.Args, prev.Args),
		Env:           strs(c.Env, prev.Env),
		Mounts:        reuseMounts(c.Mounts, prev.Mounts),
		Hooks:         reuseBy(c.Hooks, hooks, sameHooks, cloneHooks),
		Linux:         reuseBy(c.Linux, linux, sameLinux, cloneLinux),
		Pid:           c.Pid,
		Rlimits:       reuseMsgs(c.Rlimits, prev.Rlimits),
		CreatedAt:     c.CreatedAt,
		StartedAt:     c.StartedAt,
		FinishedAt:    c.FinishedAt,
		ExitCode:      c.ExitCode,
		StatusReason:  c.StatusReason,
		StatusMessage: c.StatusMessage,
		CDIDevices:    reuseMsgs(c.CDIDevices, prev.CDIDevices),
		User:          reuseMsg(c.User, prev.User),
		Image:         reuseMsg(c.Image, prev.Image),
	}
}

// mergedEmpty holds the parts of a container merging sets where the
// runtime sent none (collectCreateContainerResult), as the ledger copies
// them: empty hooks, and a linux part holding empty memory and CPU
// resources. Entries share them; like every part of an entry they are
// never modified (the ledger's in-place edits are of a creation's own
// copy, and applyLocked merges into a whole new one).
// TestMergedEmpty holds it to what merging sets.
var mergedEmpty = &api.Container{
	Hooks: &api.Hooks{},
	Linux: &api.LinuxContainer{Resources: &api.LinuxResources{Memory: &api.LinuxMemory{}, Cpu: &api.LinuxCPU{}}},
}

// SharedEmpty is a copy of the parts merging sets that started containers
// share, for the adaptation's test that they are what its merging sets.
func SharedEmpty() *api.Container { return CloneContainer(mergedEmpty) }

// refillMap is reuseMap for a map of the caller's own: it is cleared and
// refilled rather than copied.
func refillMap(m, own map[string]string) map[string]string {
	switch {
	case len(m) == 0:
		return nil
	case own == nil:
		return maps.Clone(m)
	case !maps.Equal(m, own):
		clear(own)
		maps.Copy(own, m)
	}
	return own
}

// refillStrings is reuseStrings for a list of the caller's own: refilled
// if it has room.
func refillStrings(s, own []string) []string {
	switch {
	case len(s) == 0:
		return nil
	case cap(own) < len(s):
		return slices.Clone(s)
	case !slices.Equal(s, own):
		return append(own[:0], s...)
	}
	return own
}

func reuseMap(m, prev map[string]string) map[string]string {
	if len(m) > 0 && maps.Equal(m, prev) {
		return prev
	}
	return cloneMap(m)
}

func reuseStrings(s, prev []string) []string {
	if len(s) > 0 && slices.Equal(s, prev) {
		return prev
	}
	return cloneStrings(s)
}

func reuseMounts(s, prev []*api.Mount) []*api.Mount {
	if len(s) > 0 && slices.EqualFunc(s, prev, sameMount) {
		return prev
	}
	return cloneMounts(s)
}

func reuseMsg[E any, T message[E]](m, prev T) T {
	if m != nil && sameMsg(m, prev) {
		return prev
	}
	return cloneMsg(m)
}

func reuseMsgs[E any, T message[E]](s, prev []T) []T {
	if len(s) > 0 && slices.EqualFunc(s, prev, sameMsg[E, T]) {
		return prev
	}
	return cloneMsgs(s)
}

func cloneMounts(in []*api.Mount) []*api.Mount {
	if len(in) == 0 {
		return nil
	}
	out := make([]*api.Mount, len(in))
	for i, m := range in {
		if m == nil || len(m.ProtoReflect().GetUnknown()) > 0 {
			out[i] = cloneElem(m)
			continue
		}
		out[i] = &api.Mount{Destination: m.Destination, Type: m.Type, Source: m.Source, Options: cloneStrings(m.Options)}
	}
	return out
}

// cloneMap copies a map field; proto.Clone leaves an empty one nil.
func cloneMap(m map[string]string) map[string]string {
	if len(m) == 0 {
		return nil
	}
	return maps.Clone(m)
}

// message is a pointer to a generated message type, which can be compared
// with nil without calling its ProtoReflect (which allocates for nil).
type message[E any] interface {
	*E
	proto.Message
}

// cloneStrings copies a repeated string field; proto.Clone leaves an empty
// one nil.
func cloneStrings(s []string) []string {
	if len(s) == 0 {
		return nil
	}
	return slices.Clone(s)
}

// cloneMsg copies a nested message; an unset one stays unset.
func cloneMsg[E any, T message[E]](m T) T {
	if m == nil {
		return nil
	}
	return proto.Clone(m).(T)
}

// cloneElem copies an element of a repeated message field; proto.Clone
// turns a nil element into an empty message.
func cloneElem[E any, T message[E]](m T) T {
	if m == nil {
		return T(new(E))
	}
	return proto.Clone(m).(T)
}

func cloneMsgs[E any, T message[E]](in []T) []T {
	if len(in) == 0 {
		return nil
	}
	out := make([]T, len(in))
	for i, m := range in {
		out[i] = cloneElem(m)
	}
	return out
}

// sameObject compares two of the ledger's objects as proto.Equal does (see
// samePod).
func sameObject(a, b proto.Message) bool {
	switch a := a.(type) {
	case *api.PodSandbox:
		b, ok := b.(*api.PodSandbox)
		return ok && samePod(a, b)
	case *api.Container:
		b, ok := b.(*api.Container)
		return ok && sameContainer(a, b)
	}
	return proto.Equal(a, b)
}

// samePod tells whether a and b are equal as proto.Equal tells. It may
// report a difference proto.Equal would not (unknown fields in another
// order), never the reverse.
func samePod(a, b *api.PodSandbox) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Id == b.Id &&
		a.Name == b.Name &&
		a.Uid == b.Uid &&
		a.Namespace == b.Namespace &&
		maps.Equal(a.Labels, b.Labels) &&
		maps.Equal(a.Annotations, b.Annotations) &&
		a.RuntimeHandler == b.RuntimeHandler &&
		sameMsg(a.Linux, b.Linux) &&
		a.Pid == b.Pid &&
		slices.Equal(a.Ips, b.Ips) &&
		sameUnknown(a, b)
}

// sameContainer tells whether a and b are equal as proto.Equal tells (see
// samePod).
func sameContainer(a, b *api.Container) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Id == b.Id &&
		a.PodSandboxId == b.PodSandboxId &&
		a.Name == b.Name &&
		a.State == b.State &&
		maps.Equal(a.Labels, b.Labels) &&
		maps.Equal(a.Annotations, b.Annotations) &&
		slices.Equal(a.Args, b.Args) &&
		slices.Equal(a.Env, b.Env) &&
		slices.EqualFunc(a.Mounts, b.Mounts, sameMount) &&
		sameHooks(a.Hooks, b.Hooks) &&
		sameLinux(a.Linux, b.Linux) &&
		a.Pid == b.Pid &&
		slices.EqualFunc(a.Rlimits, b.Rlimits, sameMsg) &&
		a.CreatedAt == b.CreatedAt &&
		a.StartedAt == b.StartedAt &&
		a.FinishedAt == b.FinishedAt &&
		a.ExitCode == b.ExitCode &&
		a.StatusReason == b.StatusReason &&
		a.StatusMessage == b.StatusMessage &&
		slices.EqualFunc(a.CDIDevices, b.CDIDevices, sameMsg) &&
		sameMsg(a.User, b.User) &&
		sameMsg(a.Image, b.Image) &&
		sameUnknown(a, b)
}

func sameMount(a, b *api.Mount) bool {
	if a == nil || b == nil {
		return sameMsg(a, b)
	}
	return a.Destination == b.Destination &&
		a.Type == b.Type &&
		a.Source == b.Source &&
		slices.Equal(a.Options, b.Options) &&
		sameUnknown(a, b)
}

// sameMsg compares a nested message: set or not, and then its content.
func sameMsg[E any, T message[E]](a, b T) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return proto.Equal(a, b)
}

func sameUnknown(a, b proto.Message) bool {
	return bytes.Equal(a.ProtoReflect().GetUnknown(), b.ProtoReflect().GetUnknown())
}

// differingFields names the fields in which a and b differ, a level deep
// into linux, for a comparison's log.
func differingFields(a, b proto.Message) string {
	var names []string
	var walk func(prefix string, a, b protoreflect.Message, depth int)
	walk = func(prefix string, a, b protoreflect.Message, depth int) {
		fields := a.Descriptor().Fields()
		for i := 0; i < fields.Len(); i++ {
			f := fields.Get(i)
			va, vb := a.Get(f), b.Get(f)
			if va.Equal(vb) {
				continue
			}
			if f.Kind() == protoreflect.MessageKind && !f.IsList() && !f.IsMap() && depth > 0 && a.Has(f) && b.Has(f) {
				walk(prefix+string(f.Name())+".", va.Message(), vb.Message(), depth-1)
				continue
			}
			names = append(names, prefix+string(f.Name()))
		}
	}
	walk("", a.ProtoReflect(), b.ProtoReflect(), 1)
	return strings.Join(names, ",")
}

// reuseBy copies m with clone, taking from prev what is equal, or returns
// prev itself if all of it is (same).
func reuseBy[T any](m, prev *T, same func(a, b *T) bool, clone func(m, prev *T) *T) *T {
	if m != nil && prev != nil && same(m, prev) {
		return prev
	}
	return clone(m, prev)
}

// reuseListBy is reuseBy for a repeated field: prev's list if equal, else
// a copy of each element (proto.Clone turns a nil element into an empty
// message).
func reuseListBy[T any](s, prev []*T, same func(a, b *T) bool, clone func(m, prev *T) *T) []*T {
	if len(s) == 0 {
		return nil
	}
	if slices.EqualFunc(s, prev, same) {
		return prev
	}
	out := make([]*T, len(s))
	for i, m := range s {
		if m == nil {
			out[i] = new(T)
			continue
		}
		out[i] = clone(m, nil)
	}
	return out
}

// hasUnknown tells whether m carries unknown fields, which only
// proto.Clone copies.
func hasUnknown(m proto.Message) bool { return len(m.ProtoReflect().GetUnknown()) > 0 }

func cloneLinux(l, prev *api.LinuxContainer) *api.LinuxContainer {
	if l == nil || hasUnknown(l) {
		return cloneMsg(l)
	}
	if prev == nil {
		prev = &api.LinuxContainer{}
	}
	return &api.LinuxContainer{
		Namespaces:     reuseListBy(l.Namespaces, prev.Namespaces, sameNamespace, cloneNamespace),
		Devices:        reuseMsgs(l.Devices, prev.Devices),
		Resources:      reuseBy(l.Resources, prev.Resources, sameResources, cloneResources),
		OomScoreAdj:    reuseBy(l.OomScoreAdj, prev.OomScoreAdj, sameOptInt, cloneOptInt),
		CgroupsPath:    l.CgroupsPath,
		IoPriority:     reuseMsg(l.IoPriority, prev.IoPriority),
		SeccompProfile: reuseMsg(l.SeccompProfile, prev.SeccompProfile),
		SeccompPolicy:  reuseMsg(l.SeccompPolicy, prev.SeccompPolicy),
		Sysctl:         reuseMap(l.Sysctl, prev.Sysctl),
		NetDevices:     reuseNetDevices(l.NetDevices, prev.NetDevices),
		Scheduler:      reuseMsg(l.Scheduler, prev.Scheduler),
		Rdt:            reuseMsg(l.Rdt, prev.Rdt),
	}
}

func sameLinux(a, b *api.LinuxContainer) bool {
	if a == nil || b == nil {
		return a == b
	}
	return slices.EqualFunc(a.Namespaces, b.Namespaces, sameNamespace) &&
		slices.EqualFunc(a.Devices, b.Devices, sameMsg) &&
		sameResources(a.Resources, b.Resources) &&
		sameOptInt(a.OomScoreAdj, b.OomScoreAdj) &&
		a.CgroupsPath == b.CgroupsPath &&
		sameMsg(a.IoPriority, b.IoPriority) &&
		sameMsg(a.SeccompProfile, b.SeccompProfile) &&
		sameMsg(a.SeccompPolicy, b.SeccompPolicy) &&
		maps.Equal(a.Sysctl, b.Sysctl) &&
		maps.EqualFunc(a.NetDevices, b.NetDevices, sameMsg) &&
		sameMsg(a.Scheduler, b.Scheduler) &&
		sameMsg(a.Rdt, b.Rdt) &&
		sameUnknown(a, b)
}

func reuseNetDevices(m, prev map[string]*api.LinuxNetDevice) map[string]*api.LinuxNetDevice {
	if len(m) == 0 {
		return nil
	}
	if maps.EqualFunc(m, prev, sameMsg) {
		return prev
	}
	out := make(map[string]*api.LinuxNetDevice, len(m))
	for k, d := range m {
		out[k] = cloneElem(d)
	}
	return out
}

func cloneNamespace(n, _ *api.LinuxNamespace) *api.LinuxNamespace {
	if n == nil || hasUnknown(n) {
		return cloneMsg(n)
	}
	return &api.LinuxNamespace{Type: n.Type, Path: n.Path}
}

func sameNamespace(a, b *api.LinuxNamespace) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Type == b.Type && a.Path == b.Path && sameUnknown(a, b)
}

func cloneResources(r, prev *api.LinuxResources) *api.LinuxResources {
	if r == nil || hasUnknown(r) {
		return cloneMsg(r)
	}
	if prev == nil {
		prev = &api.LinuxResources{}
	}
	return &api.LinuxResources{
		Memory:         reuseBy(r.Memory, prev.Memory, sameMemory, cloneMemory),
		Cpu:            reuseBy(r.Cpu, prev.Cpu, sameCPU, cloneCPU),
		HugepageLimits: reuseMsgs(r.HugepageLimits, prev.HugepageLimits),
		BlockioClass:   reuseBy(r.BlockioClass, prev.BlockioClass, sameOptString, cloneOptString),
		RdtClass:       reuseBy(r.RdtClass, prev.RdtClass, sameOptString, cloneOptString),
		Unified:        reuseMap(r.Unified, prev.Unified),
		Devices:        reuseMsgs(r.Devices, prev.Devices),
		Pids:           reuseMsg(r.Pids, prev.Pids),
	}
}

func sameResources(a, b *api.LinuxResources) bool {
	if a == nil || b == nil {
		return a == b
	}
	return sameMemory(a.Memory, b.Memory) &&
		sameCPU(a.Cpu, b.Cpu) &&
		slices.EqualFunc(a.HugepageLimits, b.HugepageLimits, sameMsg) &&
		sameOptString(a.BlockioClass, b.BlockioClass) &&
		sameOptString(a.RdtClass, b.RdtClass) &&
		maps.Equal(a.Unified, b.Unified) &&
		slices.EqualFunc(a.Devices, b.Devices, sameMsg) &&
		sameMsg(a.Pids, b.Pids) &&
		sameUnknown(a, b)
}

func cloneMemory(m, _ *api.LinuxMemory) *api.LinuxMemory {
	if m == nil || hasUnknown(m) {
		return cloneMsg(m)
	}
	return &api.LinuxMemory{
		Limit:            cloneOptInt64(m.Limit),
		Reservation:      cloneOptInt64(m.Reservation),
		Swap:             cloneOptInt64(m.Swap),
		Kernel:           cloneOptInt64(m.Kernel),
		KernelTcp:        cloneOptInt64(m.KernelTcp),
		Swappiness:       cloneOptUInt64(m.Swappiness),
		DisableOomKiller: cloneOptBool(m.DisableOomKiller),
		UseHierarchy:     cloneOptBool(m.UseHierarchy),
	}
}

func sameMemory(a, b *api.LinuxMemory) bool {
	if a == nil || b == nil {
		return a == b
	}
	return sameOptInt64(a.Limit, b.Limit) &&
		sameOptInt64(a.Reservation, b.Reservation) &&
		sameOptInt64(a.Swap, b.Swap) &&
		sameOptInt64(a.Kernel, b.Kernel) &&
		sameOptInt64(a.KernelTcp, b.KernelTcp) &&
		sameOptUInt64(a.Swappiness, b.Swappiness) &&
		sameOptBool(a.DisableOomKiller, b.DisableOomKiller) &&
		sameOptBool(a.UseHierarchy, b.UseHierarchy) &&
		sameUnknown(a, b)
}

func cloneCPU(c, _ *api.LinuxCPU) *api.LinuxCPU {
	if c == nil || hasUnknown(c) {
		return cloneMsg(c)
	}
	return &api.LinuxCPU{
		Shares:          cloneOptUInt64(c.Shares),
		Quota:           cloneOptInt64(c.Quota),
		Period:          cloneOptUInt64(c.Period),
		RealtimeRuntime: cloneOptInt64(c.RealtimeRuntime),
		RealtimePeriod:  cloneOptUInt64(c.RealtimePeriod),
		Cpus:            c.Cpus,
		Mems:            c.Mems,
	}
}

func sameCPU(a, b *api.LinuxCPU) bool {
	if a == nil || b == nil {
		return a == b
	}
	return sameOptUInt64(a.Shares, b.Shares) &&
		sameOptInt64(a.Quota, b.Quota) &&
		sameOptUInt64(a.Period, b.Period) &&
		sameOptInt64(a.RealtimeRuntime, b.RealtimeRuntime) &&
		sameOptUInt64(a.RealtimePeriod, b.RealtimePeriod) &&
		a.Cpus == b.Cpus &&
		a.Mems == b.Mems &&
		sameUnknown(a, b)
}

func cloneHooks(h, _ *api.Hooks) *api.Hooks {
	if h == nil || hasUnknown(h) {
		return cloneMsg(h)
	}
	return &api.Hooks{
		Prestart:        reuseListBy(h.Prestart, nil, sameHook, cloneHook),
		CreateRuntime:   reuseListBy(h.CreateRuntime, nil, sameHook, cloneHook),
		CreateContainer: reuseListBy(h.CreateContainer, nil, sameHook, cloneHook),
		StartContainer:  reuseListBy(h.StartContainer, nil, sameHook, cloneHook),
		Poststart:       reuseListBy(h.Poststart, nil, sameHook, cloneHook),
		Poststop:        reuseListBy(h.Poststop, nil, sameHook, cloneHook),
	}
}

func sameHooks(a, b *api.Hooks) bool {
	if a == nil || b == nil {
		return a == b
	}
	return slices.EqualFunc(a.Prestart, b.Prestart, sameHook) &&
		slices.EqualFunc(a.CreateRuntime, b.CreateRuntime, sameHook) &&
		slices.EqualFunc(a.CreateContainer, b.CreateContainer, sameHook) &&
		slices.EqualFunc(a.StartContainer, b.StartContainer, sameHook) &&
		slices.EqualFunc(a.Poststart, b.Poststart, sameHook) &&
		slices.EqualFunc(a.Poststop, b.Poststop, sameHook) &&
		sameUnknown(a, b)
}

func cloneHook(h, _ *api.Hook) *api.Hook {
	if h == nil || hasUnknown(h) {
		return cloneMsg(h)
	}
	return &api.Hook{Path: h.Path, Args: cloneStrings(h.Args), Env: cloneStrings(h.Env), Timeout: cloneOptInt(h.Timeout, nil)}
}

func sameHook(a, b *api.Hook) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Path == b.Path &&
		slices.Equal(a.Args, b.Args) &&
		slices.Equal(a.Env, b.Env) &&
		sameOptInt(a.Timeout, b.Timeout) &&
		sameUnknown(a, b)
}

// The optional values: a message holding one scalar.

func cloneOptInt(o, _ *api.OptionalInt) *api.OptionalInt {
	if o == nil || hasUnknown(o) {
		return cloneMsg(o)
	}
	return &api.OptionalInt{Value: o.Value}
}

func sameOptInt(a, b *api.OptionalInt) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Value == b.Value && sameUnknown(a, b)
}

func cloneOptInt64(o *api.OptionalInt64) *api.OptionalInt64 {
	if o == nil || hasUnknown(o) {
		return cloneMsg(o)
	}
	return &api.OptionalInt64{Value: o.Value}
}

func sameOptInt64(a, b *api.OptionalInt64) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Value == b.Value && sameUnknown(a, b)
}

func cloneOptUInt64(o *api.OptionalUInt64) *api.OptionalUInt64 {
	if o == nil || hasUnknown(o) {
		return cloneMsg(o)
	}
	return &api.OptionalUInt64{Value: o.Value}
}

func sameOptUInt64(a, b *api.OptionalUInt64) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Value == b.Value && sameUnknown(a, b)
}

func cloneOptBool(o *api.OptionalBool) *api.OptionalBool {
	if o == nil || hasUnknown(o) {
		return cloneMsg(o)
	}
	return &api.OptionalBool{Value: o.Value}
}

func sameOptBool(a, b *api.OptionalBool) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Value == b.Value && sameUnknown(a, b)
}

func cloneOptString(o, _ *api.OptionalString) *api.OptionalString {
	if o == nil || hasUnknown(o) {
		return cloneMsg(o)
	}
	return &api.OptionalString{Value: o.Value}
}

func sameOptString(a, b *api.OptionalString) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Value == b.Value && sameUnknown(a, b)
}
