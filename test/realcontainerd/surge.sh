#!/usr/bin/env bash
# The surge rollout of a handover plugin on a real containerd built on our
# NRI (issue 11, part C; steps 1-3 so far):
#   1. v1 active: pods and containers created, each carries v1's adjustment
#      (in its OCI spec, from crictl inspect, and in its process environment,
#      from a log file of its own);
#   2. v2 surges in while a loop keeps creating pods: it synchronizes and
#      becomes active (its ready file appears); v1 is told it is superseded
#      and stays up, not ready;
#   3. every container created during the run carries exactly one instance's
#      adjustment, the one of the instance active at its creation; none
#      failed, none is unadjusted.
# The plugin (test/realcontainerd/plugin with -handover -instance-adjust) takes
# its instance id and generation from the environment, as a DaemonSet pod gets
# them from the downward API. containerd is built unchanged on this module by
# build-containerd.sh. One line per check, then "N passed, N failed".
#
# Usage: [R=/tmp/nrh] [LOOP_AFTER=5] [KEEP=1] test/realcontainerd/surge.sh
set -euo pipefail

R=${R:-/tmp/nrh}
LOOP_AFTER=${LOOP_AFTER:-5} # pods the loop creates after v2 is ready
REPO=$(cd "$(dirname "$0")/../.." && pwd)
CGROUP_PARENT=/nrisurge
# shellcheck source=lib.sh
. "$REPO/test/realcontainerd/lib.sh"

step "packages and tools"
install_packages
install_crictl
R=$R "$REPO/test/realcontainerd/build-containerd.sh" >"$R/build.log" 2>&1 || { tail -30 "$R/build.log"; exit 1; }
export PATH="$R/ours/bin:$PATH"
tags=()
# Where pkg/stub has the opt-in, the plugin must ask for handover with it.
tags=()
(cd "$REPO" && go build "${tags[@]}" -o "$R/bin/surge-plugin" ./test/realcontainerd/plugin)
containerd --version

