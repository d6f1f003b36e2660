#!/usr/bin/env bash
# containers/nri-plugins v0.14.0 on a real containerd (issue 31, item 4;
# part N): its sgx-epc and memory-qos plugins, built unchanged on their own
# upstream stub (NRI v0.11.0, their go.mod's requirement, GOWORK=off),
# pre-installed in containerd's NRI plugin directory (they take no socket
# flag; containerd launches them, memory-qos configured from the NRI config
# directory), first on stock containerd v2.4.2 (upstream NRI v0.12.3), then on
# containerd v2.4.2 built unchanged on our NRI. The same pods, created
# through crictl with the annotations the plugins act on, on both:
#
#   np-sgx   epc-limit.nri.io/container.c0=65536, epc-limit.nri.io/pod=4096
#            sgx-epc: c0 gets unified misc.max "sgx_epc 65536" (its own
#            annotation), c1 "sgx_epc 4096" (the pod's);
#   np-qos   class.memory-qos.nri.io=bronze, class.memory-qos.nri.io/c1=silver,
#            memory.high.memory-qos.nri.io/c0=20000000; containers limited to
#            64 MiB; classes bronze (swaplimitratio 0.5) and silver (0.25)
#            memory-qos: a class sets memory.high = limit x (1 - ratio) and
#            memory.swap.max = max, an annotation listed in unifiedannotations
#            sets its key and wins over the class: c0 memory.high 20000000,
#            swap max; c1 memory.high 50331648 (0.75 x 64 MiB), swap max;
#   np-none  no annotation: neither plugin adjusts (unified empty).
#
# Checked for each container on each runtime: the unified resources of its
# OCI spec as containerd keeps it (crictl inspect) equal the values above;
# the start outcome (runc applies them, or refuses them on this host: the
# misc controller, cgroup v1) and what the container read from its cgroup
# files are the same on both runtimes. One line per check, then "N passed, N failed". Skips (exit 0, with a
# message) without the module proxy's nri-plugins v0.14.0 or the nested
# module pkg/topology (../shared/third_party/nri-plugins-topology; see
# test/thirdparty/README.md; NRI_THIRD_PARTY overrides). Nothing of theirs is
# copied: the build reads the module cache in place with a copy of their
# go.mod (go build -modfile).
#
# Binaries: STOCK (stock containerd, its shim, ctr and crictl; e2e.sh passes
# run.sh's $RA/bin) and OURS (e2e.sh passes surge.sh's $RC/ours/bin), copied
# into $R; either missing is built here.
#
# Usage: [R=/tmp/nrn] [STOCK=/tmp/nrc/bin] [OURS=/tmp/nrh/ours/bin] [KEEP=1] test/realcontainerd/nriplugins.sh
set -euo pipefail

R=${R:-/tmp/nrn}
REPO=$(cd "$(dirname "$0")/../.." && pwd)
CGROUP_PARENT=/nrinp-$(basename "$R")
NP_VERSION=v0.14.0
# shellcheck source=../realruntime/lib.sh
. "$REPO/test/realruntime/lib.sh"

step "the plugins: containers/nri-plugins $NP_VERSION on upstream NRI v0.11.0"
# Where the third-party tree lives: ../shared/third_party from the
# repository root, or from the main checkout's root (a git worktree).
tp=${NRI_THIRD_PARTY:-}
if [ -z "$tp" ]; then
	for c in "$REPO/../shared/third_party" \
		"$(dirname "$(git -C "$REPO" rev-parse --path-format=absolute --git-common-dir 2>/dev/null || echo /nonexistent/.git)")/../shared/third_party"; do
		[ -d "$c/nri-plugins-topology/pkg/topology" ] && { tp=$(cd "$c" && pwd); break; }
	done
fi
TOPO=$tp/nri-plugins-topology/pkg/topology
if [ -z "$tp" ] || [ ! -f "$TOPO/go.mod" ]; then
	echo "SKIPPED: no nested module pkg/topology of nri-plugins (../shared/third_party/nri-plugins-topology, or NRI_THIRD_PARTY)"
	exit 0
fi
if ! NP=$(cd "$REPO" && GOWORK=off GOFLAGS=-mod=mod go mod download -json "github.com/containers/nri-plugins@$NP_VERSION" 2>"$R/np-download.err" |
	sed -n 's/^\t"Dir": "\(.*\)",$/\1/p') || [ -z "$NP" ] || [ ! -d "$NP/cmd/plugins/sgx-epc" ]; then
	echo "SKIPPED: github.com/containers/nri-plugins@$NP_VERSION is not available from the module proxy: $(tr '\n' ' ' <"$R/np-download.err")"
	exit 0
