package adaptation

import (
	"slices"
	"strings"

	"github.com/nri-handover/nri/api"
)

// Keyed fields are collections whose entries a key identifies (annotation
// key, mount destination, environment variable name, ...), each key with an
// owner of its own. A plugin may mark a key for removal ("-key", or a marked
// entry of a list). What a removal does follows upstream NRI v0.12.5 to the
// letter, because runtimes and plugins depend on the merged reply:
//
//   - A removal never claims the key. It clears the key for the removing
//     plugin only where it takes away something an earlier plugin set in the
//     collected reply (lists), or where the plugin sets the key again in the
//     same adjustment (maps). Only then does a later plugin setting the key
//     conflict with the remover. So "a removes, b sets" merges: the reply
//     carries a's removal and b's value.
//   - Maps (annotations, sysctls, network devices) always forward the
//     removal marker, also next to a value set for the key by the same or an
//     earlier plugin, and a bare removal leaves the request (what later
//     plugins see) untouched.
//   - Lists drop the removed keys from the request and from what earlier
//     plugins put in the reply. Mounts forward the removal marker unless the
//     plugin sets the key again; devices and environment variables never do.

// adjustAnnotations merges one plugin's annotations.
func (r *result) adjustAnnotations(annotations map[string]string, plugin string) error {
	return mergeMap(r, plugin, mapField{
		claim: (*api.OwningPlugins).ClaimAnnotation,
		clear: (*api.OwningPlugins).ClearAnnotation,
	}, annotations, r.request.create.Container.Annotations, r.reply.adjust.Annotations)
}

// adjustSysctl merges one plugin's sysctls.
func (r *result) adjustSysctl(sysctl map[string]string, plugin string) error {
	return mergeMap(r, plugin, mapField{
		claim: (*api.OwningPlugins).ClaimSysctl,
		clear: (*api.OwningPlugins).ClearSysctl,
	}, sysctl, r.request.create.Container.Linux.Sysctl, r.reply.adjust.Linux.Sysctl)
}

// adjustLinuxNetDevices merges one plugin's network devices; a removal is
// forwarded as the marked host interface with no device.
func (r *result) adjustLinuxNetDevices(devices map[string]*api.LinuxNetDevice, plugin string) error {
	return mergeMap(r, plugin, mapField{
		claim: (*api.OwningPlugins).ClaimLinuxNetDevice,
		clear: (*api.OwningPlugins).ClearLinuxNetDevice,
	}, devices, r.request.create.Container.Linux.NetDevices, r.reply.adjust.Linux.NetDevices)
}

// adjustMounts merges one plugin's mounts, keyed by destination.
func (r *result) adjustMounts(mounts []*api.Mount, plugin string) error {
	key := func(m *api.Mount) string { return m.GetDestination() }
	return mergeList(r, plugin, listField[*api.Mount]{
		key:             key,
		claim:           (*api.OwningPlugins).ClaimMount,
		clear:           (*api.OwningPlugins).ClearMount,
		forwardRemovals: true,
	}, mounts, &requestList[*api.Mount]{list: &r.request.create.Container.Mounts, key: key},
		&r.reply.adjust.Mounts)
}

// adjustDevices merges one plugin's devices, keyed by path.
func (r *result) adjustDevices(devices []*api.LinuxDevice, plugin string) error {
	key := func(d *api.LinuxDevice) string { return d.GetPath() }
	return mergeList(r, plugin, listField[*api.LinuxDevice]{
		key:   key,
		claim: (*api.OwningPlugins).ClaimDevice,
		clear: (*api.OwningPlugins).ClearDevice,
	}, devices, &requestList[*api.LinuxDevice]{list: &r.request.create.Container.Linux.Devices, key: key},
		&r.reply.adjust.Linux.Devices)
}

// adjustEnv merges one plugin's environment variables, keyed by name; the
// request carries them as "NAME=value".
func (r *result) adjustEnv(env []*api.KeyValue, plugin string) error {
	return mergeList(r, plugin, listField[*api.KeyValue]{
		key:   func(e *api.KeyValue) string { return e.GetKey() },
		claim: (*api.OwningPlugins).ClaimEnv,
		clear: (*api.OwningPlugins).ClearEnv,
	}, env, envRequest{&r.request.create.Container.Env}, &r.reply.adjust.Env)
}

// adjustRlimits claims each rlimit type and appends it to the request and
// the reply, as upstream does: no rlimit is removed or replaced.
func (r *result) adjustRlimits(rlimits []*api.POSIXRlimit, plugin string) error {
	c := r.request.create.Container
	for _, l := range rlimits {
		if l == nil {
			continue
		}
		if err := r.owners.ClaimRlimit(r.createdID(), l.GetType(), plugin); err != nil {
			return err
		}
		c.Rlimits = append(c.Rlimits, l)
		r.reply.adjust.Rlimits = append(r.reply.adjust.Rlimits, l)
	}
	return nil
}

