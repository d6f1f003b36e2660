package api

import (
	"testing"

	"google.golang.org/protobuf/proto"
)

func TestFromOCIEnv(t *testing.T) {
	for _, tc := range []struct {
		in   []string
		want []*KeyValue
	}{
		{nil, nil},
		{[]string{}, []*KeyValue{}},
		{[]string{"A=1"}, []*KeyValue{{Key: "A", Value: "1"}}},
		{[]string{"A=1=2", "B=", "C"}, []*KeyValue{{Key: "A", Value: "1=2"}, {Key: "B"}, {Key: "C"}}},
		{[]string{""}, []*KeyValue{{}}},
	} {
		got := FromOCIEnv(tc.in)
		if (got == nil) != (tc.want == nil) || len(got) != len(tc.want) {
			t.Errorf("FromOCIEnv(%q) = %v, want %v", tc.in, got, tc.want)
			continue
		}
		for i := range got {
			if !proto.Equal(got[i], tc.want[i]) {
				t.Errorf("FromOCIEnv(%q)[%d] = %v, want %v", tc.in, i, got[i], tc.want[i])
			}
		}
	}
}

func TestKeyValueToOCI(t *testing.T) {
	for _, tc := range []struct {
		kv   *KeyValue
		want string
	}{
		{&KeyValue{Key: "A", Value: "1"}, "A=1"},
		{&KeyValue{Key: "A"}, "A="},
		{&KeyValue{Key: "A", Value: "x=y"}, "A=x=y"},
	} {
		if got := tc.kv.ToOCI(); got != tc.want {
			t.Errorf("%v.ToOCI() = %q, want %q", tc.kv, got, tc.want)
		}
		if back := FromOCIEnv([]string{tc.kv.ToOCI()}); !proto.Equal(back[0], tc.kv) {
			t.Errorf("round trip of %v gave %v", tc.kv, back[0])
		}
	}
}
