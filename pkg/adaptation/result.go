package adaptation

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"google.golang.org/protobuf/proto"

	"github.com/nri-handover/nri/api"
)

// A result merges the responses of the plugins to one runtime event, in
// plugin order. Each plugin sees the request as adjusted by the plugins
// before it (the request is updated in place), every field a plugin sets is
// claimed in owners so that two plugins setting the same field fail the
// request, and the merged adjustment and updates (and evictions, if the
// runtime asked for them) become the response handed back to the runtime.
type result struct {
	request resultRequest
	reply   resultReply
	updates map[string]*api.ContainerUpdate
	owners  *api.OwningPlugins

	// forwardEvictions collects the evictions plugins ask for into the
	// reply (WithEvictionForwarding); by default they are dropped.
	forwardEvictions bool
}

type resultRequest struct {
	create *api.CreateContainerRequest
	update *api.UpdateContainerRequest
}

type resultReply struct {
	adjust *api.ContainerAdjustment
	update []*api.ContainerUpdate
	evict  []*api.ContainerEviction
}

// collectCreateContainerResult starts merging the responses to request. The
// request's container is filled in where empty so that adjustments can be
// applied to it as they are collected.
func collectCreateContainerResult(request *api.CreateContainerRequest) *result {
	if request.Container == nil {
		request.Container = &api.Container{}
	}
	c := request.Container
	if c.Labels == nil {
		c.Labels = map[string]string{}
	}
	if c.Annotations == nil {
		c.Annotations = map[string]string{}
	}
	if c.Mounts == nil {
		c.Mounts = []*api.Mount{}
	}
	if c.Env == nil {
		c.Env = []string{}
	}
	if c.Hooks == nil {
		c.Hooks = &api.Hooks{}
	}
	if c.Rlimits == nil {
		c.Rlimits = []*api.POSIXRlimit{}
	}
	if c.Linux == nil {
		c.Linux = &api.LinuxContainer{}
	}
	l := c.Linux
	if l.Devices == nil {
		l.Devices = []*api.LinuxDevice{}
	}
	if l.Resources == nil {
		l.Resources = &api.LinuxResources{}
	}
	fillResources(l.Resources)
	if l.Namespaces == nil {
		l.Namespaces = []*api.LinuxNamespace{}
	}
	if l.NetDevices == nil {
		l.NetDevices = map[string]*api.LinuxNetDevice{}
	}
	if l.Sysctl == nil {
		l.Sysctl = map[string]string{}
	}

	return &result{
		request: resultRequest{create: request},
		reply: resultReply{
			adjust: &api.ContainerAdjustment{
				Annotations: map[string]string{},
				Mounts:      []*api.Mount{},
				Env:         []*api.KeyValue{},
				Hooks:       &api.Hooks{},
				Rlimits:     []*api.POSIXRlimit{},
				CDIDevices:  []*api.CDIDevice{},
				Linux: &api.LinuxContainerAdjustment{
					Devices:    []*api.LinuxDevice{},
					Resources:  fillResources(&api.LinuxResources{}),
					Namespaces: []*api.LinuxNamespace{},
					NetDevices: map[string]*api.LinuxNetDevice{},
					Sysctl:     map[string]string{},
				},
			},
		},
		updates: map[string]*api.ContainerUpdate{},
		owners:  api.NewOwningPlugins(),
	}
}

// collectUpdateContainerResult starts merging the responses to request, nil
// when there is no container being updated (StopContainer).
func collectUpdateContainerResult(request *api.UpdateContainerRequest) *result {
	if request != nil {
		if request.LinuxResources == nil {
			request.LinuxResources = &api.LinuxResources{}
		}
		fillResources(request.LinuxResources)
	}
	return &result{
		request: resultRequest{update: request},
		reply:   resultReply{update: []*api.ContainerUpdate{}},
		updates: map[string]*api.ContainerUpdate{},
		owners:  api.NewOwningPlugins(),
	}
}

func collectStopContainerResult() *result {
	return collectUpdateContainerResult(nil)
}

func (r *result) createContainerResponse() *api.CreateContainerResponse {
	return &api.CreateContainerResponse{
		Adjust: r.reply.adjust,
		Update: r.reply.update,
		Evict:  r.reply.evict,
	}
}

