#!/usr/bin/env bash
# Builds Docker Engine's daemon, unchanged, twice: stock (upstream NRI
# v0.12.3, as its go.mod requires) and on this repository's NRI.
#
# The proof is the one build-containerd.sh gives for containerd: moby's own
# module source (github.com/moby/moby/v2, from `go mod download`, copied out
# of the read-only module cache) is built
#   - stock: with GOWORK=off, its own go.mod and go.sum, nothing else;
#   - ours: in a Go workspace whose other modules are this repository and
#     the stand-in containerd-nri (which declares `module
#     github.com/containerd/nri`), so every import of upstream's NRI
#     resolves to the stand-in.
# The copy hashes to the module's go.sum hash (h1:) before and after both
# builds and `diff -r` finds it identical to the module cache; `go version
# -m` shows the stand-in and our module in the one, upstream v0.12.3 in the
# other. moby's NRI integration tests (integration/daemon/nri) are compiled
# the same two ways (`go test -c`), for nri-tests.sh.
#
# Usage: [R=/tmp/nrdk-ish] [MOBY_VERSION=v2.0.0-beta.24] test/realdocker/build-dockerd.sh
# Output: $R/{stock,ours}/bin/{dockerd,nri.test}, $R/{stock,ours}/buildinfo.txt,
# $R/ours/go.work; the source in $R/src. Cold: about 6 minutes per flavour on
# two cores; warm: seconds.
set -euo pipefail

R=${R:-/tmp/nrdk-ish}
MOBY_VERSION=${MOBY_VERSION:-v2.0.0-beta.24}
REPO=$(cd "$(dirname "$0")/../.." && pwd)
MOD=github.com/moby/moby/v2
START=$SECONDS
step() { echo "== [$((SECONDS - START))s] $*"; }
die() { echo "build-dockerd: $*" >&2; exit 1; }

mkdir -p "$R/stock/bin" "$R/ours/bin" "$R/src"
step "download $MOD@$MOBY_VERSION"
info=$(cd "$REPO" && GOWORK=off GOFLAGS=-mod=mod go mod download -json "$MOD@$MOBY_VERSION")
field() { sed -n "s/^[[:space:]]*\"$1\": \"\(.*\)\",\{0,1\}$/\1/p" <<<"$info"; }
cache_dir=$(field Dir)
sum=$(field Sum)
[ -d "$cache_dir" ] && [ -n "$sum" ] || die "go mod download gave no directory or sum: $info"

(cd "$REPO" && GOWORK=off go build -o "$R/ours/bin/dirhash" ./test/realcontainerd/dirhash)
# same_as_module DIR: DIR holds exactly the module's files.
same_as_module() {
	local h
	h=$("$R/ours/bin/dirhash" "$1" "$MOD@$MOBY_VERSION") || return 1
	[ "$h" = "$sum" ] || { echo "build-dockerd: $1 hashes to $h, the module is $sum" >&2; return 1; }
}

src=$R/src/moby-$MOBY_VERSION
if [ ! -d "$src" ] || ! same_as_module "$src"; then
	step "copy the module source out of the read-only cache"
	rm -rf "$src"
	cp -a "$cache_dir" "$src"
	chmod -R u+w "$src"
fi
same_as_module "$src" || die "the copy differs from the module"
echo "moby source: $src ($sum, as go.sum)"

step "workspace (ours)"
rm -f "$R/ours/go.work" "$R/ours/go.work.sum"
(cd "$R/ours" && go work init "$src" "$REPO" "$REPO/containerd-nri")
cat "$R/ours/go.work"

ldflags="-X $MOD/dockerversion.Version=${MOBY_VERSION#v} -X $MOD/dockerversion.GitCommit=unchanged"
# build FLAVOUR GOWORK: dockerd and the NRI integration test binary.
build() {
	step "build cmd/dockerd ($1)"
	(cd "$src" && GOWORK=$2 GOFLAGS='' go build -ldflags "$ldflags" -o "$R/$1/bin/dockerd" ./cmd/dockerd)
	step "compile integration/daemon/nri ($1)"
	(cd "$src" && GOWORK=$2 GOFLAGS='' go test -c -o "$R/$1/bin/nri.test" ./integration/daemon/nri)
	go version -m "$R/$1/bin/dockerd" >"$R/$1/buildinfo.txt"
	grep -E "^[[:space:]]*(path|mod|dep)[[:space:]]+github.com/(moby/moby/v2|containerd/nri|nri-handover/nri)[[:space:]]" "$R/$1/buildinfo.txt" || true
}
build stock off
build ours "$R/ours/go.work"

step "verify"
same_as_module "$src" || die "the builds changed moby's source"
diff -r "$cache_dir" "$src" >/dev/null || die "the copy differs from the module cache"
echo "PASS: moby's source is byte-identical to $MOD@$MOBY_VERSION ($sum) after both builds"
grep -qE "^[[:space:]]*dep[[:space:]]+github.com/containerd/nri[[:space:]]+v0\.12\.3[[:space:]]" "$R/stock/buildinfo.txt" ||
	die "the stock dockerd does not link upstream NRI v0.12.3"
echo "PASS: stock dockerd links upstream github.com/containerd/nri v0.12.3"
grep -qE "^[[:space:]]*dep[[:space:]]+github.com/nri-handover/nri[[:space:]]" "$R/ours/buildinfo.txt" ||
	die "our dockerd does not link github.com/nri-handover/nri"
# In a workspace the stand-in is a main module: (devel), no version, no sum.
grep -qE "^[[:space:]]*dep[[:space:]]+github.com/containerd/nri[[:space:]]+\(devel\)" "$R/ours/buildinfo.txt" ||
	die "our dockerd does not link github.com/containerd/nri from the workspace"
nri_dir=$(cd "$src" && GOWORK=$R/ours/go.work go list -m -f '{{.Dir}}' github.com/containerd/nri)
[ "$nri_dir" = "$REPO/containerd-nri" ] || die "github.com/containerd/nri resolves to $nri_dir, not the stand-in"
if grep -qE "^[[:space:]]*dep[[:space:]]+github.com/containerd/nri[[:space:]]+v[0-9][^[:space:]]*[[:space:]]+h1:" "$R/ours/buildinfo.txt"; then
	die "our dockerd links a released github.com/containerd/nri, not the stand-in"
fi
echo "PASS: our dockerd links our module and the stand-in ($nri_dir), no released upstream NRI"
"$R/ours/bin/dockerd" --version
step "done: $R/stock/bin/dockerd $R/ours/bin/dockerd"