fi
install_packages
command -v jq >/dev/null || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq jq >/dev/null; }
mkdir -p "$R/np" "$R/stock/bin" "$R/ours/bin"
cp "$NP/go.mod" "$R/np/np.mod"
cp "$NP/go.sum" "$R/np/np.sum"
chmod u+w "$R/np/np.mod" "$R/np/np.sum"
# The release replaces its nested module with ./pkg/topology, which its zip
# lacks: the third-party tree's copy instead. NRI stays its own v0.11.0.
GOWORK=off go mod edit -replace="github.com/containers/nri-plugins/pkg/topology@v0.0.0=$TOPO" "$R/np/np.mod"
for p in sgx-epc memory-qos; do
	(cd "$NP" && GOWORK=off GOFLAGS=-mod=mod go build -modfile="$R/np/np.mod" -o "$R/bin/$p" "./cmd/plugins/$p")
	links=$(go version -m "$R/bin/$p" | awk '$1 == "dep" && $2 ~ /^github.com\/(containerd\/nri|nri-handover\/nri)$/ {print $2 "@" $3}' | paste -sd' ')
	expect "$p: built from nri-plugins $NP_VERSION, links $links (its own upstream stub)" [ "$links" = "github.com/containerd/nri@v0.11.0" ]
done

step "runtimes"
install_both_containerds
BASE_PATH=$PATH
use_runtime() { export PATH="$R/$1/bin:$BASE_PATH"; }
nri_of() { go version -m "$R/$1/bin/containerd" | awk '$1 == "dep" && $2 ~ /^github.com\/(containerd\/nri|nri-handover\/nri)$/ {print $2 "@" $3}' | paste -sd' '; }
expect "stock containerd links upstream NRI ($(nri_of stock))" bash -c "[[ '$(nri_of stock)' = github.com/containerd/nri@v0.12.3 ]]"
expect "our containerd links our NRI ($(nri_of ours))" bash -c "[[ '$(nri_of ours)' =~ github.com/nri-handover/nri@ ]] && [[ ! '$(nri_of ours)' =~ containerd/nri@v ]]"

