package api

import (
	"os"
	"slices"
)

// The Optional* messages give proto3 fields presence: a nil wrapper means
// "leave as is", a non-nil one means "set to Value", even when Value is zero.
// The constructors below take an untyped argument so callers can pass either a
// plain value, a pointer that may be nil (as in OCI spec structs), or another
// wrapper; anything else (including a nil pointer) yields nil, i.e. unset.

// wrapperOf is satisfied by *W for a generated Optional* message W whose
// payload is of type T.
type wrapperOf[T any, W any] interface {
	*W
	GetValue() T
}

// plainValue extracts a T from v when v is a T, a non-nil *T or a non-nil
// wrapper P. ok is false for any other input.
func plainValue[T any, W any, P wrapperOf[T, W]](v any) (value T, ok bool) {
	switch o := v.(type) {
	case T:
		return o, true
	case *T:
		if o != nil {
			return *o, true
		}
	case P:
		if o != nil {
			return o.GetValue(), true
		}
	}
	return value, false
}

// integerValue accepts the integer forms the 64-bit wrappers take on top of
// their own type: int, uint, int64, uint64 and non-nil *int64 / *uint64.
// Conversions wrap around like Go conversions do.
func integerValue[T int64 | uint64](v any) (T, bool) {
	switch o := v.(type) {
	case int:
		return T(o), true
	case uint:
		return T(o), true
	case int64:
		return T(o), true
	case uint64:
		return T(o), true
	case *int64:
		if o != nil {
			return T(*o), true
		}
	case *uint64:
		if o != nil {
			return T(*o), true
		}
	}
	return 0, false
}

// valueOrNil returns a pointer to a private copy of x, or nil when unset.
func valueOrNil[T any](x T, set bool) *T {
	if !set {
		return nil
	}
	return &x
}

// String wraps a string, *string or *OptionalString.
func String(v interface{}) *OptionalString {
	if x, ok := plainValue[string, OptionalString](v); ok {
		return &OptionalString{Value: x}
	}
	return nil
}

// Get returns a pointer to a copy of the value, or nil when unset.
func (o *OptionalString) Get() *string {
	return valueOrNil(o.GetValue(), o != nil)
}

// RepeatedString wraps a []string, *[]string or *OptionalRepeatedString. The
// slice is copied so later changes by the caller do not leak into a message.
func RepeatedString(v interface{}) *OptionalRepeatedString {
	if x, ok := plainValue[[]string, OptionalRepeatedString](v); ok {
		return &OptionalRepeatedString{Value: slices.Clone(x)}
	}
	return nil
}

// Get returns a pointer to a copy of the slice, or nil when unset.
func (o *OptionalRepeatedString) Get() *[]string {
	return valueOrNil(slices.Clone(o.GetValue()), o != nil)
}

// Int wraps an int, *int or *OptionalInt.
func Int(v interface{}) *OptionalInt {
	switch o := v.(type) {
	case int:
		return &OptionalInt{Value: int64(o)}
	case *int:
		if o != nil {
			return &OptionalInt{Value: int64(*o)}
		}
	case *OptionalInt:
		if o != nil {
			return &OptionalInt{Value: o.Value}
		}
	}
	return nil
}

// Get returns a pointer to a copy of the value as an int, or nil when unset.
func (o *OptionalInt) Get() *int {
	return valueOrNil(int(o.GetValue()), o != nil)
}

// Int32 wraps an int32, *int32 or *OptionalInt32.
func Int32(v interface{}) *OptionalInt32 {
	if x, ok := plainValue[int32, OptionalInt32](v); ok {
		return &OptionalInt32{Value: x}
	}
	return nil
}

// Get returns a pointer to a copy of the value, or nil when unset.
func (o *OptionalInt32) Get() *int32 {
	return valueOrNil(o.GetValue(), o != nil)
}

// UInt32 wraps a uint32, *uint32 or *OptionalUInt32.
func UInt32(v interface{}) *OptionalUInt32 {
	if x, ok := plainValue[uint32, OptionalUInt32](v); ok {
		return &OptionalUInt32{Value: x}
	}
	return nil
}

// Get returns a pointer to a copy of the value, or nil when unset.
func (o *OptionalUInt32) Get() *uint32 {
	return valueOrNil(o.GetValue(), o != nil)
}

// Int64 wraps an int, uint, int64, uint64, *int64, *uint64 or *OptionalInt64.
func Int64(v interface{}) *OptionalInt64 {
	if o, ok := v.(*OptionalInt64); ok {
		if o == nil {
			return nil
		}
		return &OptionalInt64{Value: o.Value}
	}
	if x, ok := integerValue[int64](v); ok {
		return &OptionalInt64{Value: x}
	}
	return nil
}

// Get returns a pointer to a copy of the value, or nil when unset.
func (o *OptionalInt64) Get() *int64 {
	return valueOrNil(o.GetValue(), o != nil)
}

// UInt64 wraps an int, uint, int64, uint64, *int64, *uint64 or *OptionalUInt64.
func UInt64(v interface{}) *OptionalUInt64 {
	if o, ok := v.(*OptionalUInt64); ok {
		if o == nil {
			return nil
		}
		return &OptionalUInt64{Value: o.Value}
	}
	if x, ok := integerValue[uint64](v); ok {
		return &OptionalUInt64{Value: x}
	}
	return nil
}

// Get returns a pointer to a copy of the value, or nil when unset.
func (o *OptionalUInt64) Get() *uint64 {
	return valueOrNil(o.GetValue(), o != nil)
}

// Bool wraps a bool, *bool or *OptionalBool.
func Bool(v interface{}) *OptionalBool {
	if x, ok := plainValue[bool, OptionalBool](v); ok {
		return &OptionalBool{Value: x}
	}
	return nil
}

// Get returns a pointer to a copy of the value, or nil when unset.
func (o *OptionalBool) Get() *bool {
	return valueOrNil(o.GetValue(), o != nil)
}

// FileMode wraps an os.FileMode, *os.FileMode, uint32 or *OptionalFileMode.
func FileMode(v interface{}) *OptionalFileMode {
	if x, ok := v.(uint32); ok {
		return &OptionalFileMode{Value: x}
	}
	if o, ok := v.(*OptionalFileMode); ok {
		if o == nil {
			return nil
		}
		return &OptionalFileMode{Value: o.Value}
	}
	switch o := v.(type) {
	case os.FileMode:
		return &OptionalFileMode{Value: uint32(o)}
	case *os.FileMode:
		if o != nil {
			return &OptionalFileMode{Value: uint32(*o)}
		}
	}
	return nil
}

// Get returns a pointer to the value as an os.FileMode, or nil when unset.
func (o *OptionalFileMode) Get() *os.FileMode {
	return valueOrNil(os.FileMode(o.GetValue()), o != nil)
}
