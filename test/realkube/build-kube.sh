#!/usr/bin/env bash
# build-kube.sh: build the Kubernetes node components (kube-apiserver,
# kube-controller-manager, kube-scheduler, kubelet, kubectl; k8s.io/kubernetes
# v1.37.2) and etcd (go.etcd.io/etcd/server/v3 at the version the Kubernetes
# module requires) from test/realkube/k8s, a module of its own, so k8s.io never
# reaches the library's requirements. Binaries are cached under
# $KUBE_CACHE/<version>; a second run is a no-op. Bounded: the build is given
# KUBE_BUILD_TIMEOUT seconds (default 2400; cold is ~15 min on 2 cores).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
mod=$here/k8s
KUBE_VERSION=$(awk '($1=="require" && $2=="k8s.io/kubernetes") {print $3} ($1=="k8s.io/kubernetes") {print $2}' "$mod/go.mod")
KUBE_CACHE=${KUBE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/nri-handover/kube}
out=${KUBE_BIN:-$KUBE_CACHE/$KUBE_VERSION-$(sha256sum "$mod/go.sum" | cut -c1-12)}
bins=(kube-apiserver kube-controller-manager kube-scheduler kubelet kubectl etcd)
have=1
for b in "${bins[@]}"; do [[ -x $out/$b ]] || have=0; done
if ((have)); then echo "$out"; exit 0; fi
mkdir -p "$out.tmp"
cd "$mod"
export GOWORK=off GOFLAGS=-mod=readonly CGO_ENABLED=0
start=$(date +%s)
timeout "${KUBE_BUILD_TIMEOUT:-2400}" go build -trimpath -ldflags=-s -o "$out.tmp/" \
	k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kube-controller-manager \
	k8s.io/kubernetes/cmd/kube-scheduler k8s.io/kubernetes/cmd/kubelet \
	k8s.io/kubernetes/cmd/kubectl ./cmd/etcd >&2 || {
	rc=$?
	# (124: the timeout; what was compiled stays in Go's build cache, so a
	# second run goes on from there)
	echo "build-kube: go build failed (exit $rc) after $(($(date +%s) - start))s; KUBE_BUILD_TIMEOUT=${KUBE_BUILD_TIMEOUT:-2400}" >&2
	exit "$rc"
}
echo "build-kube: built ${bins[*]} in $(( $(date +%s) - start ))s" >&2
rm -rf "$out" && mv "$out.tmp" "$out"
echo "$out"
