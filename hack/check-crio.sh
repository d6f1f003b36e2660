#!/usr/bin/env bash
# check-crio.sh: compiles CRI-O's NRI integration, unchanged, on this
# repository's NRI.
#
# CRI-O's own source (CRIO_VERSION, from `go mod download`, copied out of
# the read-only module cache) goes into a Go workspace with this repository
# and the stand-in containerd-nri, which declares `module
# github.com/containerd/nri`, as test/realcontainerd/build-containerd.sh
# does for containerd. Built and vetted (test files included): internal/nri
# (the adaptation embedded, the runtime's SyncFn/UpdateFn, the conversions
# and adjustments through pkg/runtime-tools/generate) and internal/config/nri
# (its configuration mapped to adaptation options). CRI-O's server package,
# which calls them, does not build here: the workspace raises runtime-spec
# to v1.3.0 (ours and upstream NRI v0.12.5's), which CRI-O's pinned
# runtime-tools does not compile against, and it needs the btrfs and gpgme C
# headers. The copy must stay identical to the module cache.
#
# Usage: [R=/tmp/nri-crio] [CRIO_VERSION=v1.34.0] hack/check-crio.sh
set -euo pipefail

R=${R:-/tmp/nri-crio}
CRIO_VERSION=${CRIO_VERSION:-v1.34.0}
REPO=$(cd "$(dirname "$0")/.." && pwd)
MOD=github.com/cri-o/cri-o
PKGS=(./internal/nri/... ./internal/config/nri/...)
W=$R/ours
START=$SECONDS
step() { echo "== [$((SECONDS - START))s] $*"; }
die() {
	echo "check-crio: $*" >&2
	exit 1
}

step "download $MOD@$CRIO_VERSION"
cache_dir=$(cd "$REPO" && GOWORK=off GOFLAGS=-mod=mod go mod download -json "$MOD@$CRIO_VERSION" |
	sed -n 's/^[[:space:]]*"Dir": "\(.*\)",\{0,1\}$/\1/p')
[ -d "$cache_dir" ] || die "go mod download gave no directory"

src=$W/src/cri-o-$CRIO_VERSION
if [ ! -d "$src" ] || ! diff -r "$cache_dir" "$src" >/dev/null; then
	step "copy the module source out of the read-only cache"
	rm -rf "$src"
	mkdir -p "$W/src"
	cp -a "$cache_dir" "$src"
	chmod -R u+w "$src"
fi

step "workspace"
rm -f "$W/go.work" "$W/go.work.sum"
(cd "$W" && go work init "$src" "$REPO" "$REPO/containerd-nri")
(cd "$src" && GOWORK="$W/go.work" GOFLAGS= go list -m -f '{{.Dir}}' github.com/containerd/nri) | grep -qx "$REPO/containerd-nri" ||
	die "github.com/containerd/nri does not resolve to the stand-in"

step "build and vet ${PKGS[*]}"
(cd "$src" && GOWORK="$W/go.work" GOFLAGS= go build "${PKGS[@]}")
(cd "$src" && GOWORK="$W/go.work" GOFLAGS= go vet "${PKGS[@]}")

diff -r "$cache_dir" "$src" >/dev/null || die "the copy differs from the module cache"
step "PASS: CRI-O $CRIO_VERSION's ${PKGS[*]} build and vet on the stand-in, source unchanged"
