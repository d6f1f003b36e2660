package api

import (
	"testing"

	rspec "github.com/opencontainers/runtime-spec/specs-go"
	"google.golang.org/protobuf/proto"
)

func TestFromOCILinuxNamespaces(t *testing.T) {
	for _, tc := range []struct {
		in   []rspec.LinuxNamespace
		want []*LinuxNamespace
	}{
		{nil, nil},
		{[]rspec.LinuxNamespace{}, nil},
		{
			[]rspec.LinuxNamespace{{Type: rspec.NetworkNamespace, Path: "/proc/1/ns/net"}, {Type: rspec.PIDNamespace}},
			[]*LinuxNamespace{{Type: "network", Path: "/proc/1/ns/net"}, {Type: "pid"}},
		},
	} {
		got := FromOCILinuxNamespaces(tc.in)
		if (got == nil) != (tc.want == nil) || len(got) != len(tc.want) {
			t.Errorf("FromOCILinuxNamespaces(%v) = %v, want %v", tc.in, got, tc.want)
			continue
		}
		for i := range got {
			if !proto.Equal(got[i], tc.want[i]) {
				t.Errorf("[%d] = %v, want %v", i, got[i], tc.want[i])
			}
		}
	}
}
