package api

import (
	"os"
	"reflect"
	"testing"
)

func ptr[T any](v T) *T { return &v }

func TestOptionalConstructors(t *testing.T) {
	type tc struct {
		name string
		got  any // what the constructor returned
		want any // expected Get() result; nil means the constructor must return nil
	}
	var (
		nilStr   *string
		nilInt   *int
		nilI32   *int32
		nilU32   *uint32
		nilI64   *int64
		nilU64   *uint64
		nilBool  *bool
		nilMode  *os.FileMode
		nilSlice *[]string
	)
	cases := []tc{
		{"String(value)", String("a").Get(), ptr("a")},
		{"String(empty)", String("").Get(), ptr("")},
		{"String(ptr)", String(ptr("b")).Get(), ptr("b")},
		{"String(nil ptr)", String(nilStr), nil},
		{"String(wrapper)", String(&OptionalString{Value: "c"}).Get(), ptr("c")},
		{"String(nil wrapper)", String((*OptionalString)(nil)), nil},
		{"String(wrong type)", String(1), nil},
		{"String(nil)", String(nil), nil},

		{"RepeatedString(value)", RepeatedString([]string{"x", "y"}).Get(), ptr([]string{"x", "y"})},
		{"RepeatedString(ptr)", RepeatedString(&[]string{"x"}).Get(), ptr([]string{"x"})},
		{"RepeatedString(nil ptr)", RepeatedString(nilSlice), nil},
		{"RepeatedString(wrapper)", RepeatedString(&OptionalRepeatedString{Value: []string{"z"}}).Get(), ptr([]string{"z"})},
		{"RepeatedString(wrong type)", RepeatedString("x"), nil},

		{"Int(value)", Int(-3).Get(), ptr(-3)},
		{"Int(ptr)", Int(ptr(4)).Get(), ptr(4)},
		{"Int(nil ptr)", Int(nilInt), nil},
		{"Int(wrapper)", Int(&OptionalInt{Value: 5}).Get(), ptr(5)},
		{"Int(nil wrapper)", Int((*OptionalInt)(nil)), nil},
		{"Int(int64)", Int(int64(1)), nil},

		{"Int32(value)", Int32(int32(-7)).Get(), ptr(int32(-7))},
		{"Int32(ptr)", Int32(ptr(int32(8))).Get(), ptr(int32(8))},
		{"Int32(nil ptr)", Int32(nilI32), nil},
		{"Int32(wrapper)", Int32(&OptionalInt32{Value: 9}).Get(), ptr(int32(9))},
		{"Int32(int)", Int32(1), nil},

		{"UInt32(value)", UInt32(uint32(7)).Get(), ptr(uint32(7))},
		{"UInt32(ptr)", UInt32(ptr(uint32(8))).Get(), ptr(uint32(8))},
		{"UInt32(nil ptr)", UInt32(nilU32), nil},
		{"UInt32(wrapper)", UInt32(&OptionalUInt32{Value: 9}).Get(), ptr(uint32(9))},
		{"UInt32(int)", UInt32(1), nil},

		{"Int64(int)", Int64(-1).Get(), ptr(int64(-1))},
		{"Int64(uint)", Int64(uint(2)).Get(), ptr(int64(2))},
		{"Int64(int64)", Int64(int64(3)).Get(), ptr(int64(3))},
		{"Int64(uint64)", Int64(uint64(4)).Get(), ptr(int64(4))},
		{"Int64(*int64)", Int64(ptr(int64(5))).Get(), ptr(int64(5))},
		{"Int64(*uint64)", Int64(ptr(uint64(6))).Get(), ptr(int64(6))},
		{"Int64(nil *int64)", Int64(nilI64), nil},
		{"Int64(nil *uint64)", Int64(nilU64), nil},
		{"Int64(wrapper)", Int64(&OptionalInt64{Value: 7}).Get(), ptr(int64(7))},
		{"Int64(nil wrapper)", Int64((*OptionalInt64)(nil)), nil},
		{"Int64(int32)", Int64(int32(1)), nil},

		{"UInt64(int)", UInt64(1).Get(), ptr(uint64(1))},
		{"UInt64(uint)", UInt64(uint(2)).Get(), ptr(uint64(2))},
		{"UInt64(int64)", UInt64(int64(3)).Get(), ptr(uint64(3))},
		{"UInt64(uint64)", UInt64(uint64(4)).Get(), ptr(uint64(4))},
		{"UInt64(*int64)", UInt64(ptr(int64(5))).Get(), ptr(uint64(5))},
		{"UInt64(*uint64)", UInt64(ptr(uint64(6))).Get(), ptr(uint64(6))},
		{"UInt64(nil *uint64)", UInt64(nilU64), nil},
		{"UInt64(wrapper)", UInt64(&OptionalUInt64{Value: 7}).Get(), ptr(uint64(7))},
		{"UInt64(nil wrapper)", UInt64((*OptionalUInt64)(nil)), nil},
		{"UInt64(uint32)", UInt64(uint32(1)), nil},

		{"Bool(false)", Bool(false).Get(), ptr(false)},
		{"Bool(ptr)", Bool(ptr(true)).Get(), ptr(true)},
		{"Bool(nil ptr)", Bool(nilBool), nil},
		{"Bool(wrapper)", Bool(&OptionalBool{Value: true}).Get(), ptr(true)},
		{"Bool(wrong type)", Bool(1), nil},

		{"FileMode(value)", FileMode(os.FileMode(0o644)).Get(), ptr(os.FileMode(0o644))},
		{"FileMode(ptr)", FileMode(ptr(os.FileMode(0o600))).Get(), ptr(os.FileMode(0o600))},
		{"FileMode(nil ptr)", FileMode(nilMode), nil},
		{"FileMode(uint32)", FileMode(uint32(0o755)).Get(), ptr(os.FileMode(0o755))},
		{"FileMode(wrapper)", FileMode(&OptionalFileMode{Value: 0o700}).Get(), ptr(os.FileMode(0o700))},
		{"FileMode(nil wrapper)", FileMode((*OptionalFileMode)(nil)), nil},
		{"FileMode(int)", FileMode(0o644), nil},
	}
	for _, c := range cases {
		if c.want == nil {
			if v := reflect.ValueOf(c.got); v.IsValid() && !v.IsNil() {
				t.Errorf("%s = %v, want nil", c.name, c.got)
			}
			continue
		}
		if !reflect.DeepEqual(c.got, c.want) {
			t.Errorf("%s: Get() = %#v, want %#v", c.name, reflect.ValueOf(c.got).Elem(), reflect.ValueOf(c.want).Elem())
		}
	}
}

