package api_test

import (
	"errors"
	"testing"

	"github.com/containerd/nri/pkg/api"
)

// Upstream's generator-only names, used the way a runtime or plugin might.
var (
	_ api.Plugin        = api.PluginService(nil)
	_ api.PluginService = api.Plugin(nil)
	_ api.HostFunctions = api.HostFunctionsService(nil)
	_ int               = api.PluginPluginAPIVersion
)

func TestProtoDescriptor(t *testing.T) {
	fd := api.File_pkg_api_api_proto
	if fd == nil {
		t.Fatal("File_pkg_api_api_proto is nil")
	}
	if got := fd.Package(); got != "nri.pkg.api.v1alpha1" {
		t.Fatalf("proto package %q, want upstream's nri.pkg.api.v1alpha1", got)
	}
	if fd.Messages().ByName("CreateContainerRequest") == nil || fd.Services().ByName("Plugin") == nil {
		t.Fatal("descriptor lacks the NRI protocol's messages or services")
	}
}

// TestVTProtoThroughTheStandIn: code written for upstream calls the
// vtprotobuf methods on the aliases and compares their errors with the
// stand-in's error values, which must be the ones our decoder returns.
func TestVTProtoThroughTheStandIn(t *testing.T) {
	in := &api.RegisterPluginRequest{PluginName: "p", PluginIdx: "10"}
	data, err := in.MarshalVT()
	if err != nil {
		t.Fatalf("MarshalVT: %v", err)
	}
	var out api.RegisterPluginRequest
	if err := out.UnmarshalVT(data); err != nil || out.PluginName != "p" || out.PluginIdx != "10" {
		t.Fatalf("UnmarshalVT: %v, %v", &out, err)
	}
	// Unknown field 1 of Empty, length-delimited, of length 2^63.
	negative := []byte{0x0a, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01}
	if err := (&api.Empty{}).UnmarshalVT(negative); !errors.Is(err, api.ErrInvalidLength) {
		t.Fatalf("UnmarshalVT of a negative length: %v, want api.ErrInvalidLength", err)
	}
	errs := []error{api.ErrInvalidLength, api.ErrIntOverflow, api.ErrUnexpectedEndOfGroup}
	for i, a := range errs {
		for j, b := range errs {
			if errors.Is(a, b) != (i == j) {
				t.Fatalf("errors.Is(%v, %v) = %v", a, b, i != j)
			}
		}
	}
}
