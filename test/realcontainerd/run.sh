#!/usr/bin/env bash
# End-to-end check of our plugin side (pkg/stub) against a real, deployed
# containerd with NRI enabled. containerd v2.4.2 embeds upstream NRI v0.12.3,
# so this is the "new plugin against an upstream runtime" case: the plugin must
# work as a plain NRI plugin and report that handover is unavailable.
#
# What it does, all under a private scratch directory $R:
#   1. installs runc, busybox and the CNI plugins from apt (if missing) and
#      containerd, its runc shim, ctr and crictl with `go install`
#      (cold: about 5-6 minutes and 1.5 GB of Go caches; warm: seconds);
#   2. builds a pause and a busybox image by hand (no registry needed);
#   3. runs containerd with NRI on in its own network namespace, with
#      test/realcontainerd/plugin installed in its plugin directory
#      (PREINST=1), so containerd launches one instance itself;
#   4. creates a pod with a container BEFORE the external plugin starts, so
#      that its Synchronize has something to report;
#   5. starts a second instance as an external plugin on the NRI socket and
#      checks, for both, registration, Configure, Synchronize, readiness and
#      "HANDOVER available=false";
#   6. creates pods (host network, and with NETNS_POD=1 one with its own
#      network namespace over a CNI bridge) and containers through CRI and
#      checks the events and that each plugin's adjustment (an environment
#      variable and an annotation) reached each container;
#   7. removes everything, stops containerd and checks that the plugins see
#      the connection end.
# It exits non-zero if any check fails. Needs root, Debian apt and the Go
# module proxy. Not part of `make test`: too slow and too privileged for CI.
#
# Usage: [R=/tmp/nrc] [NETNS_POD=1] [PREINST=1] [KEEP=1] [PLUGIN_ARGS=...] test/realcontainerd/run.sh
# PLUGIN_ARGS adds plugin flags; PLUGIN_ARGS=-adjust=false must make it fail.
set -euo pipefail

R=${R:-/tmp/nrc}                     # keep it short: unix socket paths < 108 bytes
CONTAINERD_VERSION=${CONTAINERD_VERSION:-v2.4.2}
CRICTL_VERSION=${CRICTL_VERSION:-v1.37.0}
NETNS_POD=${NETNS_POD:-1}
PLUGIN_ARGS=${PLUGIN_ARGS:-}
PREINST=${PREINST:-1}
KEEP=${KEEP:-0}                      # 1: keep containerd's root and state (logs and binaries always stay)
REPO=$(cd "$(dirname "$0")/../.." && pwd)
CGROUP_PARENT=/nrirealctrd
PLUGIN_NAME=realctrd                 # the external instance, 50-realctrd
PREINST_NAME=preinst                 # the runtime-launched instance, 40-preinst

[ "$(id -u)" = 0 ] || { echo "run.sh: needs root" >&2; exit 2; }
mkdir -p "$R"/{bin,root,state,nri,nri-plugins,nri-conf,runc-root,cni,podlogs,img}
export PATH="$R/bin:$(go env GOROOT)/bin:/usr/sbin:/usr/bin:/sbin:/bin"
START=$SECONDS
step() { echo "== [$((SECONDS - START))s] $*"; }

FAILED=0
pass() { echo "PASS: $*"; }
fail() { echo "FAIL: $*"; FAILED=$((FAILED + 1)); }
# expect DESCRIPTION COMMAND...: a check that counts, not one that aborts.
expect() { local what=$1; shift; if "$@"; then pass "$what"; else fail "$what"; fi; }
# plugin_pid LOG: the PID the plugin printed with its HANDOVER line.
plugin_pid() { sed -n 's/^HANDOVER .* pid=\([0-9]*\)$/\1/p' "$1" 2>/dev/null | tail -1; }
# wait_for SECONDS COMMAND...: poll until COMMAND succeeds.
wait_for() {
	local deadline=$((SECONDS + $1)); shift
	until "$@"; do [ $SECONDS -lt $deadline ] || return 1; sleep 0.1; done
}

