# shellcheck shell=bash
# Shared by the Docker Engine scripts (e2e.sh: handover on dockerd built on
# our NRI; nri-tests.sh: moby's own NRI integration tests, stock and ours).
# Source it after setting R (short: unix socket paths stay under 108 bytes)
# and REPO. It sources test/realruntime/lib.sh for the check helpers,
# wait_for, stop_pids, the Debian packages, stock containerd and the image
# archives, and adds: containerd as dockerd's backend (its own NRI and CRI
# off: NRI lives in dockerd here), dockerd in a network namespace of its
# own, the busybox image loaded with `docker load`, and the clean-up.
# Everything lives under $R; containers' cgroups under $CGROUP_PARENT.

CGROUP_PARENT=${CGROUP_PARENT:-/nrdk-$(basename "$R")}
# The docker CLI (a client only: this machine has no engine), found before
# realruntime/lib.sh narrows PATH.
DOCKER_CLI=${DOCKER_CLI:-$(command -v docker || true)}
# shellcheck source=../realruntime/lib.sh
. "$REPO/test/realruntime/lib.sh"
mkdir -p "$R"/{docker,dx,nri,nri-plugins,nri-conf}
[ -x "$DOCKER_CLI" ] || { echo "$(basename "$0"): needs the docker CLI (set DOCKER_CLI)" >&2; exit 1; }
ln -sf "$DOCKER_CLI" "$R/bin/docker"
export DOCKER_HOST=unix://$R/docker.sock
BUSYBOX=docker.io/library/busybox:latest

RUNC_VERSION=${RUNC_VERSION:-v1.5.3}
# install_runc: runc $RUNC_VERSION in $R/bin (first in PATH), with seccomp.
# dockerd v2 gives every container a time namespace, which Debian's runc
# 1.1.5 does not know ("namespace {"time" ""} does not exist").
install_runc() {
	if ! "$R/bin/runc" --version 2>/dev/null | grep -q "^runc version ${RUNC_VERSION#v}$"; then
		dpkg -s libseccomp-dev >/dev/null 2>&1 || { apt-get update -qq; DEBIAN_FRONTEND=noninteractive apt-get install -y -qq libseccomp-dev >/dev/null; }
		(cd "$R" && GOBIN=$R/bin GOWORK=off GOFLAGS=-mod=mod go install -tags seccomp github.com/opencontainers/runc@"$RUNC_VERSION")
	fi
}

# write_containerd_config: containerd for dockerd only, everything under $R.
write_containerd_config() {
	cat >"$R/containerd.toml" <<EOF
version = 4
root = '$R/root'
state = '$R/state'
imports = []
disabled_plugins = ['io.containerd.nri.v1.nri', 'io.containerd.grpc.v1.cri', 'io.containerd.cri.v1.runtime', 'io.containerd.cri.v1.images']
[plugins.'io.containerd.server.v1.grpc']
  address = '$R/containerd.sock'
[plugins.'io.containerd.server.v1.ttrpc']
  address = '$R/containerd.sock.ttrpc'
EOF
}

# start_backend: containerd for dockerd (stock v2.4.2: NRI lives in dockerd).
start_backend() {
	write_containerd_config
	rm -f "$R/containerd.sock"
	# CTRD_PID: realruntime/lib.sh's stop_containerd and shim_pids use it.
	containerd --config "$R/containerd.toml" >>"$R/containerd.log" 2>&1 &
	# shellcheck disable=SC2034
	CTRD_PID=$!
	wait_for 30 test -S "$R/containerd.sock" || { tail -30 "$R/containerd.log"; echo "FAIL: containerd did not come up"; exit 1; }
}

# build_busybox: a one-layer busybox image archive, $IMG/busybox.tar, named
# as Docker Hub's (nothing is pulled: every tag the tests use points to it).
build_busybox() {
	IMG=$R/img
	rm -rf "$IMG/bb-root"
	mkdir -p "$IMG/bb-root"/{bin,dev,etc,proc,sys,tmp}
	cp "$(command -v busybox)" "$IMG/bb-root/bin/busybox"
	local a
	for a in sh sleep env cat echo grep sort touch true top; do ln -sf busybox "$IMG/bb-root/bin/$a"; done
	oci_archive "$BUSYBOX" "$IMG/bb-root" "$IMG/busybox.tar" '["sh"]' Cmd
}