step "images and config"
build_images
write_config
rm -rf "$R"/nri-plugins/* "$R"/nri-conf/* "$R"/np-*.pod.json "$R"/*.ctr.json "$R"/start-errors.txt "$R"/podlogs/*
# Pre-installed: containerd launches them at its start (they have no socket
# flag). memory-qos reads its classes from the NRI configuration directory.
cp "$R/bin/sgx-epc" "$R/nri-plugins/10-sgx-epc"
cp "$R/bin/memory-qos" "$R/nri-plugins/20-memory-qos"
cat >"$R/nri-conf/20-memory-qos.conf" <<'EOF'
classes:
- name: bronze
  swaplimitratio: 0.5
- name: silver
  swaplimitratio: 0.25
unifiedannotations:
- memory.swap.max
- memory.high
EOF

# plugin_pids: the pre-installed plugins' processes (launched by containerd
# from $R/nri-plugins; they outlive nothing but are ended by their PIDs).
plugin_pids() { pgrep -f -- "^$R/nri-plugins/" || true; }
cleanup() {
	set +e
	local pids
	pids=$(plugin_pids)
	cleanup_runtime
	# shellcheck disable=SC2086
	[ -z "$pids" ] || stop_pids $pids
}
trap cleanup EXIT

# np_pod NAME ANNOTATIONS_JSON: a host-network pod with annotations.
np_pod() {
	mkdir -p "$R/podlogs/$1"
	cat >"$R/$1.pod.json" <<EOF
{"metadata": {"name": "$1", "namespace": "default", "uid": "uid-$1", "attempt": 0},
 "annotations": $2,
 "log_directory": "$R/podlogs/$1",
 "linux": {"cgroup_parent": "$CGROUP_PARENT",
           "security_context": {"namespace_options": {"network": 2, "pid": 1}}}}
EOF
}
# np_ctr POD NAME MEMORY_LIMIT: a container that prints the cgroup files the
# plugins adjust (as the container sees them; "none" where the file is
# missing, as on a cgroup v1 host), then sleeps.
np_ctr() {
	local res=""
	[ "$3" = 0 ] || res="\"resources\": {\"memory_limit_in_bytes\": $3}"
	cat >"$R/$1-$2.ctr.json" <<EOF
{"metadata": {"name": "$2"}, "image": {"image": "$BUSYBOX_IMAGE"}, "log_path": "$2.log",
 "command": ["/bin/sh", "-c", "for f in memory.high memory.swap.max misc.max; do echo \"\$f=\$(cat /sys/fs/cgroup/\$f 2>/dev/null || echo none)\"; done; echo listed; sleep 3600"],
 "linux": {$res}}
EOF
}
np_pod np-sgx '{"epc-limit.nri.io/container.c0": "65536", "epc-limit.nri.io/pod": "4096"}'
np_ctr np-sgx c0 0
np_ctr np-sgx c1 0
np_pod np-qos '{"class.memory-qos.nri.io": "bronze", "class.memory-qos.nri.io/c1": "silver", "memory.high.memory-qos.nri.io/c0": "20000000"}'
np_ctr np-qos c0 67108864
np_ctr np-qos c1 67108864
np_pod np-none '{}'
np_ctr np-none c0 67108864
CTRS="np-sgx/c0 np-sgx/c1 np-qos/c0 np-qos/c1 np-none/c0"
# What the plugins' documented behaviour gives (unified, as jq -S -c prints it).
declare -A WANT=(
	[np-sgx/c0]='{"misc.max":"sgx_epc 65536"}'
	[np-sgx/c1]='{"misc.max":"sgx_epc 4096"}'
	[np-qos/c0]='{"memory.high":"20000000","memory.swap.max":"max"}'
	[np-qos/c1]='{"memory.high":"50331648","memory.swap.max":"max"}'
	[np-none/c0]='{}'
)
declare -A UNIFIED=() STARTED=() READ=()

# connected NN-NAME: containerd registered the pre-installed plugin and
# synchronized it (both runtimes' wording).
connected() {
	grep -qE "plugin .?.?pre-connected:$1\[[0-9]+\].?.? registered" "$R/containerd.log" &&
		grep -qE "synchronizing plugin $1( |\"|\$)" "$R/containerd.log"
}
both_connected() { connected 10-sgx-epc && connected 20-memory-qos; }
# run_on RUNTIME: containerd (RUNTIME's) with the plugins pre-installed; the
# pods; each container's unified resources, start outcome and cgroup reads
# into UNIFIED/STARTED/READ[RUNTIME:POD/CTR]; then everything removed.
run_on() {
	local rt=$1 pod c key id pid out
	use_runtime "$rt"
	: >"$R/containerd.log"
	rm -rf "$R"/podlogs/*
	start_containerd
	expect "$rt: containerd launched sgx-epc and memory-qos from its plugin directory, both connected and synchronized" \
		wait_for 30 both_connected
	declare -A podid=()
	for pod in np-sgx np-qos np-none; do
		mkdir -p "$R/podlogs/$pod"
		podid[$pod]=$(cri runp "$R/$pod.pod.json")
	done
	for key in $CTRS; do
		pod=${key%/*} c=${key#*/}
		id=$(cri create "${podid[$pod]}" "$R/$pod-$c.ctr.json" "$R/$pod.pod.json")
		UNIFIED[$rt:$key]=$(cri inspect "$id" | jq -S -c '.info.runtimeSpec.linux.resources.unified // {}')
		if out=$(cri start "$id" 2>&1); then
			STARTED[$rt:$key]=ran
			wait_for 10 grep -q '^listed$' "$R/podlogs/$pod/$c.log" || true
			READ[$rt:$key]=$(sed -n 's/^[^ ]* [^ ]* [^ ]* \(.*=.*\)$/\1/p' "$R/podlogs/$pod/$c.log" | paste -sd' ')
		else
			# runc's refusal, without the ids and paths of this run.
			STARTED[$rt:$key]="refused by runc: $(grep -oE 'unified[^":]*|cgroup v2[^":]*|misc[^":]*' <<<"$out" | head -1 | cut -c1-120)"
			echo "$rt $key: $out" >>"$R/start-errors.txt"
			READ[$rt:$key]=""
		fi
	done
	cp "$R/containerd.log" "$R/containerd-$rt.log"
	remove_all_pods
	local pids
	pids=$(plugin_pids)
	stop_containerd
	# shellcheck disable=SC2086
	[ -z "$pids" ] || stop_pids $pids
}

step "stock containerd v2.4.2 (upstream NRI v0.12.3), the plugins pre-installed"
run_on stock
step "containerd v2.4.2 built on our NRI, the same plugins and pods"
run_on ours

step "each container's adjustment, stock and ours"
for key in $CTRS; do
	expect "$key: stock: unified ${UNIFIED[stock:$key]} (as documented: ${WANT[$key]})" [ "${UNIFIED[stock:$key]}" = "${WANT[$key]}" ]
	expect "$key: ours: unified ${UNIFIED[ours:$key]}, as on stock" [ "${UNIFIED[ours:$key]}" = "${UNIFIED[stock:$key]}" ]
	expect "$key: ours: the container ${STARTED[ours:$key]}${READ[ours:$key]:+ (read: ${READ[ours:$key]})}, as on stock (${STARTED[stock:$key]}${READ[stock:$key]:+ (read: ${READ[stock:$key]})})" \
		[ "${STARTED[ours:$key]}|${READ[ours:$key]}" = "${STARTED[stock:$key]}|${READ[stock:$key]}" ]
done
for rt in stock ours; do
	expect "$rt: no panic" bash -c "! grep -iE 'panic' '$R/containerd-$rt.log'"
done
[ "$FAILED" = 0 ] || echo "== logs in $R: containerd-stock.log, containerd-ours.log (a pre-installed plugin's output goes nowhere, as upstream launches it)"
summary