// mapField holds the claims guarding a map-valued field.
type mapField struct {
	claim func(o *api.OwningPlugins, id, key, plugin string) error
	clear func(o *api.OwningPlugins, id, key, plugin string)
}

// mergeMap merges the entries one plugin set in a map-valued field into the
// request and the reply. Keys are visited in order so that the conflict
// reported is the same on every run.
func mergeMap[V any](r *result, plugin string, f mapField, entries map[string]V, request, reply map[string]V) error {
	var zero V
	id := r.createdID()
	removed := map[string]bool{}
	var set []string
	for k := range entries {
		if key, marked := api.IsMarkedForRemoval(k); marked {
			removed[key] = true
		} else {
			set = append(set, k)
		}
	}
	slices.Sort(set)

	for _, k := range set {
		if removed[k] {
			// Replacing the key: the plugin first takes it over.
			f.clear(r.owners, id, k, plugin)
			delete(request, k)
			reply[api.MarkForRemoval(k)] = zero
			delete(removed, k)
		}
		if err := f.claim(r.owners, id, k, plugin); err != nil {
			return err
		}
		request[k] = entries[k]
		reply[k] = entries[k]
	}
	for k := range removed {
		reply[api.MarkForRemoval(k)] = zero
	}
	return nil
}

// listField describes a list-valued keyed field: an entry's key (possibly
// with a removal marker), the claims guarding it, and whether removals are
// forwarded to the runtime.
type listField[T any] struct {
	key             func(T) string
	claim           func(o *api.OwningPlugins, id, key, plugin string) error
	clear           func(o *api.OwningPlugins, id, key, plugin string)
	forwardRemovals bool
}

// listRequestTarget is the request's copy of a list-valued field.
type listRequestTarget[T any] interface {
	drop(gone func(key string) bool)
	add(entries []T)
}

// mergeList merges the entries one plugin set in a list-valued field into
// the request and the reply (kept in order).
func mergeList[T comparable](r *result, plugin string, f listField[T], entries []T, request listRequestTarget[T], reply *[]T) error {
	id := r.createdID()
	var (
		none     T // a nil entry, skipped
		add      []T
		modified map[string]bool // made when first needed: every event merges lists
		removed  map[string]T
		order    []string // removed keys as the plugin listed them
	)
	for _, e := range entries {
		key, marked := api.IsMarkedForRemoval(f.key(e))
		switch {
		case e == none:
			continue
		case !marked:
			add = append(add, e)
			if modified == nil {
				modified = map[string]bool{}
			}
			modified[key] = true
		default:
			if _, dup := removed[key]; !dup {
				order = append(order, key)
			}
			if removed == nil {
				removed = map[string]T{}
			}
			removed[key] = e
		}
	}
	if len(add) == 0 && len(removed) == 0 {
		return nil
	}

	// What earlier plugins set for a removed key leaves the reply, and the
	// remover takes the key over.
	*reply = slices.DeleteFunc(*reply, func(x T) bool {
		k := f.key(x)
		if _, gone := removed[k]; gone {
			f.clear(r.owners, id, k, plugin)
			return true
		}
		return false
	})
	request.drop(func(k string) bool {
		_, gone := removed[k]
		return gone || modified[k]
	})

	for _, e := range add {
		key := f.key(e)
		if err := f.claim(r.owners, id, key, plugin); err != nil {
			return err
		}
		*reply = append(*reply, e)
	}
	if f.forwardRemovals {
		for _, k := range order {
			if !modified[k] {
				*reply = append(*reply, removed[k])
			}
		}
	}
	request.add(add)
	return nil
}

// requestList is a request's list of entries.
type requestList[T any] struct {
	list *[]T
	key  func(T) string
}

func (l *requestList[T]) drop(gone func(string) bool) {
	*l.list = slices.DeleteFunc(*l.list, func(x T) bool { return gone(l.key(x)) })
}

func (l *requestList[T]) add(entries []T) { *l.list = append(*l.list, entries...) }

// envRequest is the request's "NAME=value" environment.
type envRequest struct{ env *[]string }

func (e envRequest) drop(gone func(string) bool) {
	*e.env = slices.DeleteFunc(*e.env, func(s string) bool {
		name, _, _ := strings.Cut(s, "=")
		return gone(name)
	})
}

func (e envRequest) add(entries []*api.KeyValue) {
	for _, kv := range entries {
		*e.env = append(*e.env, kv.GetKey()+"="+kv.GetValue())
	}
}
