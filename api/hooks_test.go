package api

import (
	"reflect"
	"testing"

	rspec "github.com/opencontainers/runtime-spec/specs-go"
	"google.golang.org/protobuf/proto"
)

func TestHooksAppend(t *testing.T) {
	a, b := &Hook{Path: "/a"}, &Hook{Path: "/b"}
	for _, tc := range []struct {
		name      string
		base, add *Hooks
		want      *Hooks
	}{
		{"nil addition", &Hooks{Prestart: []*Hook{a}}, nil, &Hooks{Prestart: []*Hook{a}}},
		{"every stage", &Hooks{Prestart: []*Hook{a}},
			&Hooks{Prestart: []*Hook{b}, CreateRuntime: []*Hook{b}, CreateContainer: []*Hook{b},
				StartContainer: []*Hook{b}, Poststart: []*Hook{b}, Poststop: []*Hook{b}},
			&Hooks{Prestart: []*Hook{a, b}, CreateRuntime: []*Hook{b}, CreateContainer: []*Hook{b},
				StartContainer: []*Hook{b}, Poststart: []*Hook{b}, Poststop: []*Hook{b}}},
	} {
		got := tc.base.Append(tc.add)
		if got != tc.base || !proto.Equal(got, tc.want) {
			t.Errorf("%s: got %v, want %v (returned receiver: %v)", tc.name, got, tc.want, got == tc.base)
		}
	}
}

func TestHooksHooks(t *testing.T) {
	h := &Hook{Path: "/h"}
	for _, tc := range []struct {
		name  string
		hooks *Hooks
		keep  bool
	}{
		{"nil", nil, false},
		{"empty", &Hooks{}, false},
		{"empty lists", &Hooks{Prestart: []*Hook{}, Poststop: []*Hook{}}, false},
		{"prestart", &Hooks{Prestart: []*Hook{h}}, true},
		{"createRuntime", &Hooks{CreateRuntime: []*Hook{h}}, true},
		{"createContainer", &Hooks{CreateContainer: []*Hook{h}}, true},
		{"startContainer", &Hooks{StartContainer: []*Hook{h}}, true},
		{"poststart", &Hooks{Poststart: []*Hook{h}}, true},
		{"poststop", &Hooks{Poststop: []*Hook{h}}, true},
	} {
		got := tc.hooks.Hooks()
		if (got != nil) != tc.keep || (got != nil && got != tc.hooks) {
			t.Errorf("%s: Hooks() = %v, want keep=%v", tc.name, got, tc.keep)
		}
	}
}

func TestHooksOCIConversion(t *testing.T) {
	timeout := 5
	oci := &rspec.Hooks{
		Prestart:        []rspec.Hook{{Path: "/p", Args: []string{"p", "1"}, Env: []string{"A=1"}, Timeout: &timeout}},
		CreateRuntime:   []rspec.Hook{{Path: "/cr"}},
		CreateContainer: []rspec.Hook{{Path: "/cc"}},
		StartContainer:  []rspec.Hook{{Path: "/sc"}},
		Poststart:       []rspec.Hook{{Path: "/ps"}},
		Poststop:        []rspec.Hook{{Path: "/pst"}, {Path: "/pst2"}},
	}
	want := &Hooks{
		Prestart:        []*Hook{{Path: "/p", Args: []string{"p", "1"}, Env: []string{"A=1"}, Timeout: &OptionalInt{Value: 5}}},
		CreateRuntime:   []*Hook{{Path: "/cr"}},
		CreateContainer: []*Hook{{Path: "/cc"}},
		StartContainer:  []*Hook{{Path: "/sc"}},
		Poststart:       []*Hook{{Path: "/ps"}},
		Poststop:        []*Hook{{Path: "/pst"}, {Path: "/pst2"}},
	}
	got := FromOCIHooks(oci)
	if !proto.Equal(got, want) {
		t.Fatalf("FromOCIHooks = %v, want %v", got, want)
	}
	if FromOCIHooks(nil) != nil || FromOCIHookSlice(nil) != nil {
		t.Error("nil input should give nil")
	}
	if back := got.Prestart[0].ToOCI(); !reflect.DeepEqual(back, oci.Prestart[0]) {
		t.Errorf("ToOCI = %+v, want %+v", back, oci.Prestart[0])
	}
	if back := got.Poststop[0].ToOCI(); back.Timeout != nil || back.Args != nil {
		t.Errorf("ToOCI of a bare hook = %+v", back)
	}
	oci.Prestart[0].Args[0] = "changed"
	if got.Prestart[0].Args[0] != "p" {
		t.Error("FromOCIHooks aliases hook args")
	}
}
