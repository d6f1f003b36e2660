#!/usr/bin/env bash
# check-standin-api-negative.sh
#
# Proves hack/standin-api can fail: on temporary copies of the stand-in
# module (containerd-nri), an untouched copy must pass (so the failures below
# come from the edits) and each edit below, which takes away one upstream
# package or identifier, must be rejected, naming it. The real stand-in is
# never touched. Each edit keeps the copy compiling, so that the check
# rejects it for the missing name, not for a build error.
set -euo pipefail

cd "$(dirname "$0")/.."
# shellcheck source=expect-rejection.sh
. hack/expect-rejection.sh

root=$PWD
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
bin=$work/standin-api
go build -o "$bin" ./hack/standin-api

copy=$work/containerd-nri
fresh_copy() {
	rm -rf "$copy"
	cp -r containerd-nri "$copy"
	# The copy is elsewhere: point its replacement at this module.
	(cd "$copy" && go mod edit -replace=github.com/nri-handover/nri="$root")
}

# name | edit (a command run in the copy) | what the failure output must contain
cases=(
	"a generated forwarder unexported|sed -i 's/^func GetEffectiveAnnotation(/func getEffectiveAnnotation(/' pkg/plugin/zz_generated_forward.go|pkg/plugin: func GetEffectiveAnnotation: missing"
	"an aliased type dropped|sed -i '/^type BuiltinHandlers = /d' pkg/adaptation/builtin/zz_generated_forward.go|pkg/adaptation/builtin: type BuiltinHandlers: missing"
	"a hand-written identifier dropped|sed -i 's/^var File_pkg_api_api_proto = /var fileProto = /' pkg/api/upstream_only.go|pkg/api: var File_pkg_api_api_proto: missing"
	"a method of a stand-in's own type renamed|sed -i 's/\.Err()/.Failure()/; s/) Err() error/) Failure() error/' types/v1/types.go client.go|types/v1: Result.Err: missing"
	"a field of a stand-in's own type renamed|sed -i 's/SandboxID/SandboxIdent/g' types/v1/types.go client.go|types/v1: Request.SandboxID: missing"
	"a constant turned into a variable|sed -i 's/^const UnknownVersion = /var UnknownVersion = /' pkg/version/zz_generated_forward.go|pkg/version: const UnknownVersion: is a var"
	"a whole package removed|rm -r skel|package skel: missing"
	"a message without its vtprotobuf methods|sed -i 's/^type Empty = ours.Empty$/type Empty ours.Empty/' pkg/api/zz_generated_forward.go|pkg/api: Empty.MarshalVT: missing"
)

failures=0
fresh_copy
if ! out=$("$bin" -standin "$copy" 2>&1); then
	echo "negative-standin-api: the unedited copy FAILED standin-api" >&2
	echo "$out" | sed 's/^/    /' >&2
	exit 1
fi

for c in "${cases[@]}"; do
	IFS='|' read -r name edit want <<<"$c"
	fresh_copy
	before=$(cd "$copy" && find . -type f -name '*.go' -print0 | sort -z | xargs -0 cat | cksum)
	(cd "$copy" && eval "$edit")
	if [[ "$(cd "$copy" && find . -type f -name '*.go' -print0 | sort -z | xargs -0 cat | cksum)" == "$before" ]]; then
		echo "negative-standin-api: $name: the edit changed nothing; update this case" >&2
		failures=$((failures + 1))
	elif ! expect_rejection negative-standin-api "$name" "$want" "$bin" -standin "$copy"; then
		failures=$((failures + 1))
	fi
done

if ((failures > 0)); then
	echo "negative-standin-api: $failures case(s) did not behave" >&2
	exit 1
fi
echo "negative-standin-api: all ${#cases[@]} stand-ins with an upstream identifier taken away were rejected"
