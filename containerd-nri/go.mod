module github.com/containerd/nri

go 1.24.0

require (
	github.com/containerd/ttrpc v1.2.8
	github.com/nri-handover/nri v0.0.0-00010101000000-000000000000
	github.com/opencontainers/runtime-spec v1.3.0
)

require (
	github.com/containerd/log v0.1.0 // indirect
	github.com/sirupsen/logrus v1.9.4 // indirect
	go.yaml.in/yaml/v3 v3.0.5 // indirect
	golang.org/x/mod v0.33.0 // indirect
	golang.org/x/sys v0.41.0 // indirect
	google.golang.org/genproto/googleapis/rpc v0.0.0-20241021214115-324edc3d5d38 // indirect
	google.golang.org/grpc v1.69.2 // indirect
	google.golang.org/protobuf v1.36.10 // indirect
)

replace github.com/nri-handover/nri => ..
