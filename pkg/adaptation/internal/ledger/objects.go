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
// messages only some runtimes fill in go through proto.Clone and
// proto.Equal. TestObjectsCoverEveryField fails when a field is added to
// either message and not here.

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
	if c == nil || len(c.ProtoReflect().GetUnknown()) > 0 {
		return cloneMsg(c)
	}
	if prev == nil {
		prev = &api.Container{}
	}
	return &api.Container{
		Id:            c.Id,
		PodSandboxId:  c.PodSandboxId,
		Name:          c.Name,
		State:         c.State,
		Labels:        reuseMap(c.Labels, prev.Labels),
		Annotations:   reuseMap(c.Annotations, prev.Annotations),
		Args:          reuseStrings(c.Args, prev.Args),
		Env:           reuseStrings(c.Env, prev.Env),
		Mounts:        reuseMounts(c.Mounts, prev.Mounts),
		Hooks:         reuseMsg(c.Hooks, prev.Hooks),
		Linux:         reuseMsg(c.Linux, prev.Linux),
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
		sameMsg(a.Hooks, b.Hooks) &&
		sameMsg(a.Linux, b.Linux) &&
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
