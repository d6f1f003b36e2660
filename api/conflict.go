package api

import (
	"fmt"
	"os"

	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
)

// upstreamLinked is evaluated before any init function of this package, so
// before api.pb.go registers our protobuf names. When upstream's
// github.com/containerd/nri/pkg/api is linked too, it has registered the same
// names already (packages initialise in import path order) and our
// registration would panic with a protobuf name conflict that does not say
// what to do: the usual cause is a plugin that imports this module's
// pkg/stub and upstream's pkg/api. Say how to fix it instead.
var upstreamLinked = checkUpstreamLinked()

// conflictEnvVar set to "warn" keeps the process going after reporting the
// conflict, as protobuf's own GOLANG_PROTOBUF_REGISTRATION_CONFLICT=warn
// does; protobuf then decides what happens to the duplicate registration.
const conflictEnvVar = "GOLANG_PROTOBUF_REGISTRATION_CONFLICT"

// protoPackage is the protobuf package of NRI's API, upstream's and ours.
const protoPackage = protoreflect.FullName("nri.pkg.api.v1alpha1")

func checkUpstreamLinked() bool {
	var other protoreflect.FileDescriptor
	protoregistry.GlobalFiles.RangeFilesByPackage(protoPackage, func(f protoreflect.FileDescriptor) bool {
		other = f
		return false
	})
	if other == nil {
		return false
	}
	fmt.Fprintf(os.Stderr, `nri: this binary links two NRI APIs: github.com/nri-handover/nri/api and the one that registered %s (file %s), upstream's github.com/containerd/nri/pkg/api; they register the same protobuf names and cannot run in one process.
A plugin that imports github.com/containerd/nri/... points that module at the stand-in in its go.mod:
	replace github.com/containerd/nri => /path/to/nri-handover/containerd-nri
	replace github.com/nri-handover/nri => /path/to/nri-handover
and imports only github.com/containerd/nri/... (nri-handover's README, "For plugin authors"); go run github.com/nri-handover/nri/cmd/nri-depcheck ./... shows which package brings in the other API.
`, protoPackage, other.Path())
	if os.Getenv(conflictEnvVar) != "warn" {
		os.Exit(2)
	}
	return true
}
