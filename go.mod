module github.com/nri-handover/nri

go 1.26

require (
	github.com/containerd/ttrpc v1.2.7
	google.golang.org/protobuf v1.36.10
)

require (
	github.com/containerd/log v0.1.0 // indirect
	github.com/sirupsen/logrus v1.9.4 // indirect
	github.com/stretchr/testify v1.12.1 // indirect
	golang.org/x/sys v0.39.0 // indirect
	google.golang.org/genproto/googleapis/rpc v0.0.0-20240528184218-531527333157 // indirect
	google.golang.org/grpc v1.65.1 // indirect
)

tool (
	github.com/containerd/ttrpc/cmd/protoc-gen-go-ttrpc
	google.golang.org/protobuf/cmd/protoc-gen-go
)
