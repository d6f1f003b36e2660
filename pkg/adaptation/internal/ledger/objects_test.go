package ledger

import (
	"fmt"
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/nri-handover/nri/api"
)

// TestObjectsCoverEveryField: the ledger's copies and comparisons of pods
// and containers (objects.go) agree with proto.Clone and proto.Equal on
// every field of both messages, nested ones included, and a copy shares
// nothing mutable with its original. A field added to either message and
// not handled there fails here.
func TestObjectsCoverEveryField(t *testing.T) {
	check := func(t *testing.T, base proto.Message, reusing func(m, prev proto.Message) proto.Message, same func(a, b proto.Message) bool) {
		clone := func(m proto.Message) proto.Message { return reusing(m, nil) }
		populate(base.ProtoReflect(), 1, 3)
		fields := base.ProtoReflect().Descriptor().Fields()
		for i := 0; i < fields.Len(); i++ {
			if !base.ProtoReflect().Has(fields.Get(i)) {
				t.Fatalf("populate left %s unset", fields.Get(i).Name())
			}
		}
		orig := proto.Clone(base)
		c := clone(base)
		if !proto.Equal(c, base) {
			t.Fatalf("copy differs from its original:\n%v\n%v", c, base)
		}
		if !same(c, base) || !same(base, orig) {
			t.Fatal("a copy compares as different")
		}
		for i := 0; i < fields.Len(); i++ {
			fd := fields.Get(i)
			t.Run(string(fd.Name()), func(t *testing.T) {
				changed := proto.Clone(base)
				change(changed.ProtoReflect(), fd)
				if proto.Equal(changed, base) {
					t.Fatal("test bug: the change changes nothing")
				}
				if same(changed, base) || same(base, changed) {
					t.Errorf("a change of %s compares as equal", fd.Name())
				}
				cleared := proto.Clone(base)
				cleared.ProtoReflect().Clear(fd)
				if same(cleared, base) {
					t.Errorf("clearing %s compares as equal", fd.Name())
				}
				if got := clone(cleared); !proto.Equal(got, cleared) {
					t.Errorf("copy without %s differs from its original", fd.Name())
				}
				// changing the copy leaves the original alone
				mine := clone(base)
				change(mine.ProtoReflect(), fd)
				if !proto.Equal(base, orig) {
					t.Errorf("changing %s in a copy changed the original", fd.Name())
				}
				// a copy reusing an equal predecessor's parts is the
				// object, whichever field differs, and shares nothing with
				// the object it copies
				for _, prev := range []proto.Message{base, changed, cleared} {
					src := proto.Clone(changed)
					got := reusing(src, prev)
					if !proto.Equal(got, changed) {
						t.Errorf("copy of an object with %s changed, reusing another, differs from it", fd.Name())
					}
					kept := proto.Clone(got)
					scribble(src.ProtoReflect())
					change(src.ProtoReflect(), fd)
					if !proto.Equal(got, kept) {
						t.Errorf("changing the object after copying it changed the copy (%s)", fd.Name())
					}
				}
			})
		}
		withUnknown := proto.Clone(base)
		withUnknown.ProtoReflect().SetUnknown(protoreflect.RawFields{0xf8, 0x3f, 0x01}) // field 1023, varint 1
		if same(withUnknown, base) {
			t.Error("unknown fields compare as equal")
		}
		if got := clone(withUnknown); !proto.Equal(got, withUnknown) {
			t.Error("copy lost unknown fields")
		}
	}
	t.Run("pod", func(t *testing.T) {
		check(t, &api.PodSandbox{},
			func(m, prev proto.Message) proto.Message {
				p, _ := prev.(*api.PodSandbox)
				return clonePodReusing(m.(*api.PodSandbox), p)
			},
			func(a, b proto.Message) bool { return samePod(a.(*api.PodSandbox), b.(*api.PodSandbox)) })
	})
	t.Run("container", func(t *testing.T) {
		check(t, &api.Container{},
			func(m, prev proto.Message) proto.Message {
				c, _ := prev.(*api.Container)
				return cloneContainerReusing(m.(*api.Container), c)
			},
			func(a, b proto.Message) bool { return sameContainer(a.(*api.Container), b.(*api.Container)) })
	})
	t.Run("container recycled", func(t *testing.T) {
		check(t, &api.Container{},
			func(m, prev proto.Message) proto.Message {
				c, _ := prev.(*api.Container)
				return recycleContainer(m.(*api.Container), CloneContainer(c))
			},
			func(a, b proto.Message) bool { return sameContainer(a.(*api.Container), b.(*api.Container)) })
	})
	// the nested messages copied and compared by hand
	nested := []struct {
		base    proto.Message
		reusing func(m, prev proto.Message) proto.Message
		same    func(a, b proto.Message) bool
	}{
		typed(&api.LinuxContainer{}, func(m, prev *api.LinuxContainer) *api.LinuxContainer {
			return reuseBy(m, prev, sameLinux, cloneLinux)
		}, sameLinux),
		typed(&api.LinuxResources{}, func(m, prev *api.LinuxResources) *api.LinuxResources {
			return reuseBy(m, prev, sameResources, cloneResources)
		}, sameResources),
		typed(&api.LinuxMemory{}, cloneMemory, sameMemory),
		typed(&api.LinuxCPU{}, cloneCPU, sameCPU),
		typed(&api.LinuxNamespace{}, cloneNamespace, sameNamespace),
		typed(&api.Hooks{}, cloneHooks, sameHooks),
		typed(&api.Hook{}, cloneHook, sameHook),
		typed(&api.OptionalInt{}, cloneOptInt, sameOptInt),
		typed(&api.OptionalInt64{}, func(m, _ *api.OptionalInt64) *api.OptionalInt64 { return cloneOptInt64(m) }, sameOptInt64),
		typed(&api.OptionalUInt64{}, func(m, _ *api.OptionalUInt64) *api.OptionalUInt64 { return cloneOptUInt64(m) }, sameOptUInt64),
		typed(&api.OptionalBool{}, func(m, _ *api.OptionalBool) *api.OptionalBool { return cloneOptBool(m) }, sameOptBool),
		typed(&api.OptionalString{}, cloneOptString, sameOptString),
	}
	for _, n := range nested {
		t.Run(string(n.base.ProtoReflect().Descriptor().Name()), func(t *testing.T) {
			check(t, n.base, n.reusing, n.same)
		})
	}
}

