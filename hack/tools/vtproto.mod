// protoc-gen-go-vtproto (the MarshalVT/UnmarshalVT/SizeVT methods of
// api/api_vtproto.pb.go) is pinned in a file of its own, like buf (buf.mod):
// go.mod's graph selects vtprotobuf v0.6.1-... (through grpc), whose
// generated code imports vtprotobuf's runtime, and pinning v0.4.0 there
// downgrades ttrpc and grpc. v0.4.0 is the generator upstream containerd/nri
// v0.12.5 uses (through knqyf263/go-plugin); its output needs nothing but
// the standard library and google.golang.org/protobuf, so the api package
// gains no dependency. protobuf is go.mod's version, as protoc-gen-go's.
module github.com/nri-handover/nri

go 1.24.0

tool github.com/planetscale/vtprotobuf/cmd/protoc-gen-go-vtproto

require (
	github.com/planetscale/vtprotobuf v0.4.0
	google.golang.org/protobuf v1.36.10
)