# ---- 1. software ------------------------------------------------------------
step "packages and tools"
need=()
for b in runc:runc busybox:busybox-static /usr/lib/cni/bridge:containernetworking-plugins \
	ip:iproute2 unshare:util-linux nsenter:util-linux; do
	command -v "${b%%:*}" >/dev/null 2>&1 || need+=("${b#*:}")
done
if [ ${#need[@]} -gt 0 ]; then
	apt-get update -qq
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
fi
export GOBIN=$R/bin
if [ ! -x "$R/bin/containerd" ] || [ ! -x "$R/bin/containerd-shim-runc-v2" ] || [ ! -x "$R/bin/ctr" ]; then
	(cd "$R" && GOFLAGS=-mod=mod go install \
		github.com/containerd/containerd/v2/cmd/containerd@"$CONTAINERD_VERSION" \
		github.com/containerd/containerd/v2/cmd/containerd-shim-runc-v2@"$CONTAINERD_VERSION" \
		github.com/containerd/containerd/v2/cmd/ctr@"$CONTAINERD_VERSION")
fi
[ -x "$R/bin/crictl" ] || (cd "$R" && GOFLAGS=-mod=mod go install sigs.k8s.io/cri-tools/cmd/crictl@"$CRICTL_VERSION")
unset GOBIN
(cd "$REPO" && go build -o "$R/bin/realctrd-plugin" ./test/realcontainerd/plugin)
containerd --version

# ---- 2. images --------------------------------------------------------------
# oci_archive NAME ROOTFS OUT ENTRYPOINT_JSON writes a one-layer OCI image
# layout as a tar that `ctr images import` accepts.
oci_archive() {
	local name=$1 rootfs=$2 out=$3 entry=$4 w blob
	w=$(mktemp -d)
	mkdir -p "$w/blobs/sha256"
	# blob FILE: move FILE into the blob store; prints "DIGEST SIZE".
	blob() {
		local d s
		d=$(sha256sum "$1" | cut -d' ' -f1); s=$(stat -c %s "$1")
		mv "$1" "$w/blobs/sha256/$d"; echo "$d $s"
	}
	tar --sort=name --owner=0 --group=0 --numeric-owner --mtime=@0 -C "$rootfs" -cf "$w/layer" .
	local layer lsize cfg csize man msize
	read -r layer lsize < <(blob "$w/layer")
	printf '{"architecture":"amd64","os":"linux","rootfs":{"type":"layers","diff_ids":["sha256:%s"]},"config":{"Entrypoint":%s,"Env":["PATH=/bin"],"WorkingDir":"/"}}' \
		"$layer" "$entry" >"$w/config"
	read -r cfg csize < <(blob "$w/config")
	printf '{"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json","config":{"mediaType":"application/vnd.oci.image.config.v1+json","digest":"sha256:%s","size":%s},"layers":[{"mediaType":"application/vnd.oci.image.layer.v1.tar","digest":"sha256:%s","size":%s}]}' \
		"$cfg" "$csize" "$layer" "$lsize" >"$w/manifest"
	read -r man msize < <(blob "$w/manifest")
	printf '{"imageLayoutVersion":"1.0.0"}' >"$w/oci-layout"
	printf '{"schemaVersion":2,"mediaType":"application/vnd.oci.image.index.v1+json","manifests":[{"mediaType":"application/vnd.oci.image.manifest.v1+json","digest":"sha256:%s","size":%s,"platform":{"architecture":"amd64","os":"linux"},"annotations":{"io.containerd.image.name":"%s","org.opencontainers.image.ref.name":"%s"}}]}' \
		"$man" "$msize" "$name" "${name##*:}" >"$w/index.json"
	tar --sort=name --owner=0 --group=0 --numeric-owner --mtime=@0 -C "$w" -cf "$out" oci-layout index.json blobs
	rm -rf "$w"
}

step "images"
IMG=$R/img
rm -rf "$IMG/pause-src" "$IMG/pause-root" "$IMG/bb-root"
mkdir -p "$IMG/pause-src" "$IMG/pause-root" "$IMG/bb-root"/{bin,dev,etc,proc,sys,tmp}
cat >"$IMG/pause-src/main.go" <<'EOF'
// pause sleeps until it is told to stop: the sandbox's init process.
package main

import (
	"os"
	"os/signal"
	"syscall"
)

func main() {
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM, syscall.SIGINT)
	<-stop
}
EOF
printf 'module pause\n\ngo 1.24\n' >"$IMG/pause-src/go.mod"
(cd "$IMG/pause-src" && CGO_ENABLED=0 GOFLAGS= go build -trimpath -ldflags='-s -w' -o "$IMG/pause-root/pause" .)
cp "$(command -v busybox)" "$IMG/bb-root/bin/busybox"
for a in sh sleep env cat echo grep sort; do ln -sf busybox "$IMG/bb-root/bin/$a"; done
PAUSE_IMAGE=localhost/realctrd/pause:1
BUSYBOX_IMAGE=localhost/realctrd/busybox:1
oci_archive "$PAUSE_IMAGE" "$IMG/pause-root" "$IMG/pause.tar" '["/pause"]'
oci_archive "$BUSYBOX_IMAGE" "$IMG/bb-root" "$IMG/busybox.tar" '["/bin/sh"]'

# ---- 3. containerd ------------------------------------------------------------
step "config"
# Everything lives under $R: no system config (imports = []), NRI socket and
# plugin dirs private. restrict_oom_score_adj: without CAP_SYS_RESOURCE runc
# cannot apply the sandbox's negative OOM score. The pause image is pinned so
# that it is never pulled.
cat >"$R/containerd.toml" <<EOF
version = 4
root = '$R/root'
state = '$R/state'
imports = []
[plugins.'io.containerd.server.v1.grpc']
  address = '$R/containerd.sock'
[plugins.'io.containerd.server.v1.ttrpc']
  address = '$R/containerd.sock.ttrpc'
[plugins.'io.containerd.nri.v1.nri']
  disable = false
  socket_path = '$R/nri/nri.sock'
  plugin_path = '$R/nri-plugins'
  plugin_config_path = '$R/nri-conf'
  plugin_registration_timeout = '5s'
  plugin_request_timeout = '2s'
[plugins.'io.containerd.cri.v1.images']
  snapshotter = 'overlayfs'
  [plugins.'io.containerd.cri.v1.images'.pinned_images]
    sandbox = '$PAUSE_IMAGE'
[plugins.'io.containerd.cri.v1.runtime']
  enable_selinux = false
  disable_apparmor = true
  restrict_oom_score_adj = true
  netns_mounts_under_state_dir = true
  [plugins.'io.containerd.cri.v1.runtime'.containerd]
    default_runtime_name = 'runc'
    [plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc]
      runtime_type = 'io.containerd.runc.v2'
      [plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc.options]
        Root = '$R/runc-root'
        SystemdCgroup = false
  [plugins.'io.containerd.cri.v1.runtime'.cni]
    bin_dirs = ['/usr/lib/cni']
    conf_dir = '$R/cni'
[plugins.'io.containerd.grpc.v1.cri']
  disable_tcp_service = true
  stream_server_address = '127.0.0.1'
  stream_server_port = '0'
EOF
cat >"$R/cni/10-realctrd.conflist" <<'EOF'
{"cniVersion": "1.0.0", "name": "realctrd", "plugins": [{"type": "bridge", "bridge": "realctrd0",
 "isGateway": true, "ipMasq": false,
 "ipam": {"type": "host-local", "ranges": [[{"subnet": "10.77.0.0/16"}]], "routes": [{"dst": "0.0.0.0/0"}]}}]}
EOF
printf 'runtime-endpoint: unix://%s/containerd.sock\nimage-endpoint: unix://%s/containerd.sock\ntimeout: 30\n' "$R" "$R" >"$R/crictl.yaml"
cri() { crictl --config "$R/crictl.yaml" "$@"; }

CTRD_PID=""
PLUGIN_PID=""
# shim_pids: the runc shims serving our containerd, by the PIDs they record
# in their bundles, kept only if their command line names our socket.
shim_pids() {
	local f pid
	for f in "$R"/state/io.containerd.runtime.v2.task/*/*/shim.pid; do
		[ -f "$f" ] || continue
		pid=$(cat "$f")
		tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -qF -- "-address $R/containerd.sock" && echo "$pid"
	done
	return 0
}
remove_all_pods() {
	cri rm -af >/dev/null 2>&1 || true
	local pods
	pods=$(cri pods -q 2>/dev/null || true)
	[ -z "$pods" ] || cri stopp $pods >/dev/null 2>&1 || true
	cri rmp -af >/dev/null 2>&1 || true
}
cleanup() {
	set +e
	local shims p
	[ -S "$R/containerd.sock" ] && [ -n "$CTRD_PID" ] && remove_all_pods
	shims=$(shim_pids)
	if [ -n "$PLUGIN_PID" ] && kill -0 "$PLUGIN_PID" 2>/dev/null; then kill -TERM "$PLUGIN_PID"; fi
	# The runtime-launched plugin, if it outlived containerd, by the PID it printed.
	p=$(plugin_pid "$R/preinst.log")
	if [ -n "$p" ] && grep -q realctrd-plugin "/proc/$p/cmdline" 2>/dev/null; then kill -KILL "$p"; fi
	if [ -n "$CTRD_PID" ] && kill -0 "$CTRD_PID" 2>/dev/null; then
		kill -TERM "$CTRD_PID"
		wait_for 5 bash -c "! kill -0 $CTRD_PID 2>/dev/null" || kill -KILL "$CTRD_PID"
	fi
	# Shims outlive containerd; end the ones this run started.
	for p in $shims; do kill -KILL "$p" 2>/dev/null; done
	mount | awk '{print $3}' | grep "^$R/" | sort -r | while read -r m; do umount -l "$m"; done
	for d in /sys/fs/cgroup/*"$CGROUP_PARENT" /sys/fs/cgroup"$CGROUP_PARENT"; do
		[ -d "$d" ] && find "$d" -depth -type d -exec rmdir {} \; 2>/dev/null
	done
	wait 2>/dev/null
	if [ "$KEEP" != 1 ]; then rm -rf "$R/root" "$R/state" "$R/runc-root"; fi
}
trap cleanup EXIT

# A pre-installed plugin: containerd launches NN-name executables from its
# plugin directory at start, over a socketpair, with only NRI_PLUGIN_NAME,
# NRI_PLUGIN_IDX and NRI_PLUGIN_SOCKET in the environment. The wrapper keeps
# the plugin's output, which the runtime would otherwise discard.
rm -f "$R"/nri-plugins/* "$R/preinst.log" "$R/preinst.stderr"
if [ "$PREINST" = 1 ]; then
	cat >"$R/nri-plugins/40-$PREINST_NAME" <<EOF
#!/bin/sh
exec '$R/bin/realctrd-plugin' $PLUGIN_ARGS >>'$R/preinst.log' 2>>'$R/preinst.stderr'
EOF
	chmod 0755 "$R/nri-plugins/40-$PREINST_NAME"
fi

step "start containerd (own network namespace)"
rm -f "$R/containerd.sock" "$R/nri/nri.sock"
unshare --net -- bash -c "ip link set lo up && exec containerd --config '$R/containerd.toml'" >"$R/containerd.log" 2>&1 &
CTRD_PID=$!
if ! wait_for 30 test -S "$R/containerd.sock" -a -S "$R/nri/nri.sock"; then
	tail -40 "$R/containerd.log"; echo "FAIL: containerd did not come up"; exit 1
fi
for t in pause busybox; do
	ctr -a "$R/containerd.sock" -n k8s.io images import --platform linux/amd64 "$IMG/$t.tar" >/dev/null
done

# ---- 4. pods and containers -----------------------------------------------------
# pod_json NAME NETWORK_MODE (2: host network, 0: own network namespace).
# Every pod logs to a directory of its own.
pod_json() {
	mkdir -p "$R/podlogs/$1"
	cat >"$R/$1.pod.json" <<EOF
{"metadata": {"name": "$1", "namespace": "default", "uid": "uid-$1", "attempt": 0},
 "log_directory": "$R/podlogs/$1",
 "linux": {"cgroup_parent": "$CGROUP_PARENT",
           "security_context": {"namespace_options": {"network": $2, "pid": 1}}}}
EOF
}
# ctr_json POD: the pod's container, logging to a file of its own (containers
# sharing one log file would let a later check pass on an earlier container's
# output). It names its pod, then prints the NRI_ variables it was started
# with.
ctr_json() {
	cat >"$R/$1.ctr.json" <<EOF
{"metadata": {"name": "bb"}, "image": {"image": "$BUSYBOX_IMAGE"}, "log_path": "bb-$1.log",
 "command": ["/bin/sh", "-c", "echo pod=$1; env | grep ^NRI_ | sort; echo env-listed; sleep 3600"], "linux": {}}
EOF
}
# run_pod NAME NETWORK_MODE: creates and starts a pod with one container;
# sets CTR_ID.
run_pod() {
	local pod
	pod_json "$1" "$2"
	ctr_json "$1"
	pod=$(cri runp "$R/$1.pod.json")
	CTR_ID=$(cri create "$pod" "$R/$1.ctr.json" "$R/$1.pod.json")
	cri start "$CTR_ID" >/dev/null
}

step "pod created before the plugin runs"
run_pod early 2

# ---- 5. the plugins ----------------------------------------------------------------
# has LOG REGEX: the plugin output LOG has a line matching REGEX.
has() { grep -qE "$2" "$1"; }
# check_started LABEL LOG NN-NAME SYNC_PODS: registration, configuration,
# synchronization and readiness of one plugin against the upstream runtime.
check_started() {
	local who=$1 log=$2 full=$3 pods=$4
	wait_for 15 has "$log" '^READY' || true
	expect "$who: registered as $full (HANDOVER line printed after Start)" has "$log" "^HANDOVER .* plugin=$full "
	expect "$who: runtime reports handover unavailable" has "$log" '^HANDOVER available=false role=PLUGIN_ROLE_UNSPECIFIED '
	expect "$who: Configure from containerd" has "$log" '^EVENT Configure runtime=containerd '
	expect "$who: Synchronize with $pods pod(s), no takeover" has "$log" "^EVENT Synchronize pods=$pods .*takeover=false$"
	expect "$who: ready as a plain NRI plugin" has "$log" '^READY handover=false$'
}

PLOG=$R/plugin.log
PRE_LOG=$R/preinst.log
PLUGINS=("$PLUGIN_NAME")
if [ "$PREINST" = 1 ]; then
	PLUGINS+=("$PREINST_NAME")
	step "pre-installed plugin (launched by containerd before any pod existed)"
	check_started preinst "$PRE_LOG" "40-$PREINST_NAME" 0
fi

step "start our external plugin"
"$R/bin/realctrd-plugin" -socket "$R/nri/nri.sock" -name "$PLUGIN_NAME" -idx 50 $PLUGIN_ARGS >"$PLOG" 2>"$R/plugin.stderr" &
PLUGIN_PID=$!
check_started external "$PLOG" "50-$PLUGIN_NAME" 1
expect "external: Synchronize lists the pod created before it" has "$PLOG" '^SYNC pod=early$'

# ---- 6. events and adjustments ------------------------------------------------------
# check_pod POD: every plugin saw the pod's and container's creation events,
# and every plugin's env var and annotation reached the container.
check_pod() {
	local pod=$1 name log env ev
	listed() { cri logs "$CTR_ID" 2>/dev/null | grep -q '^env-listed$'; }
	wait_for 10 listed || true
	cri logs "$CTR_ID" >"$R/$pod.ctr.log" 2>&1 || true
	cri inspect "$CTR_ID" >"$R/$pod.inspect.json"
	expect "$pod: the container's log is its own" \
		bash -c "grep -qx 'pod=$pod' '$R/$pod.ctr.log' && [ \$(grep -c '^pod=' '$R/$pod.ctr.log') = 1 ]"
	for name in "${PLUGINS[@]}"; do
		log=$PLOG; [ "$name" = "$PLUGIN_NAME" ] || log=$PRE_LOG
		env=NRI_$(echo "$name" | tr 'a-z.-' 'A-Z__')
		expect "$pod: container process has $env from $name" \
			grep -qx "$env=injected-by-$name" "$R/$pod.ctr.log"
		expect "$pod: OCI spec has $env from $name" \
			grep -qF "\"$env=injected-by-$name\"" "$R/$pod.inspect.json"
		expect "$pod: OCI spec has annotation from $name" \
			grep -qE "\"nri-handover\\.test/$name\": *\"adjusted-by-$name\"" "$R/$pod.inspect.json"
		for ev in RunPodSandbox CreateContainer PostCreateContainer StartContainer PostStartContainer; do
			expect "$pod: $name got $ev" wait_for 5 has "$log" "^EVENT $ev pod=$pod( |$)"
		done
	done
}
PODS=(hostnet)
[ "$NETNS_POD" = 1 ] && PODS+=(netns)
for pod in "${PODS[@]}"; do
	step "pod $pod"
	mode=2; [ "$pod" = netns ] && mode=0
	run_pod "$pod" "$mode"
	check_pod "$pod"
done

step "remove pods"
remove_all_pods
for pod in early "${PODS[@]}"; do
	for ev in StopContainer RemoveContainer StopPodSandbox RemovePodSandbox; do
		expect "$pod: external got $ev" wait_for 10 has "$PLOG" "^EVENT $ev pod=$pod( |$)"
		if [ "$PREINST" = 1 ]; then
			expect "$pod: preinst got $ev" wait_for 10 has "$PRE_LOG" "^EVENT $ev pod=$pod( |$)"
		fi
	done
done

# ---- 7. runtime goes away ---------------------------------------------------------------
step "stop containerd"
PRE_PID=""
[ "$PREINST" = 1 ] && PRE_PID=$(plugin_pid "$PRE_LOG")
shims=$(shim_pids)
kill -TERM "$CTRD_PID"
wait_for 10 bash -c "! kill -0 $CTRD_PID 2>/dev/null" || kill -KILL "$CTRD_PID"
wait "$CTRD_PID" 2>/dev/null || true
CTRD_PID=""
for p in $shims; do kill -KILL "$p" 2>/dev/null || true; done
expect "external: notices the runtime is gone" wait_for 10 has "$PLOG" '^EXIT$'
expect "external: process ends" wait_for 10 bash -c "! kill -0 $PLUGIN_PID 2>/dev/null"
if [ -n "$PRE_PID" ]; then
	expect "preinst: process ends with the runtime" wait_for 10 bash -c "! kill -0 $PRE_PID 2>/dev/null"
	kill -KILL "$PRE_PID" 2>/dev/null || true
fi
for f in "$R/plugin.stderr" "$R/preinst.stderr"; do
	if [ -f "$f" ]; then expect "no panic in $(basename "$f")" bash -c "! grep -iE 'panic|fatal' '$f'"; fi
done

# ---- report ----------------------------------------------------------------------------------
step "external plugin output"
cat "$PLOG"
if [ "$PREINST" = 1 ]; then
	step "pre-installed plugin output"
	cat "$PRE_LOG"
fi
echo "-- containerd about the plugins:"
grep -E "registered as|connected and synchronized" "$R/containerd.log" || true
if [ "$FAILED" -gt 0 ]; then
	echo "== $FAILED check(s) FAILED (logs in $R: plugin.log, preinst.log, *.stderr, containerd.log)"
	exit 1
fi
echo "== all checks passed"
