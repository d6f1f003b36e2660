# Shared by the real-runtime scripts (../realcontainerd: run.sh, our plugin
# side against stock containerd, surge.sh and the others, containerd built on
# our NRI; ../realdocker/lib.sh; ../realkube/run.sh). Source it after
# setting R (a short scratch directory: unix socket paths stay under 108
# bytes), REPO and CGROUP_PARENT; it defines the check helpers, the software
# and image set-up, containerd's configuration, start and clean-up, and the
# pod and container helpers. Everything lives under $R.

CRICTL_VERSION=${CRICTL_VERSION:-v1.37.0}
CONTAINERD_VERSION=${CONTAINERD_VERSION:-v2.4.2}
KEEP=${KEEP:-0} # 1: keep containerd's root and state (logs and binaries always stay)

[ "$(id -u)" = 0 ] || { echo "$(basename "$0"): needs root" >&2; exit 2; }
# A signal ends the script through its EXIT trap (the clean-up).
trap 'exit 143' TERM
trap 'exit 130' INT
mkdir -p "$R"/{bin,root,state,nri,nri-plugins,nri-conf,runc-root,cni,podlogs,img}
export PATH="$R/bin:$(go env GOROOT)/bin:/usr/sbin:/usr/bin:/sbin:/bin"
START=$SECONDS
step() { echo "== [$((SECONDS - START))s] $*"; }

# shellcheck source=results.sh
. "$(dirname "${BASH_SOURCE[0]}")/results.sh"
FAILED=0
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
# summary: the last line of a run, "N passed, N failed"; the exit status.
PASSED=0
pass() { echo "PASS: $*"; PASSED=$((PASSED + 1)); }
# ledger_counts LOG: the number of differing entries each comparison of the
# adaptation's ledger with SyncFn found, in LOG's order, space-separated.
ledger_counts() {
	sed -n 's/.*ledger compared with SyncFn: \([0-9]*\) differ.*/\1/p' "$1" 2>/dev/null | tr '\n' ' ' | sed 's/ $//'
}
# all_zero "N N ...": at least one count, and every one 0.
all_zero() { [ -n "$1" ] && ! grep -qvx 0 <<<"$(tr ' ' '\n' <<<"$1")"; }
# check_ledger NAME LOG EXACT: print what every comparison of the ledger with
# SyncFn in LOG found; with EXACT=1 (a runtime that relays every change, as
# containerd does) every one must have found 0 differing entries.
check_ledger() {
	local counts
	counts=$(ledger_counts "$2")
	echo "  $1: ledger compared with SyncFn, entries differing at each comparison: ${counts:-no comparison}"
	result "${PART:-all}.ledger-differing" "$(tr ' ' '\n' <<<"$counts" | awk '{s += $1} END {print s + 0}')"
	if [ "$3" = 1 ]; then
		expect "$1: every comparison of the ledger with SyncFn found 0 differing entries (${counts:-none made})" all_zero "$counts"
	fi
}
# With a results file open (results.sh), PART's counts go into it.
summary() {
	echo "$PASSED passed, $FAILED failed"
	result "${PART:-all}.passed" "$PASSED"
	result "${PART:-all}.failed" "$FAILED"
	[ "$FAILED" = 0 ]
}

