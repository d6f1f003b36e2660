#!/usr/bin/env bash
# check-generate-negative.sh
#
# Proves `make verify-generate` (hack/verify-generate.sh) can fail: on
# temporary copies of proto/ and api/, an untouched copy must pass (so the
# failures below come from the edits) and each edit below must be rejected,
# naming the culprit. The real proto/ and api/ are never touched.
#
# Needs BUF and the plugins proto/buf.gen.yaml names, like verify-generate.
set -euo pipefail

cd "$(dirname "$0")/.."
# shellcheck source=expect-rejection.sh
. hack/expect-rejection.sh
: "${BUF:?BUF must point at the buf binary}"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

fresh_copy() {
	rm -rf "$work/proto" "$work/api"
	mkdir -p "$work/api"
	cp -r proto "$work/proto"
	cp api/*.pb.go "$work/api/"
}

# name | edit (a command run in $work) | what the failure output must contain
cases=(
	"changed proto|sed -i 's/^message Empty {/message Empty {\n  string stale = 1;/' proto/api.proto|api/api.pb.go"
	"hand-edited generated file|sed -i 's/^package api$/package api \/\/ edited/' api/api_ttrpc.pb.go|api/api_ttrpc.pb.go"
	"missing generated file|rm api/api_ttrpc.pb.go|api/api_ttrpc.pb.go is missing"
	"hand-edited vtprotobuf file|sed -i 's/^func (m \*Empty) MarshalVT() /func (m *Empty) marshalVT() /' api/api_vtproto.pb.go|api/api_vtproto.pb.go"
	"left-over generated file|cp api/api.pb.go api/old.pb.go|api/old.pb.go is not generated"
)

failures=0
fresh_copy
if ! out=$(hack/verify-generate.sh "$work/proto" "$work/api" 2>&1); then
	echo "negative-generate: an unedited copy of proto/ and api/ FAILED verify-generate" >&2
	echo "$out" | sed 's/^/    /' >&2
	exit 1
fi

for c in "${cases[@]}"; do
	IFS='|' read -r name edit want <<<"$c"
	fresh_copy
	before=$(cat "$work"/proto/* "$work"/api/* | cksum)
	(cd "$work" && eval "$edit")
	if [[ "$(cat "$work"/proto/* "$work"/api/* | cksum)" == "$before" ]]; then
		echo "negative-generate: $name: the edit changed nothing; update this case" >&2
		failures=$((failures + 1))
	elif ! expect_rejection negative-generate "$name" "$want" hack/verify-generate.sh "$work/proto" "$work/api"; then
		failures=$((failures + 1))
	fi
done

if ((failures > 0)); then
	echo "negative-generate: $failures case(s) did not behave" >&2
	exit 1
fi
echo "negative-generate: all ${#cases[@]} stale states were rejected"