// updateContainerResponse lists the updates of other containers first and the
// updated container's own resources last, possibly nil if no plugin changed
// them: runtimes take the last entry as the outcome of their request.
func (r *result) updateContainerResponse() *api.UpdateContainerResponse {
	var requested *api.ContainerUpdate
	if r.request.update != nil {
		requested = r.updates[r.request.update.GetContainer().GetId()]
	}
	return &api.UpdateContainerResponse{
		Update: append(r.reply.update, requested),
		Evict:  r.reply.evict,
	}
}

func (r *result) stopContainerResponse() *api.StopContainerResponse {
	return &api.StopContainerResponse{
		Update: r.reply.update,
	}
}

// renameHint adds to p's conflict with another plugin of its index, where
// one of them opted into handover, that a rename is the likely cause: an
// instance registered under a new name does not take over from the old
// one, so both adjust every container. Other conflicts, and those of
// plugins that did not opt in, are upstream's as they are. plugins are the
// event's.
func renameHint(err error, p *plugin, plugins []*plugin) error {
	if err == nil {
		return nil
	}
	for _, q := range plugins {
		if q == p || q.idx != p.idx || q.base == p.base || !(q.handsOver() || p.handsOver()) ||
			!strings.Contains(err.Error(), strconv.Quote(q.name())) {
			continue
		}
		return fmt.Errorf("%w; %s and %s share index %s: if one is the other renamed, it did not take over and both adjust every container "+
			"(keep the plugin's name from one version to the next)", err, p.name(), q.name(), p.idx)
	}
	return err
}

// apply merges the response of plugin into the result.
func (r *result) apply(response interface{}, plugin string) error {
	switch rpl := response.(type) {
	case *api.CreateContainerResponse:
		if rpl == nil {
			return nil
		}
		if r.request.create == nil {
			return fmt.Errorf("plugin %q: CreateContainer response to another event", plugin)
		}
		if err := r.adjust(rpl.Adjust, plugin); err != nil {
			return err
		}
		if err := r.update(rpl.Update, plugin); err != nil {
			return err
		}
		return r.evict(rpl.Evict, plugin)
	case *api.UpdateContainerResponse:
		if rpl == nil {
			return nil
		}
		if err := r.update(rpl.Update, plugin); err != nil {
			return err
		}
		return r.evict(rpl.Evict, plugin)
	case *api.StopContainerResponse:
		if rpl == nil {
			return nil
		}
		return r.update(rpl.Update, plugin)
	default:
		return fmt.Errorf("plugin %q: cannot merge response of type %T", plugin, response)
	}
}

// adjust merges one plugin's adjustment of the container being created.
func (r *result) adjust(adj *api.ContainerAdjustment, plugin string) error {
	if adj == nil {
		return nil
	}
	steps := []func() error{
		func() error { return r.adjustAnnotations(adj.Annotations, plugin) },
		func() error { return r.adjustMounts(adj.Mounts, plugin) },
		func() error { return r.adjustEnv(adj.Env, plugin) },
		func() error { return r.adjustArgs(adj.Args, plugin) },
		func() error { return r.adjustHooks(adj.Hooks, plugin) },
		func() error { return r.adjustLinux(adj.Linux, plugin) },
		func() error { return r.adjustRlimits(adj.Rlimits, plugin) },
		func() error { return r.adjustCDIDevices(adj.CDIDevices, plugin) },
	}
	for _, step := range steps {
		if err := step(); err != nil {
			return err
		}
	}
	return nil
}

func (r *result) adjustLinux(l *api.LinuxContainerAdjustment, plugin string) error {
	if l == nil {
		return nil
	}
	steps := []func() error{
		func() error { return r.adjustDevices(l.Devices, plugin) },
		func() error { return r.adjustResources(l.Resources, plugin) },
		func() error {
			// cgroups path, OOM score, I/O priority, seccomp, scheduler, memory policy
			return r.mergeScalars(r.createdID(), plugin, linuxFields, l,
				r.request.create.Container.Linux, r.reply.adjust.Linux)
		},
		func() error { return r.adjustNamespaces(l.Namespaces, plugin) },
		func() error { return r.adjustSysctl(l.Sysctl, plugin) },
		func() error { return r.adjustLinuxNetDevices(l.NetDevices, plugin) },
		func() error { return r.adjustRdt(l.Rdt, plugin) },
	}
	for _, step := range steps {
		if err := step(); err != nil {
			return err
		}
	}
	return nil
}

func (r *result) createdID() string {
	return r.request.create.Container.Id
}