// typed adapts a copy and a comparison of message type T to the
// proto.Message ones TestObjectsCoverEveryField checks.
func typed[T proto.Message](base T, reusing func(m, prev T) T, same func(a, b T) bool) struct {
	base    proto.Message
	reusing func(m, prev proto.Message) proto.Message
	same    func(a, b proto.Message) bool
} {
	return struct {
		base    proto.Message
		reusing func(m, prev proto.Message) proto.Message
		same    func(a, b proto.Message) bool
	}{
		base: base,
		reusing: func(m, prev proto.Message) proto.Message {
			p, _ := prev.(T)
			return reusing(m.(T), p)
		},
		same: func(a, b proto.Message) bool { return same(a.(T), b.(T)) },
	}
}

// TestObjectsUnsetAndEmpty: unset and empty fields copy and compare as
// proto.Clone and proto.Equal treat them.
func TestObjectsUnsetAndEmpty(t *testing.T) {
	if CloneContainer(nil) != nil || clonePod(nil) != nil {
		t.Error("a nil object copies as non-nil")
	}
	if !sameContainer(nil, nil) || sameContainer(nil, &api.Container{}) || samePod(&api.PodSandbox{}, nil) {
		t.Error("nil objects compare wrong")
	}
	empty := &api.Container{Labels: map[string]string{}, Args: []string{}, Mounts: []*api.Mount{}}
	if !sameContainer(empty, &api.Container{}) {
		t.Error("empty and unset repeated fields compare as different")
	}
	if c := CloneContainer(empty); c.Labels != nil || c.Args != nil || c.Mounts != nil {
		t.Errorf("empty fields copied as set, unlike proto.Clone: %#v", c)
	}
	if sameContainer(&api.Container{Linux: &api.LinuxContainer{}}, &api.Container{}) {
		t.Error("an empty nested message compares as unset")
	}
	withNil := &api.Container{Mounts: []*api.Mount{nil}}
	if got, want := CloneContainer(withNil), proto.Clone(withNil).(*api.Container); !proto.Equal(got, want) || got.Mounts[0] == nil {
		t.Errorf("a nil mount copies as %v, proto.Clone as %v", got.Mounts, want.Mounts)
	}
}