step "images and config"
build_images
write_config
rm -f "$R"/nri-plugins/* "$R"/v*.log "$R"/v*.stderr "$R"/v*.ready "$R/loop.txt" "$R/loop.err" "$R/stop-loop" "$R/containers.txt"

declare -A PID=()
LOOP_PID=""
cleanup() {
	set +e
	[ -n "$LOOP_PID" ] && kill "$LOOP_PID" 2>/dev/null
	local p
	for p in "${PID[@]}"; do kill -TERM "$p" 2>/dev/null; done
	cleanup_runtime
}
trap cleanup EXIT

step "start containerd (built on our NRI)"
: >"$R/containerd.log"
start_containerd

# start_instance LABEL INSTANCE GENERATION: one instance of plugin 50-surge,
# identity from the environment.
start_instance() {
	NRI_PLUGIN_INSTANCE_ID=$2 NRI_PLUGIN_GENERATION=$3 "$R/bin/surge-plugin" \
		-socket "$R/nri/nri.sock" -name surge -idx 50 -handover -instance-adjust \
		-ready-file "$R/$1.ready" >"$R/$1.log" 2>"$R/$1.stderr" &
	PID[$1]=$!
}
has() { grep -qE "$2" "$1"; }
alive() { kill -0 "$1" 2>/dev/null; }

# ---- 1. v1 ------------------------------------------------------------------
step "v1 active"
start_instance v1 uid-v1 1
expect "v1: ready file appears" wait_for 20 test -f "$R/v1.ready"
expect "v1: registered with its identity from the environment" has "$R/v1.log" '^HANDOVER .* plugin=50-surge instance=uid-v1 generation=1 '
for pod in first second; do
	run_pod "$pod" 2
	echo "$pod $CTR_ID" >>"$R/containers.txt"
done

# ---- 2. v2 surges in while pods keep being created ------------------------------
# create_loop: pods loop-1, loop-2, ... until $R/stop-loop exists; a line
# "NAME CONTAINER-ID" for each created, "NAME FAILED" for a failure.
create_loop() {
	local i=0 pod ctr
	while [ ! -e "$R/stop-loop" ]; do
		i=$((i + 1))
		pod_json "loop-$i" 2
		ctr_json "loop-$i"
		if pod=$(cri runp "$R/loop-$i.pod.json" 2>>"$R/loop.err") &&
			ctr=$(cri create "$pod" "$R/loop-$i.ctr.json" "$R/loop-$i.pod.json" 2>>"$R/loop.err") &&
			cri start "$ctr" >/dev/null 2>>"$R/loop.err"; then
			echo "loop-$i $ctr" >>"$R/loop.txt"
		else
			echo "loop-$i FAILED" >>"$R/loop.txt"
		fi
	done
}
loop_count() { wc -l <"$R/loop.txt"; }

step "v2 surges in"
: >"$R/loop.txt"
create_loop &
LOOP_PID=$!
wait_for 30 bash -c "[ \$(wc -l <'$R/loop.txt') -ge 2 ]" || true
at_start=$(loop_count) # loop pods created before v2 started
start_instance v2 uid-v2 2
expect "v2: ready file appears" wait_for 30 test -f "$R/v2.ready"
at_ready=$(loop_count)
expect "v2: synchronized (a takeover)" has "$R/v2.log" '^EVENT Synchronize .*takeover=true$'
expect "v1: told it is superseded" wait_for 10 has "$R/v1.log" 'SHUTDOWN_REASON_SUPERSEDED|^ROLE PLUGIN_ROLE_STANDBY'
expect "v1: ready file gone" wait_for 10 bash -c "! test -f '$R/v1.ready'"
expect "v1: process stays up" alive "${PID[v1]}"
wait_for 60 bash -c "[ \$(wc -l <'$R/loop.txt') -ge $((at_ready + 1 + LOOP_AFTER)) ]" || true
touch "$R/stop-loop"
wait "$LOOP_PID" || true
LOOP_PID=""
expect "v1: still up after the rollout" alive "${PID[v1]}"
cat "$R/loop.txt" >>"$R/containers.txt"

# ---- 3. every container: exactly one instance, the active one ------------------
step "check every container"
# adjusted_by POD: the instances that logged an adjustment for POD's container.
adjusted_by() { cat "$R/v1.log" "$R/v2.log" | sed -n "s/^ADJUST pod=$1 container=bb instance=\(.*\)$/\1/p" | sort | tr '\n' ' '; }
n=0
while read -r pod ctr; do
	n=$((n + 1))
	if [ "$ctr" = FAILED ]; then fail "$pod: container created"; continue; fi
	listed() { cri logs "$ctr" 2>/dev/null | grep -q '^env-listed$'; }
	wait_for 10 listed || true
	cri logs "$ctr" >"$R/$pod.ctr.log" 2>&1 || true
	spec=$(cri inspect "$ctr" | sed -n 's/.*"nri-handover.test\/instance": *"\([^"]*\)".*/\1/p' | sort -u | tr '\n' ' ')
	env=$(sed -n 's/^NRI_INSTANCE=//p' "$R/$pod.ctr.log" | tr '\n' ' ')
	by=$(adjusted_by "$pod")
	want=""
	case "$pod" in
	first | second) want="uid-v1 " ;;
	loop-*)
		# Before v2 started: v1. Started after v2 was ready (the one in
		# flight when the ready file appeared may go either way): v2.
		i=${pod#loop-}
		if [ "$i" -le "$at_start" ]; then want="uid-v1 "; elif [ "$i" -gt $((at_ready + 1)) ]; then want="uid-v2 "; fi
		;;
	esac
	expect "$pod: adjusted by exactly one instance ($by)" bash -c "[ '$by' = 'uid-v1 ' ] || [ '$by' = 'uid-v2 ' ]"
	expect "$pod: OCI spec names that instance ($spec)" [ "$spec" = "$by" ]
	expect "$pod: the process has it in its own log ($env)" [ "$env" = "$by" ]
	if [ -n "$want" ]; then expect "$pod: by the active instance (${want% })" [ "$by" = "$want" ]; fi
done <"$R/containers.txt"
expect "containers checked: $n ($at_start loop pods before v2 started, $at_ready before it was ready)" [ "$n" -ge $((2 + at_ready + LOOP_AFTER)) ]
for f in "$R/v1.stderr" "$R/v2.stderr"; do
	expect "no panic in $(basename "$f")" bash -c "! grep -iE 'panic|fatal' '$f'"
done

[ "$FAILED" = 0 ] || echo "== logs in $R: v1.log, v2.log, *.stderr, loop.txt, loop.err, containerd.log"
summary
