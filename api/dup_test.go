package api

import (
	"reflect"
	"testing"
)

func TestDupStringSlice(t *testing.T) {
	for _, in := range [][]string{nil, {}, {"a"}, {"a", "b", "c"}} {
		out := DupStringSlice(in)
		if (in == nil) != (out == nil) || !reflect.DeepEqual(append([]string{}, in...), append([]string{}, out...)) {
			t.Errorf("DupStringSlice(%#v) = %#v", in, out)
		}
		if len(in) > 0 {
			out[0] = "changed"
			if in[0] == "changed" {
				t.Errorf("DupStringSlice(%#v) aliases its input", in)
			}
		}
	}
}

func TestDupStringMap(t *testing.T) {
	for _, in := range []map[string]string{nil, {}, {"a": "1"}, {"a": "1", "b": "2"}} {
		out := DupStringMap(in)
		if (in == nil) != (out == nil) || len(in) != len(out) {
			t.Errorf("DupStringMap(%#v) = %#v", in, out)
			continue
		}
		for k, v := range in {
			if out[k] != v {
				t.Errorf("DupStringMap(%#v) = %#v", in, out)
			}
		}
		if out == nil {
			continue
		}
		out["new"] = "x"
		if _, ok := in["new"]; ok {
			t.Errorf("DupStringMap(%#v) aliases its input", in)
		}
	}
}
