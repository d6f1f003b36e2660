#!/usr/bin/env bash
# verify-generate.sh [PROTO_DIR [API_DIR]]
#
# Fails when the generated files in API_DIR (default: api) are not exactly
# what PROTO_DIR (default: proto) generates: a changed proto, a hand-edited,
# missing or left-over *.pb.go. It generates with PROTO_DIR/buf.gen.yaml into
# a temporary directory and compares, so it never touches API_DIR and does
# not depend on git. hack/check-generate-negative.sh proves that it fails.
#
# Needs BUF (the pinned buf binary) and the plugins buf.gen.yaml names
# (`make verify-generate` builds both). Runs from the repository root, where
# buf.gen.yaml's plugin paths point.
set -euo pipefail

cd "$(dirname "$0")/.."
proto_dir=${1:-proto}
api_dir=${2:-api}
: "${BUF:?BUF must point at the buf binary}"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# buf.gen.yaml's out is "api", so the fresh files land in $work/api.
"$BUF" generate "$proto_dir" --template "$proto_dir/buf.gen.yaml" -o "$work"
fresh=$work/api

pbfiles() { find "$1" -maxdepth 1 -name '*.pb.go' -printf '%f\n'; }

status=0
for f in $( (pbfiles "$fresh" && pbfiles "$api_dir") | sort -u); do
	if [[ ! -f "$api_dir/$f" ]]; then
		echo "verify-generate: $api_dir/$f is missing" >&2
		status=1
	elif [[ ! -f "$fresh/$f" ]]; then
		echo "verify-generate: $api_dir/$f is not generated from $proto_dir" >&2
		status=1
	elif ! diff -u --label "$api_dir/$f" --label "generated from $proto_dir" "$api_dir/$f" "$fresh/$f" >&2; then
		status=1
	fi
done
if ((status != 0)); then
	echo "verify-generate: $api_dir is stale: run 'make generate' and commit" >&2
fi
exit "$status"
