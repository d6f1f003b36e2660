#!/usr/bin/env bash
# check-wire.sh [PROTO_DIR]
#
# The wire-compatibility gate: lints PROTO_DIR (default: proto) and compares
# it with upstream containerd/nri's pkg/api/api.proto at the version go.mod
# pins, with buf's breaking rules (proto/buf.yaml) and hack/rpccheck for the
# RPC signature rules buf's config switches off and for the numbers of our
# added fields (1000-1099, see proto/api.proto). Exits non-zero on any finding.
#
# Needs BUF and RPCCHECK (paths to the binaries; `make check-wire` builds
# them). Upstream's file is read from the Go module cache and copied only
# into a temporary directory.
set -euo pipefail

cd "$(dirname "$0")/.."
proto_dir=${1:-proto}
: "${BUF:?BUF must point at the buf binary}"
: "${RPCCHECK:?RPCCHECK must point at the rpccheck binary}"

upstream_module=github.com/containerd/nri
upstream_version=$(go list -m -f '{{.Version}}' "$upstream_module")
if [[ "$upstream_version" != v0.12.5 ]]; then
	echo "check-wire: go.mod requires $upstream_module $upstream_version; the wire spec is v0.12.5" >&2
	exit 1
fi
upstream_dir=$(go mod download -json "$upstream_module@$upstream_version" |
	sed -n 's/^[[:space:]]*"Dir": "\(.*\)",\{0,1\}$/\1/p')
if [[ -z "$upstream_dir" || ! -f "$upstream_dir/pkg/api/api.proto" ]]; then
	echo "check-wire: cannot find pkg/api/api.proto of $upstream_module@$upstream_version in the module cache" >&2
	exit 1
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/upstream"
# Same relative path (api.proto) as ours, so buf pairs the two files.
cp "$upstream_dir/pkg/api/api.proto" "$work/upstream/api.proto"
chmod u+w "$work/upstream/api.proto"

echo "check-wire: buf lint $proto_dir"
"$BUF" lint "$proto_dir"

echo "check-wire: buf breaking $proto_dir against $upstream_module@$upstream_version pkg/api/api.proto"
"$BUF" breaking "$proto_dir" --against "$work/upstream"

echo "check-wire: rpccheck (RPC request/response types, numbers of added fields)"
"$BUF" build "$proto_dir" -o "$work/ours.binpb"
"$BUF" build "$work/upstream" -o "$work/upstream.binpb"
"$RPCCHECK" -old "$work/upstream.binpb" -new "$work/ours.binpb"

echo "check-wire: $proto_dir is wire-compatible with $upstream_module@$upstream_version"
