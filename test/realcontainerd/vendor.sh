#!/usr/bin/env bash
# Part V of make e2e-containerd: the README's replace + vendor recipe, tried on
# containerd's own source. A copy of containerd v2.4.2 (out of the module
# cache) gets the two `go mod edit -replace` lines, `go mod tidy` and
# `go mod vendor`, and cmd/containerd is built with -mod=vendor. Checks: no
# file but go.mod, go.sum and vendor/ differs from the module; the go.mod
# diff is the replaces and requirement lines only; vendor/modules.txt and
# `go version -m` show the stand-in in place of upstream's NRI.
#
# Usage: [R=/tmp/nrv] [CONTAINERD_VERSION=v2.4.2] test/realcontainerd/vendor.sh
set -uo pipefail

R=${R:-/tmp/nrv}
CONTAINERD_VERSION=${CONTAINERD_VERSION:-v2.4.2}
REPO=$(cd "$(dirname "$0")/../.." && pwd)
MOD=github.com/containerd/containerd/v2
pass=0 fail=0
check() { # check NAME CMD...: one line per check
	local name=$1
	shift
	if "$@" >/dev/null 2>&1; then echo "PASS: $name"; pass=$((pass + 1)); else echo "FAIL: $name"; fail=$((fail + 1)); fi
}
# shellcheck source=../realruntime/results.sh
. "$(dirname "$0")/../realruntime/results.sh"
finish() {
	echo "$pass passed, $fail failed"
	result "${PART:-all}.passed" "$pass"
	result "${PART:-all}.failed" "$fail"
	[ "$fail" = 0 ] && [ "$pass" -gt 0 ]
}
export GOWORK=off GOFLAGS=-mod=mod

dir=$(cd "$REPO" && go mod download -json "$MOD@$CONTAINERD_VERSION" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",\{0,1\}$/\1/p')
[ -d "$dir" ] || { echo "vendor: go mod download gave no directory"; exit 1; }
rm -rf "$R" && mkdir -p "$R"
trap 'rm -rf "$R"' EXIT
cp -a "$dir" "$R/src" && chmod -R u+w "$R/src"
cd "$R/src" || exit 1
go mod edit -replace "github.com/containerd/nri=$REPO/containerd-nri" -replace "github.com/nri-handover/nri=$REPO"
check "go mod tidy with the two replaces" go mod tidy
check "go mod vendor" go mod vendor
check "go build -mod=vendor ./cmd/containerd" env GOFLAGS=-mod=vendor go build -o "$R/containerd" ./cmd/containerd
check "no file of containerd's differs but go.mod, go.sum, vendor/" \
	diff -r -q -x vendor -x go.mod -x go.sum "$dir" "$R/src"
# Every changed go.mod line is a replace or a requirement.
check "go.mod changes only replaces and requirements" bash -c \
	"! diff '$dir/go.mod' go.mod | grep '^[<>]' | grep -v -E '^[<>][[:space:]]*(replace |github.com/|go\.|golang\.org/|google\.golang\.org/|gopkg\.in/|k8s\.io/|sigs\.k8s\.io/|tags\.cncf\.io/|\$)'"
check "vendor/modules.txt maps github.com/containerd/nri to the stand-in" \
	grep -qx "# github.com/containerd/nri v[^ ]* => $REPO/containerd-nri" vendor/modules.txt
check "go version -m: the stand-in replaces upstream's NRI" \
	bash -c "go version -m '$R/containerd' | grep -q '=>[[:space:]]*$REPO/containerd-nri'"
check "go version -m: this module is linked" \
	bash -c "go version -m '$R/containerd' | grep -q 'github.com/nri-handover/nri'"
finish