func TestOptionalGetOnNil(t *testing.T) {
	for name, got := range map[string]any{
		"String":         (*OptionalString)(nil).Get(),
		"RepeatedString": (*OptionalRepeatedString)(nil).Get(),
		"Int":            (*OptionalInt)(nil).Get(),
		"Int32":          (*OptionalInt32)(nil).Get(),
		"UInt32":         (*OptionalUInt32)(nil).Get(),
		"Int64":          (*OptionalInt64)(nil).Get(),
		"UInt64":         (*OptionalUInt64)(nil).Get(),
		"Bool":           (*OptionalBool)(nil).Get(),
		"FileMode":       (*OptionalFileMode)(nil).Get(),
	} {
		if !reflect.ValueOf(got).IsNil() {
			t.Errorf("(*Optional%s)(nil).Get() = %v, want nil", name, got)
		}
	}
}

// Wrappers must not alias their inputs or their outputs: messages are shared
// between plugins' adjustments and the runtime's state.
func TestOptionalDoesNotAlias(t *testing.T) {
	in := []string{"a", "b"}
	o := RepeatedString(in)
	in[0] = "changed"
	if o.Value[0] != "a" {
		t.Errorf("RepeatedString aliases its input")
	}
	got := o.Get()
	(*got)[1] = "changed"
	if o.Value[1] != "b" {
		t.Errorf("RepeatedString.Get aliases the wrapper")
	}

	w := &OptionalInt64{Value: 1}
	c := Int64(w)
	c.Value = 2
	if w.Value != 1 {
		t.Errorf("Int64(wrapper) returned the same wrapper")
	}
	p := w.Get()
	*p = 3
	if w.Value != 1 {
		t.Errorf("OptionalInt64.Get aliases the wrapper")
	}
}