// populate sets every field of m, nested messages to depth, from v.
func populate(m protoreflect.Message, v, depth int) {
	fields := m.Descriptor().Fields()
	for i := 0; i < fields.Len(); i++ {
		fd := fields.Get(i)
		if fd.ContainingOneof() != nil && m.WhichOneof(fd.ContainingOneof()) != nil {
			continue
		}
		switch {
		case fd.IsMap():
			mp := m.Mutable(fd).Map()
			mp.Set(scalar(fd.MapKey(), v).MapKey(), elem(mp.NewValue, fd.MapValue(), v, depth))
		case fd.IsList():
			l := m.Mutable(fd).List()
			l.Append(elem(l.NewElement, fd, v, depth))
		case fd.Message() != nil:
			if depth > 0 {
				populate(m.Mutable(fd).Message(), v, depth-1)
			} else {
				m.Mutable(fd)
			}
		default:
			m.Set(fd, scalar(fd, v))
		}
	}
}

// scribble overwrites, in place, every value populate set in m: a copy
// that shares a map, list or nested message with m sees it.
func scribble(m protoreflect.Message) {
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		switch {
		case fd.IsMap():
			mp := v.Map()
			mp.Range(func(k protoreflect.MapKey, mv protoreflect.Value) bool {
				if fd.MapValue().Message() != nil {
					scribble(mv.Message())
				} else {
					mp.Set(k, scalar(fd.MapValue(), 9))
				}
				return true
			})
		case fd.IsList():
			l := v.List()
			for i := 0; i < l.Len(); i++ {
				if fd.Message() != nil {
					scribble(l.Get(i).Message())
				} else {
					l.Set(i, scalar(fd, 9))
				}
			}
		case fd.Message() != nil:
			scribble(v.Message())
		default:
			m.Set(fd, scalar(fd, 9))
		}
		return true
	})
}

// change alters fd of m, which populate set.
func change(m protoreflect.Message, fd protoreflect.FieldDescriptor) {
	switch {
	case fd.IsMap():
		mp := m.Mutable(fd).Map()
		mp.Set(scalar(fd.MapKey(), 2).MapKey(), elem(mp.NewValue, fd.MapValue(), 2, 1))
	case fd.IsList():
		l := m.Mutable(fd).List()
		if fd.Message() != nil {
			populate(l.Get(0).Message(), 2, 1)
			return
		}
		l.Append(scalar(fd, 2))
	case fd.Message() != nil:
		populate(m.Mutable(fd).Message(), 2, 1)
	default:
		m.Set(fd, scalar(fd, 2))
	}
}

func elem(fresh func() protoreflect.Value, fd protoreflect.FieldDescriptor, v, depth int) protoreflect.Value {
	if fd.Message() == nil {
		return scalar(fd, v)
	}
	e := fresh()
	if depth > 0 {
		populate(e.Message(), v, depth-1)
	}
	return e
}

func scalar(fd protoreflect.FieldDescriptor, v int) protoreflect.Value {
	switch fd.Kind() {
	case protoreflect.BoolKind:
		return protoreflect.ValueOfBool(v%2 == 1)
	case protoreflect.EnumKind:
		return protoreflect.ValueOfEnum(protoreflect.EnumNumber(v))
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind:
		return protoreflect.ValueOfInt32(int32(v))
	case protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind:
		return protoreflect.ValueOfInt64(int64(v))
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind:
		return protoreflect.ValueOfUint32(uint32(v))
	case protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		return protoreflect.ValueOfUint64(uint64(v))
	case protoreflect.FloatKind:
		return protoreflect.ValueOfFloat32(float32(v))
	case protoreflect.DoubleKind:
		return protoreflect.ValueOfFloat64(float64(v))
	case protoreflect.StringKind:
		return protoreflect.ValueOfString(fmt.Sprint("s", v))
	case protoreflect.BytesKind:
		return protoreflect.ValueOfBytes([]byte{byte(v)})
	}
	panic(fmt.Sprintf("no value for %s", fd.Kind()))
}