# install_packages: runc, busybox, the CNI plugins and the tools the scripts
# use, from Debian, if missing.
install_packages() {
	local need=() b
	for b in runc:runc busybox:busybox-static /usr/lib/cni/bridge:containernetworking-plugins \
		ip:iproute2 unshare:util-linux nsenter:util-linux pgrep:procps timeout:coreutils; do
		command -v "${b%%:*}" >/dev/null 2>&1 || need+=("${b#*:}")
	done
	if [ ${#need[@]} -gt 0 ]; then
		apt-get update -qq
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
	fi
}

# install_crictl: crictl with go install, if missing.
install_crictl() {
	[ -x "$R/bin/crictl" ] || (cd "$R" && GOBIN=$R/bin GOFLAGS=-mod=mod go install sigs.k8s.io/cri-tools/cmd/crictl@"$CRICTL_VERSION")
}

# install_stock_containerd: containerd, its runc shim and ctr as released
# (embedding upstream NRI), with go install, if missing.
install_stock_containerd() {
	if [ ! -x "$R/bin/containerd" ] || [ ! -x "$R/bin/containerd-shim-runc-v2" ] || [ ! -x "$R/bin/ctr" ]; then
		(cd "$R" && GOBIN=$R/bin GOFLAGS=-mod=mod go install \
			github.com/containerd/containerd/v2/cmd/containerd@"$CONTAINERD_VERSION" \
			github.com/containerd/containerd/v2/cmd/containerd-shim-runc-v2@"$CONTAINERD_VERSION" \
			github.com/containerd/containerd/v2/cmd/ctr@"$CONTAINERD_VERSION")
	fi
}

# install_both_containerds: stock containerd into $R/stock/bin and ours into
# $R/ours/bin, copied from STOCK and OURS (a part that ran before built them)
# or installed and built; crictl into $R/bin likewise.
install_both_containerds() {
	have() { [ -n "$1" ] && [ -x "$1/containerd" ] && [ -x "$1/containerd-shim-runc-v2" ] && [ -x "$1/ctr" ]; }
	if have "${STOCK:-}"; then
		cp "$STOCK"/{containerd,containerd-shim-runc-v2,ctr} "$R/stock/bin/"
	else
		(R=$R/stock; install_stock_containerd)
	fi
	if [ -n "${STOCK:-}" ] && [ -x "$STOCK/crictl" ]; then cp "$STOCK/crictl" "$R/bin/"; else install_crictl; fi
	if have "${OURS:-}"; then
		cp "$OURS"/{containerd,containerd-shim-runc-v2,ctr} "$R/ours/bin/"
	else
		R=$R "$REPO/test/realcontainerd/build-containerd.sh" >"$R/build.log" 2>&1 || { tail -30 "$R/build.log"; exit 1; }
	fi
}

# oci_archive NAME ROOTFS OUT ENTRYPOINT_JSON [FIELD] writes a one-layer OCI
# image layout as a tar that `ctr images import` and `docker load` accept;
# FIELD (Entrypoint by default, Cmd for images whose command `docker run`
# replaces) is the config field ENTRYPOINT_JSON goes to.
oci_archive() {
	local name=$1 rootfs=$2 out=$3 entry=$4 field=${5:-Entrypoint} w blob
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
	printf '{"architecture":"amd64","os":"linux","rootfs":{"type":"layers","diff_ids":["sha256:%s"]},"config":{"%s":%s,"Env":["PATH=/bin"],"WorkingDir":"/"}}' \
		"$layer" "$field" "$entry" >"$w/config"
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


# build_images: a pause and a busybox image, by hand (no registry needed);
# sets IMG, PAUSE_IMAGE and BUSYBOX_IMAGE.
build_images() {
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
}

# write_config: containerd's configuration and crictl's.
write_config() {
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
  plugin_request_timeout = '${NRI_REQUEST_TIMEOUT:-2s}'
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
}
cri() { crictl --config "$R/crictl.yaml" "$@"; }

CTRD_PID=""
# shim_pids: the runc shims serving our containerd: the processes whose
# command line is a containerd shim's naming our socket (`-address`, unique
# to $R). A shim that was starting when containerd died has no shim.pid in
# its bundle yet, so the bundles are not enough.
shim_pids() {
	pgrep -f -- "containerd-shim[^ ]* .*-address $R/containerd.sock( |\$)" || true
}
# remove_all_pods: through CRI, each call bounded (crictl's own timeout
# covers a call, not a runtime that stopped answering).
remove_all_pods() {
	timeout 60 crictl --config "$R/crictl.yaml" rm -af >/dev/null 2>&1 || true
	local pods
	pods=$(timeout 20 crictl --config "$R/crictl.yaml" pods -q 2>/dev/null || true)
	[ -z "$pods" ] || timeout 60 crictl --config "$R/crictl.yaml" stopp $pods >/dev/null 2>&1 || true
	timeout 60 crictl --config "$R/crictl.yaml" rmp -af >/dev/null 2>&1 || true
}

# start_containerd: containerd with NRI on, in its own network namespace
# (the CNI bridge never touches the host's), and the images imported.
start_containerd() {
	rm -f "$R/containerd.sock" "$R/nri/nri.sock"
	unshare --net -- bash -c "ip link set lo up && exec containerd --config '$R/containerd.toml'" >>"$R/containerd.log" 2>&1 &
	CTRD_PID=$!
	if ! wait_for 30 test -S "$R/containerd.sock" -a -S "$R/nri/nri.sock"; then
		tail -40 "$R/containerd.log"; echo "FAIL: containerd did not come up"; exit 1
	fi
	local t
	for t in pause busybox; do
		ctr -a "$R/containerd.sock" -n k8s.io images import --platform linux/amd64 "$IMG/$t.tar" >/dev/null
	done
}

# stop_containerd: SIGTERM, SIGKILL after 10 s.
stop_containerd() {
	[ -n "$CTRD_PID" ] || return 0
	if kill -0 "$CTRD_PID" 2>/dev/null; then
		kill -TERM "$CTRD_PID"
		wait_for 10 bash -c "! kill -0 $CTRD_PID 2>/dev/null" || kill -KILL "$CTRD_PID"
	fi
	wait "$CTRD_PID" 2>/dev/null || true
	CTRD_PID=""
}

# cleanup_runtime: pods first, then containerd, then the shims that served it
# (they outlive containerd), mounts under $R and the pod cgroups. Plugins are
# the caller's, before this.
cleanup_runtime() {
	set +e
	local shims p
	# Through CRI only while containerd runs (a signal to the process group
	# may have ended it already); what it leaves, the rest below removes.
	[ -n "$CTRD_PID" ] && kill -0 "$CTRD_PID" 2>/dev/null && remove_all_pods
	shims=$(shim_pids)
	stop_containerd
	for p in $shims; do kill -KILL "$p" 2>/dev/null; done
	# Container processes left without their shim (containerd went away
	# before it removed the pods) would keep their cgroups and mounts busy.
	local procs
	procs=$(find /sys/fs/cgroup/*"$CGROUP_PARENT" /sys/fs/cgroup"$CGROUP_PARENT" -name cgroup.procs -exec cat {} + 2>/dev/null | sort -u)
	for p in $procs; do kill -KILL "$p" 2>/dev/null; done
	for p in $procs; do wait_for 5 bash -c "! kill -0 $p 2>/dev/null"; done
	mount | awk '{print $3}' | grep "^$R/" | sort -r | while read -r m; do umount -l "$m"; done
	for d in /sys/fs/cgroup/*"$CGROUP_PARENT" /sys/fs/cgroup"$CGROUP_PARENT"; do
		[ -d "$d" ] && find "$d" -depth -type d -exec rmdir {} \; 2>/dev/null
	done
	wait 2>/dev/null
	if [ "$KEEP" != 1 ]; then rm -rf "$R/root" "$R/state" "$R/runc-root"; fi
}

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
# sets POD_ID and CTR_ID.
run_pod() {
	pod_json "$1" "$2"
	ctr_json "$1"
	POD_ID=$(cri runp "$R/$1.pod.json")
	CTR_ID=$(cri create "$POD_ID" "$R/$1.ctr.json" "$R/$1.pod.json")
	cri start "$CTR_ID" >/dev/null
}
# list_pod LIST POD ERRFILE: like run_pod with a host-network pod, for a list
# that records failures instead of aborting: "POD CTR-ID POD-ID" appended to
# $R/LIST.list, or "POD FAILED POD-ID" when a step failed (crictl's error
# appended to ERRFILE).
list_pod() {
	local p="" c=""
	pod_json "$2" 2
	ctr_json "$2"
	if p=$(cri runp "$R/$2.pod.json" 2>>"$3") &&
		c=$(cri create "$p" "$R/$2.ctr.json" "$R/$2.pod.json" 2>>"$3") &&
		cri start "$c" >/dev/null 2>>"$3"; then
		echo "$2 $c $p" >>"$R/$1.list"
	else
		echo "$2 FAILED $p" >>"$R/$1.list"
	fi
}


# stop_pids ends the processes a script started: TERM to each, then KILL to
# any still alive after 5 s.
stop_pids() {
	local p
	# (|| true: a process that already ended is no error under set -e)
	for p in "$@"; do kill -TERM "$p" 2>/dev/null || true; done
	for p in "$@"; do
		wait_for 5 bash -c "! kill -0 $p 2>/dev/null" || kill -KILL "$p" 2>/dev/null || true
	done
	return 0
}

# has FILE REGEX; alive PID; gone PID.
has() { grep -qsE "$2" "$1"; }
alive() { kill -0 "$1" 2>/dev/null; }
gone() { ! kill -0 "$1" 2>/dev/null; }
