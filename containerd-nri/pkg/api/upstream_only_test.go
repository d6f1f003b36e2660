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

func TestVTProtoErrorsAreDistinct(t *testing.T) {
	errs := []error{api.ErrInvalidLength, api.ErrIntOverflow, api.ErrUnexpectedEndOfGroup}
	for i, a := range errs {
		for j, b := range errs {
			if errors.Is(a, b) != (i == j) {
				t.Fatalf("errors.Is(%v, %v) = %v", a, b, i != j)
			}
		}
	}
}