DOCKERD_PID=""
# start_dockerd DOCKERD [ARGS...]: dockerd on our containerd, in a network
# namespace of its own (unshare --net: its links never touch the host's),
# its data, exec root, pid file and API socket under $R, NRI on with the
# external socket $R/nri/nri.sock; waits until it answers.
start_dockerd() {
	local bin=$1
	shift
	rm -f "$R/docker.sock" "$R/nri/nri.sock"
	unshare --net -- bash -c 'ip link set lo up && exec "$@"' dockerd "$bin" \
		--config-file "$R/daemon.json" --containerd "$R/containerd.sock" \
		--containerd-namespace nrdk --containerd-plugins-namespace nrdkp \
		--data-root "$R/docker" --exec-root "$R/dx" --pidfile "$R/docker.pid" -H "$DOCKER_HOST" \
		--iptables=false --ip6tables=false --userland-proxy=false --bridge=none --cgroup-parent "$CGROUP_PARENT" \
		--nri-opts "enable=true,socket-path=$R/nri/nri.sock,plugin-path=$R/nri-plugins,plugin-config-path=$R/nri-conf" \
		"$@" >>"$R/dockerd.log" 2>&1 &
	DOCKERD_PID=$!
	if ! wait_for "${DOCKERD_WAIT:-60}" docker_up; then
		tail -40 "$R/dockerd.log"; timeout 5 docker version 2>&1 | tail -3; echo "FAIL: dockerd did not come up"; exit 1
	fi
}
docker_up() { timeout 5 docker version >/dev/null 2>&1 && test -S "$R/nri/nri.sock"; }

# stop_dockerd: SIGTERM, SIGKILL after 20 s.
stop_dockerd() {
	[ -n "$DOCKERD_PID" ] || return 0
	if kill -0 "$DOCKERD_PID" 2>/dev/null; then
		kill -TERM "$DOCKERD_PID"
		wait_for 20 bash -c "! kill -0 $DOCKERD_PID 2>/dev/null" || kill -KILL "$DOCKERD_PID"
	fi
	wait "$DOCKERD_PID" 2>/dev/null || true
	DOCKERD_PID=""
}

# cleanup_docker: containers through dockerd, then dockerd, containerd, the
# shims that served it, what runs in our cgroups, mounts under $R (and the
# given extra roots), the cgroups.
cleanup_docker() {
	set +e
	local shims p procs
	if [ -n "$DOCKERD_PID" ] && kill -0 "$DOCKERD_PID" 2>/dev/null; then
		local ids
		mapfile -t ids < <(timeout 20 docker ps -aq 2>/dev/null)
		[ ${#ids[@]} = 0 ] || timeout 60 docker rm -f "${ids[@]}" >/dev/null 2>&1
	fi
	stop_dockerd
	shims=$(shim_pids)
	stop_containerd
	for p in $shims; do kill -KILL "$p" 2>/dev/null; done
	procs=$(find /sys/fs/cgroup/*"$CGROUP_PARENT" /sys/fs/cgroup"$CGROUP_PARENT" -name cgroup.procs -exec cat {} + 2>/dev/null | sort -u)
	for p in $procs; do kill -KILL "$p" 2>/dev/null; done
	for p in $procs; do wait_for 5 bash -c "! kill -0 $p 2>/dev/null"; done
	local root
	for root in "$R" "$@"; do
		mount | awk '{print $3}' | grep "^$root/" | sort -r | while read -r m; do umount -l "$m"; done
	done
	for p in /sys/fs/cgroup/*"$CGROUP_PARENT" /sys/fs/cgroup"$CGROUP_PARENT"; do
		[ -d "$p" ] && find "$p" -depth -type d -exec rmdir {} \; 2>/dev/null
	done
	wait 2>/dev/null
	if [ "$KEEP" != 1 ]; then rm -rf "$R/root" "$R/state" "$R/docker" "$R/dx"; fi
}
