module github.com/nri-handover/nri

go 1.24.0

require (
	github.com/containerd/nri v0.12.5
	github.com/containerd/ttrpc v1.2.8
	github.com/onsi/ginkgo/v2 v2.28.2
	github.com/onsi/gomega v1.42.0
	github.com/opencontainers/runtime-spec v1.3.0
	github.com/sirupsen/logrus v1.9.4
	go.uber.org/goleak v1.3.0
	go.yaml.in/yaml/v3 v3.0.5
	golang.org/x/mod v0.33.0
	golang.org/x/sys v0.41.0
	golang.org/x/tools v0.42.0
	google.golang.org/grpc v1.69.2
	google.golang.org/protobuf v1.36.10
)

require (
	github.com/Masterminds/semver/v3 v3.4.0 // indirect
	github.com/containerd/log v0.1.0 // indirect
	github.com/go-logr/logr v1.4.3 // indirect
	github.com/go-task/slim-sprig/v3 v3.0.0 // indirect
	github.com/google/go-cmp v0.7.0 // indirect
	github.com/google/pprof v0.0.0-20260402051712-545e8a4df936 // indirect
	github.com/knqyf263/go-plugin v0.9.0 // indirect
	github.com/moby/sys/mountinfo v0.7.2 // indirect
	github.com/tetratelabs/wazero v1.11.0 // indirect
	golang.org/x/net v0.50.0 // indirect
	golang.org/x/sync v0.19.0 // indirect
	golang.org/x/text v0.34.0 // indirect
	google.golang.org/genproto/googleapis/rpc v0.0.0-20241021214115-324edc3d5d38 // indirect
)

tool (
	github.com/containerd/ttrpc/cmd/protoc-gen-go-ttrpc
	google.golang.org/protobuf/cmd/protoc-gen-go
)