// adjustCDIDevices only adds: CDI devices are opaque references resolved by
// the runtime, so they are neither removable nor part of the request, but one
// device injected by two plugins is still a conflict.
func (r *result) adjustCDIDevices(devices []*api.CDIDevice, plugin string) error {
	for _, d := range devices {
		if err := r.owners.ClaimCdiDevice(r.createdID(), d.GetName(), plugin); err != nil {
			return err
		}
		r.reply.adjust.CDIDevices = append(r.reply.adjust.CDIDevices, d)
	}
	return nil
}

// adjustNamespaces claims each namespace type, also when it is marked for
// removal: a namespace removed by one plugin and set by another is a
// conflict. Marked entries are forwarded as they are.
func (r *result) adjustNamespaces(namespaces []*api.LinuxNamespace, plugin string) error {
	l := r.request.create.Container.Linux
	for _, n := range namespaces {
		if n == nil {
			continue
		}
		typ, marked := n.IsMarkedForRemoval()
		if err := r.owners.ClaimNamespace(r.createdID(), typ, plugin); err != nil {
			return err
		}
		l.Namespaces = slices.DeleteFunc(l.Namespaces, func(o *api.LinuxNamespace) bool {
			return o.GetType() == typ
		})
		if !marked {
			l.Namespaces = append(l.Namespaces, n)
		}
		r.reply.adjust.Linux.Namespaces = append(r.reply.adjust.Linux.Namespaces, n)
	}
	return nil
}

// adjustArgs replaces the arguments. A leading empty argument clears them
// first, which lets a plugin override arguments set by an earlier plugin.
func (r *result) adjustArgs(args []string, plugin string) error {
	if len(args) == 0 {
		return nil
	}
	id := r.createdID()
	if args[0] == "" {
		r.owners.ClearArgs(id, plugin)
		args = args[1:]
	}
	if err := r.owners.ClaimArgs(id, plugin); err != nil {
		return err
	}
	r.reply.adjust.Args = slices.Clone(args)
	r.request.create.Container.Args = slices.Clone(args)
	return nil
}

// adjustHooks appends: OCI hooks from any number of plugins are combined, and
// every contributing plugin is recorded as an owner.
func (r *result) adjustHooks(hooks *api.Hooks, plugin string) error {
	if hooks == nil {
		return nil
	}
	if appendLists(hooks, r.reply.adjust.Hooks, r.request.create.Container.Hooks) {
		return r.owners.ClaimHooks(r.createdID(), plugin)
	}
	return nil
}

// adjustRdt merges RDT settings. Remove resets whatever earlier plugins set
// (the runtime is told to drop RDT unless a field is set again). As upstream
// does, the reply carries an RDT adjustment, possibly empty, as soon as any
// plugin adjusted the container's Linux settings.
func (r *result) adjustRdt(rdt *api.LinuxRdt, plugin string) error {
	if r.reply.adjust.Linux.Rdt == nil {
		r.reply.adjust.Linux.Rdt = &api.LinuxRdt{}
	}
	if rdt == nil {
		return nil
	}
	id, reply := r.createdID(), r.reply.adjust.Linux
	if rdt.GetRemove() {
		r.owners.ClearRdt(id, plugin)
		reply.Rdt = &api.LinuxRdt{Remove: true}
	}
	set := false
	for _, f := range rdtFields {
		fd := rdtDesc.Fields().ByName(f.name)
		if !rdt.ProtoReflect().Has(fd) {
			continue
		}
		if err := f.claim(r.owners, id, plugin); err != nil {
			return err
		}
		reply.Rdt.ProtoReflect().Set(fd, cloneValue(rdt.ProtoReflect().Get(fd), fd))
		set = true
	}
	if set {
		reply.Rdt.Remove = false
	}
	return nil
}

var rdtDesc = (&api.LinuxRdt{}).ProtoReflect().Descriptor()

// adjustResources merges the Linux resources of the container being created.
func (r *result) adjustResources(res *api.LinuxResources, plugin string) error {
	if res == nil {
		return nil
	}
	id := r.createdID()
	request := r.request.create.Container.Linux.Resources
	reply := r.reply.adjust.Linux.Resources
	if err := r.mergeResources(id, plugin, res, request, reply); err != nil {
		return err
	}
	// Device cgroup rules accumulate without ownership, as upstream NRI does.
	request.Devices = append(request.Devices, res.Devices...)
	reply.Devices = append(reply.Devices, res.Devices...)
	return nil
}

