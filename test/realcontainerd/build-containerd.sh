#!/usr/bin/env bash
# Builds containerd, unchanged, on this repository's NRI.
#
# containerd v2.4.2's own source (from `go mod download`, copied out of the
# read-only module cache) is built in a Go workspace whose other modules are
# this repository and the stand-in containerd-nri, which declares
# `module github.com/containerd/nri`: every import of upstream's NRI then
# resolves to the stand-in, which forwards to our packages. Not a line of
# containerd changes, and the script proves it:
#   - the copy hashes to the module's go.sum hash (h1:, the same check the Go
#     command makes), before and after the build, and `diff -r` finds it
#     identical to the module cache;
#   - `go version -m` of the binary shows the stand-in and our module in place
#     of upstream's NRI.
# With NRI_TREE set (part U of make e2e-containerd, ../patched.sh), the
# workspace holds that tree instead, a copy of upstream containerd/nri's own
# module (upstream-patches/ applied to it by hack/upstream-patches.sh), and
# the output goes to $R/patched: the binary must then link that tree and not
# our module.
# Only containerd links NRI; the runc shim and ctr are built from the same
# unchanged source in the same workspace so that one build serves the tests.
#
# Usage: [R=/tmp/nrc] [CONTAINERD_VERSION=v2.4.2] [CMDS="containerd containerd-shim-runc-v2 ctr"] \
#        [NRI_TREE=dir] test/realcontainerd/build-containerd.sh
# Output: $R/ours/bin/{containerd,containerd-shim-runc-v2,ctr} and
# $R/ours/buildinfo.txt ($R/patched/... with NRI_TREE). Cold: a few minutes and about 1 GB of module and
# build cache; warm: seconds.
set -euo pipefail

R=${R:-/tmp/nrc}
CONTAINERD_VERSION=${CONTAINERD_VERSION:-v2.4.2}
CMDS=${CMDS:-containerd containerd-shim-runc-v2 ctr}
REPO=$(cd "$(dirname "$0")/../.." && pwd)
MOD=github.com/containerd/containerd/v2
NRI_TREE=${NRI_TREE:-}
W=$R/${NRI_TREE:+patched}      # workspace: src/ (containerd), go.work, bin/
[ -n "$NRI_TREE" ] || W=$R/ours
START=$SECONDS
step() { echo "== [$((SECONDS - START))s] $*"; }
die() { echo "build-containerd: $*" >&2; exit 1; }

mkdir -p "$W/bin"
step "download $MOD@$CONTAINERD_VERSION"
info=$(cd "$REPO" && GOWORK=off GOFLAGS=-mod=mod go mod download -json "$MOD@$CONTAINERD_VERSION")
field() { sed -n "s/^[[:space:]]*\"$1\": \"\(.*\)\",\{0,1\}$/\1/p" <<<"$info"; }
cache_dir=$(field Dir)
sum=$(field Sum)
[ -d "$cache_dir" ] && [ -n "$sum" ] || die "go mod download gave no directory or sum: $info"

(cd "$REPO" && go build -o "$W/bin/dirhash" ./test/realcontainerd/dirhash)
# same_as_module DIR: DIR holds exactly the module's files.
same_as_module() {
	local h
	h=$("$W/bin/dirhash" "$1" "$MOD@$CONTAINERD_VERSION") || return 1
	[ "$h" = "$sum" ] || { echo "build-containerd: $1 hashes to $h, the module is $sum" >&2; return 1; }
}

src=$W/src/containerd-$CONTAINERD_VERSION
if [ ! -d "$src" ] || ! same_as_module "$src"; then
	step "copy the module source out of the read-only cache"
	rm -rf "$src"
	mkdir -p "$W/src"
	cp -a "$cache_dir" "$src"
	chmod -R u+w "$src"
fi
same_as_module "$src" || die "the copy differs from the module"
echo "containerd source: $src ($sum, as go.sum)"

step "workspace"
rm -f "$W/go.work" "$W/go.work.sum"
if [ -n "$NRI_TREE" ]; then
	[ "$(cd "$NRI_TREE" && GOWORK=off go list -m)" = github.com/containerd/nri ] || die "$NRI_TREE is not containerd/nri's module"
	(cd "$W" && go work init "$src" "$NRI_TREE")
else
	(cd "$W" && go work init "$src" "$REPO" "$REPO/containerd-nri")
fi
cat "$W/go.work"

revision=on-nri-handover
[ -z "$NRI_TREE" ] || revision=on-upstream-patches
for cmd in $CMDS; do
	step "build cmd/$cmd in the workspace"
	(cd "$src" && GOWORK="$W/go.work" GOFLAGS= go build \
		-ldflags "-X $MOD/version.Version=$CONTAINERD_VERSION -X $MOD/version.Revision=$revision" \
		-o "$W/bin/$cmd" "./cmd/$cmd")
done

step "verify"
same_as_module "$src" || die "the build changed containerd's source"
diff -r "$cache_dir" "$src" >/dev/null || die "the copy differs from the module cache"
echo "PASS: containerd's source is byte-identical to $MOD@$CONTAINERD_VERSION ($sum) after the build"

go version -m "$W/bin/containerd" >"$W/buildinfo.txt"
grep -E "^[[:space:]]*(path|mod|dep)[[:space:]]+github.com/(containerd/containerd/v2|containerd/nri|nri-handover/nri)[[:space:]]" "$W/buildinfo.txt" || true
if [ -n "$NRI_TREE" ]; then
	# A workspace module has no version: "(devel)".
	grep -qE "^[[:space:]]*dep[[:space:]]+github.com/containerd/nri[[:space:]]+\(devel\)" "$W/buildinfo.txt" ||
		die "the binary does not link the tree $NRI_TREE"
	! grep -q "nri-handover/nri" "$W/buildinfo.txt" || die "the binary links github.com/nri-handover/nri"
	echo "PASS: the binary links upstream's NRI from $NRI_TREE, not a release and not our module"
	"$W/bin/containerd" --version
	step "done: $W/bin/containerd"
	exit 0
fi
if ! grep -qE "^[[:space:]]*dep[[:space:]]+github.com/nri-handover/nri[[:space:]]" "$W/buildinfo.txt"; then
	die "the binary does not link github.com/nri-handover/nri"
fi
if grep -qE "^[[:space:]]*dep[[:space:]]+github.com/containerd/nri[[:space:]]+v[0-9]" "$W/buildinfo.txt"; then
	die "the binary links a released github.com/containerd/nri, not the stand-in"
fi
echo "PASS: the binary links our module and the stand-in, no released upstream NRI"
"$W/bin/containerd" --version
step "done: $W/bin/containerd"
