# nri-handover: generate, check, test, bench, demo.
GO      ?= go
BIN     := $(CURDIR)/.bin
PROTOC  ?= protoc

.PHONY: all build generate verify-generate check-wire test test-unit test-integration vet bench soak demo tools clean

all: build

build:
	$(GO) build ./...

tools:
	@mkdir -p $(BIN)
	$(GO) build -o $(BIN)/protoc-gen-go google.golang.org/protobuf/cmd/protoc-gen-go
	$(GO) build -o $(BIN)/protoc-gen-go-ttrpc github.com/containerd/ttrpc/cmd/protoc-gen-go-ttrpc

# generate rewrites api/*.pb.go from proto/ with the tools pinned in go.mod and
# Debian's protoc.
generate: tools
	PATH=$(BIN):$$PATH $(PROTOC) -I proto \
		--go_out=api --go_opt=paths=source_relative \
		--go-ttrpc_out=api --go-ttrpc_opt=paths=source_relative \
		proto/api.proto

verify-generate: generate
	@git diff --exit-code -- api/ || { echo "api/ is stale: run 'make generate' and commit"; exit 1; }
	@test -z "$$(git status --porcelain -- api/)" || { git status --porcelain -- api/; echo "untracked generated files"; exit 1; }

vet:
	$(GO) vet ./...

clean:
	rm -rf $(BIN)