// mergeResources claims and copies every resource set in res into each of
// targets (filled in with fillResources).
func (r *result) mergeResources(id, plugin string, res *api.LinuxResources, targets ...*api.LinuxResources) error {
	var mem, cpu, top []proto.Message
	for _, t := range targets {
		mem = append(mem, t.Memory)
		cpu = append(cpu, t.Cpu)
		top = append(top, t)
	}

	if err := r.mergeScalars(id, plugin, memoryFields, res.Memory, mem...); err != nil {
		return err
	}
	if err := r.mergeScalars(id, plugin, cpuFields, res.Cpu, cpu...); err != nil {
		return err
	}
	// Hugepage limits are appended, not replaced, as upstream does: a limit
	// for a page size the target already has is added after it.
	for _, l := range res.HugepageLimits {
		if l == nil {
			continue
		}
		if err := r.owners.ClaimHugepageLimit(id, l.GetPageSize(), plugin); err != nil {
			return err
		}
		for _, t := range targets {
			t.HugepageLimits = append(t.HugepageLimits, l)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(res.Unified)) {
		if err := r.owners.ClaimCgroupsUnified(id, k, plugin); err != nil {
			return err
		}
		for _, t := range targets {
			t.Unified[k] = res.Unified[k]
		}
	}
	return r.mergeScalars(id, plugin, resourceFields, res, top...)
}

//
// Container updates and evictions.
//

// update merges the container updates requested by plugin. An update that
// fails to merge (a conflict) is dropped if the plugin said its failure may
// be ignored.
func (r *result) update(updates []*api.ContainerUpdate, plugin string) error {
	for _, u := range updates {
		if u == nil {
			continue
		}
		reply, err := r.getContainerUpdate(u, plugin)
		if err != nil {
			return err
		}
		if err := r.updateResources(reply, u, plugin); err != nil && !u.IgnoreFailure {
			return err
		}
	}
	return nil
}

// getContainerUpdate returns the merged update of the container u is for,
// creating it on first use.
func (r *result) getContainerUpdate(u *api.ContainerUpdate, plugin string) (*api.ContainerUpdate, error) {
	id := u.ContainerId
	if r.request.create != nil && r.request.create.GetContainer().GetId() == id {
		return nil, fmt.Errorf("plugin %q asked update of %q during creation", plugin, id)
	}

	if update, ok := r.updates[id]; ok {
		update.IgnoreFailure = update.IgnoreFailure && u.IgnoreFailure
		return update, nil
	}

	update := &api.ContainerUpdate{
		ContainerId: id,
		Linux: &api.LinuxContainerUpdate{
			Resources: fillResources(&api.LinuxResources{}),
		},
		IgnoreFailure: u.IgnoreFailure,
	}
	r.updates[id] = update

	// The container being updated goes last, see updateContainerResponse.
	if r.request.update == nil || r.request.update.GetContainer().GetId() != id {
		r.reply.update = append(r.reply.update, update)
	}
	return update, nil
}

// updateResources merges the resources of u into reply. It works on a copy so
// that a failed (and ignored) update leaves no partial change behind.
func (r *result) updateResources(reply, u *api.ContainerUpdate, plugin string) error {
	res := u.GetLinux().GetResources()
	if res == nil {
		return nil
	}
	id := u.ContainerId
	requested := r.request.update != nil && r.request.update.GetContainer().GetId() == id

	var resources *api.LinuxResources
	if requested {
		resources = proto.Clone(r.request.update.LinuxResources).(*api.LinuxResources)
	} else {
		resources = proto.Clone(reply.Linux.Resources).(*api.LinuxResources)
	}
	fillResources(resources)

	if err := r.mergeResources(id, plugin, res, resources); err != nil {
		return err
	}

	reply.Linux.Resources = resources
	if requested {
		r.request.update.LinuxResources = proto.Clone(resources).(*api.LinuxResources)
	}
	return nil
}

// evict collects the evictions requested by plugin when the runtime asked
// for them; the runtime carries them out. The first reason given for a
// container is kept. Upstream NRI v0.12.5 ignores evictions in replies
// altogether, and so does a runtime that did not opt in.
func (r *result) evict(evictions []*api.ContainerEviction, plugin string) error {
	if !r.forwardEvictions {
		return nil
	}
	for _, e := range evictions {
		if e == nil {
			continue
		}
		id := e.GetContainerId()
		if r.request.create != nil && r.request.create.GetContainer().GetId() == id {
			return fmt.Errorf("plugin %q asked eviction of %q during creation", plugin, id)
		}
		if slices.ContainsFunc(r.reply.evict, func(o *api.ContainerEviction) bool {
			return o.GetContainerId() == id
		}) {
			continue
		}
		r.reply.evict = append(r.reply.evict, e)
	}
	return nil
}
