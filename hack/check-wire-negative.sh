#!/usr/bin/env bash
# check-wire-negative.sh
#
# Proves the wire gate can fail: each case below makes one wire-breaking edit
# to a temporary copy of proto/ and expects hack/check-wire.sh to reject it,
# naming the right culprit. The real proto/ is never touched. Exits non-zero
# if any broken copy passes, or fails for some other reason than the edit.
set -euo pipefail

cd "$(dirname "$0")/.."
# shellcheck source=expect-rejection.sh
. hack/expect-rejection.sh

# name | line to find (must match exactly one line) | replacement | what the
# failure output must contain
cases=(
	"renumbered field|  string plugin_idx = 2;|  string plugin_idx = 12;|RegisterPluginRequest"
	"retyped field|  string NRI_version = 3;|  int64 NRI_version = 3;|NRI_version"
	"removed rpc|  rpc Shutdown(ShutdownRequest) returns (Empty);||Shutdown"
	"unrelated request type|  rpc UpdateContainers(UpdateContainersRequest) returns (UpdateContainersResponse);|  rpc UpdateContainers(LogRequest) returns (UpdateContainersResponse);|rpccheck: FAIL nri.pkg.api.v1alpha1.Runtime.UpdateContainers request"
	"addition with upstream's next number|  string plugin_version = 1000;|  string plugin_version = 4;|field 4 (plugin_version) of nri.pkg.api.v1alpha1.RegisterPluginRequest is added to nri.pkg.api.v1alpha1.RegisterPluginRequest outside 1000-1099"
	"replaced Empty numbered from 1|  string NRI_version = 1000;|  string NRI_version = 1;|field 1 (NRI_version) of nri.pkg.api.v1alpha1.RegisterPluginResponse is added to nri.pkg.api.v1alpha1.Empty outside 1000-1099"
	"unrelated response type|  rpc UpdateContainers(UpdateContainersRequest) returns (UpdateContainersResponse);|  rpc UpdateContainers(UpdateContainersRequest) returns (RegisterPluginResponse);|rpccheck: FAIL nri.pkg.api.v1alpha1.Runtime.UpdateContainers response"
)

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

failures=0
for c in "${cases[@]}"; do
	IFS='|' read -r name from to want <<<"$c"
	rm -rf "$work/proto"
	cp -r proto "$work/proto"

	matches=$(grep -cxF -- "$from" "$work/proto/api.proto" || true)
	if [[ "$matches" != 1 ]]; then
		echo "negative: $name: expected exactly one line '$from' in proto/api.proto, found $matches; update this case" >&2
		failures=$((failures + 1))
		continue
	fi
	FROM="$from" TO="$to" awk '$0 == ENVIRON["FROM"] { print ENVIRON["TO"]; next } { print }' \
		proto/api.proto >"$work/proto/api.proto"

	expect_rejection negative "$name" "$want" hack/check-wire.sh "$work/proto" || failures=$((failures + 1))
done

if ((failures > 0)); then
	echo "negative: $failures case(s) did not behave" >&2
	exit 1
fi
echo "negative: all ${#cases[@]} wire-breaking edits were rejected"
# The count the documents quote (hack/figures); rewritten by every run.
printf '# make check-wire: rewritten by every run, read by hack/figures; do not edit\nreproduced-by make check-wire\nbreaking-edits-rejected %d\n' \
	"${#cases[@]}" >"$(cd "$(dirname "$0")/.." && pwd)/docs/results/check-wire.txt"
