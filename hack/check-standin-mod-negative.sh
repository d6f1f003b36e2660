#!/usr/bin/env bash
# check-standin-mod-negative.sh
#
# Proves hack/check-standin-mod.sh can fail: on temporary copies of go.mod
# and containerd-nri/go.mod, untouched copies must pass (so the failures
# below come from the edits) and each edit below must be rejected, naming the
# culprit. The real go.mod files are never touched.
set -euo pipefail

cd "$(dirname "$0")/.."
# shellcheck source=expect-rejection.sh
. hack/expect-rejection.sh

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

fresh_copy() {
	cp go.mod "$work/main.mod"
	cp containerd-nri/go.mod "$work/standin.mod"
}

# name | edit (a command run in $work) | what the failure output must contain
cases=(
	"newer go directive in the stand-in|go mod edit -go=1.26 standin.mod|says 'go 1.26'"
	"toolchain line in the stand-in only|go mod edit -toolchain=go1.26.0 standin.mod|says 'toolchain go1.26.0'"
	"newer shared requirement in the stand-in|go mod edit -require=golang.org/x/sys@v0.46.0 standin.mod|requires golang.org/x/sys v0.46.0"
	"older shared requirement in the stand-in|go mod edit -require=github.com/containerd/ttrpc@v1.2.7 standin.mod|requires github.com/containerd/ttrpc v1.2.7"
	"main module moved on alone|go mod edit -require=google.golang.org/grpc@v1.70.0 main.mod|standin.mod requires google.golang.org/grpc v1.69.2, $work/main.mod requires v1.70.0"
)

failures=0
fresh_copy
if ! out=$(hack/check-standin-mod.sh "$work/main.mod" "$work/standin.mod" 2>&1); then
	echo "negative-standin-mod: unedited copies FAILED check-standin-mod" >&2
	echo "$out" | sed 's/^/    /' >&2
	exit 1
fi

for c in "${cases[@]}"; do
	IFS='|' read -r name edit want <<<"$c"
	fresh_copy
	before=$(cat "$work"/*.mod | cksum)
	(cd "$work" && eval "$edit")
	if [[ "$(cat "$work"/*.mod | cksum)" == "$before" ]]; then
		echo "negative-standin-mod: $name: the edit changed nothing; update this case" >&2
		failures=$((failures + 1))
	elif ! expect_rejection negative-standin-mod "$name" "$want" hack/check-standin-mod.sh "$work/main.mod" "$work/standin.mod"; then
		failures=$((failures + 1))
	fi
done

if ((failures > 0)); then
	echo "negative-standin-mod: $failures case(s) did not behave" >&2
	exit 1
fi
echo "negative-standin-mod: all ${#cases[@]} drifted go.mod files were rejected"
