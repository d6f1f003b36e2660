package api

import (
	"reflect"
	"testing"

	rspec "github.com/opencontainers/runtime-spec/specs-go"
	"google.golang.org/protobuf/proto"
)

func TestMountOCIConversion(t *testing.T) {
	oci := []rspec.Mount{
		{Destination: "/a", Type: "bind", Source: "/src", Options: []string{"rbind", "ro"}},
		{Destination: "/b", Type: "tmpfs", Source: "tmpfs"},
	}
	got := FromOCIMounts(oci)
	want := []*Mount{
		{Destination: "/a", Type: "bind", Source: "/src", Options: []string{"rbind", "ro"}},
		{Destination: "/b", Type: "tmpfs", Source: "tmpfs"},
	}
	if len(got) != len(want) {
		t.Fatalf("FromOCIMounts = %v", got)
	}
	for i := range got {
		if !proto.Equal(got[i], want[i]) {
			t.Errorf("[%d] = %v, want %v", i, got[i], want[i])
		}
		if back := got[i].ToOCI(nil); !reflect.DeepEqual(back, oci[i]) {
			t.Errorf("[%d] round trip = %+v, want %+v", i, back, oci[i])
		}
	}
	if FromOCIMounts(nil) != nil {
		t.Error("nil mounts should give nil")
	}
	oci[0].Options[0] = "changed"
	if got[0].Options[0] != "rbind" {
		t.Error("FromOCIMounts aliases options")
	}
}

func TestMountToOCIPropagation(t *testing.T) {
	for _, tc := range []struct {
		opts []string
		want string
	}{
		{nil, "unchanged"},
		{[]string{"ro", "nosuid"}, "unchanged"},
		{[]string{"rbind", "rshared"}, "rshared"},
		{[]string{"rslave", "ro"}, "rslave"},
		{[]string{"rprivate", "rshared"}, "rshared"},
		{[]string{"shared"}, "unchanged"},
	} {
		q := "unchanged"
		(&Mount{Options: tc.opts}).ToOCI(&q)
		if q != tc.want {
			t.Errorf("options %q: propagation %q, want %q", tc.opts, q, tc.want)
		}
	}
}

func TestMountCmp(t *testing.T) {
	base := &Mount{Destination: "/d", Type: "bind", Source: "/s", Options: []string{"ro", "rbind"}}
	for _, tc := range []struct {
		name  string
		other *Mount
		want  bool
	}{
		{"nil", nil, false},
		{"same", &Mount{Destination: "/d", Type: "bind", Source: "/s", Options: []string{"ro", "rbind"}}, true},
		{"options reordered", &Mount{Destination: "/d", Type: "bind", Source: "/s", Options: []string{"rbind", "ro"}}, true},
		{"different option", &Mount{Destination: "/d", Type: "bind", Source: "/s", Options: []string{"rw", "rbind"}}, false},
		{"fewer options", &Mount{Destination: "/d", Type: "bind", Source: "/s", Options: []string{"ro"}}, false},
		{"destination", &Mount{Destination: "/x", Type: "bind", Source: "/s", Options: []string{"ro", "rbind"}}, false},
		{"type", &Mount{Destination: "/d", Type: "tmpfs", Source: "/s", Options: []string{"ro", "rbind"}}, false},
		{"source", &Mount{Destination: "/d", Type: "bind", Source: "/x", Options: []string{"ro", "rbind"}}, false},
	} {
		if got := base.Cmp(tc.other); got != tc.want {
			t.Errorf("%s: Cmp = %v, want %v", tc.name, got, tc.want)
		}
	}
	if base.Options[0] != "ro" {
		t.Error("Cmp reordered the receiver's options")
	}
}
