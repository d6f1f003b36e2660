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
#      "HANDOVER available=false"; then the sample plugin (examples/annotator,
#      which opts into handover) and checks that it is told handover is not
#      offered, synchronizes (finding the earlier container unstamped) and
#      turns ready;
#   6. creates pods (host network, and with NETNS_POD=1 one with its own
#      network namespace over a CNI bridge) and containers through CRI and
#      checks the events and that each plugin's adjustment (an environment
#      variable and an annotation) reached each container, and the sample's
#      stamp;
#   7. removes everything, stops containerd and checks that the plugins see
#      the connection end (the sample exits 2, for its restart).
# It exits non-zero if any check fails. Needs root, Debian apt and the Go
# module proxy. `make e2e-containerd` (e2e.sh) runs it, then surge.sh.
#
# Usage: [R=/tmp/nrc] [NETNS_POD=1] [PREINST=1] [KEEP=1] [PLUGIN_ARGS=...] test/realcontainerd/run.sh
# PLUGIN_ARGS adds plugin flags; PLUGIN_ARGS=-adjust=false must make it fail.
set -euo pipefail

R=${R:-/tmp/nrc}                     # keep it short: unix socket paths < 108 bytes
NETNS_POD=${NETNS_POD:-1}
PLUGIN_ARGS=${PLUGIN_ARGS:-}
PREINST=${PREINST:-1}
REPO=$(cd "$(dirname "$0")/../.." && pwd)
CGROUP_PARENT=/nrirealctrd-$(basename "$R") # one per scratch directory: clean-up kills what is in it
PLUGIN_NAME=realctrd                 # the external instance, 50-realctrd
PREINST_NAME=preinst                 # the runtime-launched instance, 40-preinst
# shellcheck source=../realruntime/lib.sh
. "$REPO/test/realruntime/lib.sh"

# ---- 1. software ------------------------------------------------------------
step "packages and tools"
install_packages
install_stock_containerd
install_crictl
(cd "$REPO" && go build -o "$R/bin/realctrd-plugin" ./test/realcontainerd/plugin)
(cd "$REPO" && go build -o "$R/bin/annotator" ./examples/annotator)
containerd --version

# ---- 2. images --------------------------------------------------------------
step "images"
build_images

# ---- 3. containerd ------------------------------------------------------------
step "config"
write_config

PLUGIN_PID=""
ANN_PID=""
cleanup() {
	set +e
	local p
	if [ -n "$PLUGIN_PID" ] && kill -0 "$PLUGIN_PID" 2>/dev/null; then kill -TERM "$PLUGIN_PID"; fi
	if [ -n "$ANN_PID" ] && kill -0 "$ANN_PID" 2>/dev/null; then kill -TERM "$ANN_PID"; fi
	# The runtime-launched plugin, if it outlived containerd, by the PID it printed.
	p=$(plugin_pid "$R/preinst.log")
	if [ -n "$p" ] && grep -q realctrd-plugin "/proc/$p/cmdline" 2>/dev/null; then kill -KILL "$p"; fi
	cleanup_runtime
}
trap cleanup EXIT

# A pre-installed plugin: containerd launches NN-name executables from its
# plugin directory at start, over a socketpair, with only NRI_PLUGIN_NAME,
# NRI_PLUGIN_IDX and NRI_PLUGIN_SOCKET in the environment. The wrapper keeps
# the plugin's output, which the runtime would otherwise discard.
rm -f "$R"/nri-plugins/* "$R/preinst.log" "$R/preinst.stderr" "$R/annotator.log" "$R/annotator.ready" "$R/annotator-state.json"
if [ "$PREINST" = 1 ]; then
	cat >"$R/nri-plugins/40-$PREINST_NAME" <<EOF
#!/bin/sh
exec '$R/bin/realctrd-plugin' $PLUGIN_ARGS >>'$R/preinst.log' 2>>'$R/preinst.stderr'
EOF
	chmod 0755 "$R/nri-plugins/40-$PREINST_NAME"
fi

step "start containerd (own network namespace)"
: >"$R/containerd.log"
start_containerd

# ---- 4. pods and containers -----------------------------------------------------
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

# The sample plugin opts into handover; on an upstream runtime it must run as
# a plain NRI plugin: ready once synchronized, the state file its own.
step "start the sample plugin (examples/annotator)"
ALOG=$R/annotator.log
NRI_PLUGIN_INSTANCE_ID=uid-a1 NRI_PLUGIN_GENERATION=1 "$R/bin/annotator" -socket "$R/nri/nri.sock" -version 1.0.0 \
	-ready-file "$R/annotator.ready" -state-file "$R/annotator-state.json" >"$ALOG" 2>&1 &
ANN_PID=$!
expect "annotator: ready file appears" wait_for 15 test -f "$R/annotator.ready"
expect "annotator: told the runtime does not know handover (upstream NRI)" \
	has "$ALOG" 'plugin 50-annotator: the runtime does not know NRI handover \(upstream NRI\); handover unavailable, ready once synchronized'
expect "annotator: synchronized, the container created before any annotator unstamped" \
	has "$ALOG" '^.* msg=synchronized containers=1 mine=0 skipped=0 unstamped=1 pods=1$'
expect "annotator: owns the state file (no roles without handover)" has "$ALOG" 'msg="owns the state file" .* hand-off=fresh'

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
	expect "$pod: the annotator stamped it, in its log and its OCI spec" \
		bash -c "grep -qE 'msg=\"stamped container\" pod=$pod .* stamp=1\.0\.0/uid-a1$' '$ALOG' &&
			grep -qE '\"annotator\.nri-handover\.io/handled-by\": *\"1\.0\.0/uid-a1\"' '$R/$pod.inspect.json'"
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
stop_containerd
for p in $shims; do kill -KILL "$p" 2>/dev/null || true; done
expect "external: notices the runtime is gone" wait_for 10 has "$PLOG" '^EXIT$'
expect "external: process ends" wait_for 10 bash -c "! kill -0 $PLUGIN_PID 2>/dev/null"
ann_rc=0
wait_for 10 bash -c "! kill -0 $ANN_PID 2>/dev/null" || kill -KILL "$ANN_PID"
wait "$ANN_PID" || ann_rc=$?
ANN_PID=""
expect "annotator: exits 2 when the runtime goes away ($ann_rc), for the kubelet to restart it" \
	bash -c "[ $ann_rc = 2 ] && grep -qE 'msg=\"annotator: stopped\" .* exit=2$' '$ALOG'"
if [ -n "$PRE_PID" ]; then
	expect "preinst: process ends with the runtime" wait_for 10 bash -c "! kill -0 $PRE_PID 2>/dev/null"
	kill -KILL "$PRE_PID" 2>/dev/null || true
fi
for f in "$R/plugin.stderr" "$R/preinst.stderr" "$ALOG"; do
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
[ "$FAILED" = 0 ] || echo "== logs in $R: plugin.log, preinst.log, *.stderr, containerd.log"
summary
