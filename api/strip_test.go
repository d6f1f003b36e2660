package api

import (
	"reflect"
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// strippableTypes are all types with a Strip method.
var strippableTypes = []proto.Message{
	&Hooks{}, &LinuxResources{}, &LinuxMemory{}, &LinuxCPU{}, &LinuxPids{},
	&LinuxIOPriority{}, &LinuxScheduler{}, &ContainerAdjustment{},
	&LinuxContainerAdjustment{}, &LinuxSeccomp{}, &LinuxMemoryPolicy{},
	&ContainerUpdate{}, &LinuxContainerUpdate{}, &LinuxRdt{},
}

// callStrip invokes m.Strip() and reports whether it returned nil.
func callStrip(t *testing.T, m proto.Message) (stripped any, isNil bool) {
	t.Helper()
	method := reflect.ValueOf(m).MethodByName("Strip")
	if !method.IsValid() {
		t.Fatalf("%T has no Strip method", m)
	}
	out := method.Call(nil)[0]
	return out.Interface(), out.IsNil()
}

// hasStrip reports whether messages of descriptor md have a Strip method.
func hasStrip(md protoreflect.MessageDescriptor) bool {
	for _, m := range strippableTypes {
		if m.ProtoReflect().Descriptor().FullName() == md.FullName() {
			return true
		}
	}
	return false
}

// setNonEmpty gives field fd of m a value Strip must keep.
func setNonEmpty(m protoreflect.Message, fd protoreflect.FieldDescriptor) {
	switch {
	case fd.IsList():
		l := m.Mutable(fd).List()
		l.Append(sampleValue(l.NewElement(), fd))
	case fd.IsMap():
		mp := m.Mutable(fd).Map()
		mp.Set(protoreflect.ValueOfString("k").MapKey(), sampleValue(mp.NewValue(), fd.MapValue()))
	case fd.Message() != nil:
		sub := m.Mutable(fd).Message()
		if hasStrip(fd.Message()) {
			// A strippable sub-message only survives if something in it is set.
			setNonEmpty(sub, sub.Descriptor().Fields().Get(0))
		}
	default:
		m.Set(fd, sampleValue(protoreflect.Value{}, fd))
	}
}

// sampleValue returns a non-zero scalar for fd, or proto (a fresh element) for messages.
func sampleValue(proto protoreflect.Value, fd protoreflect.FieldDescriptor) protoreflect.Value {
	switch fd.Kind() {
	case protoreflect.StringKind:
		return protoreflect.ValueOfString("x")
	case protoreflect.BoolKind:
		return protoreflect.ValueOfBool(true)
	case protoreflect.EnumKind:
		return protoreflect.ValueOfEnum(1)
	case protoreflect.Int32Kind:
		return protoreflect.ValueOfInt32(1)
	case protoreflect.Int64Kind:
		return protoreflect.ValueOfInt64(1)
	case protoreflect.Uint32Kind:
		return protoreflect.ValueOfUint32(1)
	case protoreflect.Uint64Kind:
		return protoreflect.ValueOfUint64(1)
	case protoreflect.MessageKind:
		return proto
	}
	panic("unhandled kind " + fd.Kind().String())
}

// Every field of every strippable type must, when it is the only one set,
// keep the message alive; an empty message must strip to nil. This catches
// fields added to the proto but forgotten in strip.go.
func TestStripAccountsForEveryField(t *testing.T) {
	for _, proto := range strippableTypes {
		desc := proto.ProtoReflect().Descriptor()
		t.Run(string(desc.Name()), func(t *testing.T) {
			if _, isNil := callStrip(t, proto.ProtoReflect().New().Interface()); !isNil {
				t.Errorf("empty %s not stripped to nil", desc.Name())
			}
			fields := desc.Fields()
			for i := range fields.Len() {
				fd := fields.Get(i)
				m := proto.ProtoReflect().New()
				setNonEmpty(m, fd)
				if _, isNil := callStrip(t, m.Interface()); isNil {
					t.Errorf("%s with only %s set was stripped to nil", desc.Name(), fd.Name())
				}
			}
		})
	}
}

func TestStrip(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   any // a strippable message
		want any // expected result, typed nil for "stripped away"
	}{
		{
			name: "nil adjustment",
			in:   (*ContainerAdjustment)(nil),
			want: (*ContainerAdjustment)(nil),
		},
		{
			name: "adjustment with only empty parts",
			in: &ContainerAdjustment{
				Annotations: map[string]string{},
				Mounts:      []*Mount{},
				Env:         []*KeyValue{},
				Hooks:       &Hooks{Prestart: []*Hook{}},
				Linux: &LinuxContainerAdjustment{
					Devices:   []*LinuxDevice{},
					Resources: &LinuxResources{Memory: &LinuxMemory{}, Cpu: &LinuxCPU{}, Pids: &LinuxPids{}, Unified: map[string]string{}},
					Scheduler: &LinuxScheduler{Flags: []LinuxSchedulerFlag{}},
					Rdt:       &LinuxRdt{},
					Sysctl:    map[string]string{},
				},
				Args: []string{},
			},
			want: (*ContainerAdjustment)(nil),
		},
		{
			name: "adjustment keeps set leaves and drops empty siblings",
			in: &ContainerAdjustment{
				Annotations: map[string]string{"a": "b"},
				Mounts:      []*Mount{},
				Hooks:       &Hooks{},
				Linux: &LinuxContainerAdjustment{
					Resources: &LinuxResources{
						Memory: &LinuxMemory{Limit: &OptionalInt64{}},
						Cpu:    &LinuxCPU{},
					},
					IoPriority: &LinuxIOPriority{},
				},
			},
			want: &ContainerAdjustment{
				Annotations: map[string]string{"a": "b"},
				Linux: &LinuxContainerAdjustment{
					Resources: &LinuxResources{
						Memory: &LinuxMemory{Limit: &OptionalInt64{}},
					},
				},
			},
		},
		{
			name: "optional zero counts as set",
			in:   &LinuxContainerAdjustment{OomScoreAdj: &OptionalInt{}},
			want: &LinuxContainerAdjustment{OomScoreAdj: &OptionalInt{}},
		},
		{
			name: "rdt remove alone is kept",
			in:   &LinuxRdt{Remove: true},
			want: &LinuxRdt{Remove: true},
		},
		{
			name: "update with only an id is kept",
			in:   &ContainerUpdate{ContainerId: "c", Linux: &LinuxContainerUpdate{Resources: &LinuxResources{}}},
			want: &ContainerUpdate{ContainerId: "c"},
		},
		{
			name: "empty update",
			in:   &ContainerUpdate{Linux: &LinuxContainerUpdate{Resources: &LinuxResources{Cpu: &LinuxCPU{}}}},
			want: (*ContainerUpdate)(nil),
		},
		{
			name: "seccomp empty lists",
			in:   &LinuxSeccomp{DefaultAction: "SCMP_ACT_ALLOW", Architectures: []string{}, Syscalls: []*LinuxSyscall{}},
			want: &LinuxSeccomp{DefaultAction: "SCMP_ACT_ALLOW"},
		},
		{
			name: "memory policy default mode with nodes",
			in:   &LinuxMemoryPolicy{Nodes: "0", Flags: []MpolFlag{}},
			want: &LinuxMemoryPolicy{Nodes: "0"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := reflect.ValueOf(tc.in).MethodByName("Strip").Call(nil)[0].Interface()
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
}

// Builders create intermediate messages eagerly; Strip must make an
// adjustment built and then emptied again equal to a literal.
func TestStripAfterBuilders(t *testing.T) {
	a := &ContainerAdjustment{}
	a.SetLinuxCPUShares(512)
	a.AddHooks(&Hooks{})
	a.Linux.Resources.Memory = &LinuxMemory{}
	want := &ContainerAdjustment{
		Linux: &LinuxContainerAdjustment{
			Resources: &LinuxResources{Cpu: &LinuxCPU{Shares: &OptionalUInt64{Value: 512}}},
		},
	}
	if got := a.Strip(); !reflect.DeepEqual(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
}
