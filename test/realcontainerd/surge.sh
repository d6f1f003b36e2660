#!/usr/bin/env bash
# Handover on a real containerd built, unchanged, on our NRI (issue 11,
# part C), with real pods through crictl: the adapter of the scenario
# ../realruntime/scenario.sh (the steps; ../realdocker/e2e.sh runs them on
# dockerd) for containerd, its hooks set below the set-up:
#   1. v1 active: pods and containers created, each carries v1's stamp (the
#      annotation annotator.nri-handover.io/handled-by) in its OCI spec, as
#      containerd keeps it (crictl inspect) and as runc ran it (the bundle's
#      config.json); each container runs and logs to a file of its own;
#   2. v2 surges in while a loop keeps creating pods: it synchronizes,
#      skipping every container its predecessor stamped (none is unstamped),
#      and becomes active (its ready file appears); v1 is told it is
#      superseded, releases the state file and stays up, not ready; v2 finds
#      the state file released by v1 (a clean hand-off);
#   3. every container created during the run was stamped by exactly one
#      instance, the one active at its creation (the instances' logs, the OCI
#      spec, the bundle); none failed, none is unstamped (checked for every
#      step's containers);
#   4. rollback: v1, deleted, exits 0; v1's version as a new instance with a
#      newer generation (v3) takes over; the superseded v2, restarted with
#      its instance id as the kubelet would, is refused, twice, exits 1, and
#      v3 never stops being ready;
#   5. kill -9 of a successor (v4) in the middle of its handover, during its
#      full synchronization (outside the sync gate) and in its catch-up delta
#      round (under the gate, after its synchronization, before the switch):
#      v3 keeps serving throughout and keeps the state file; then v4,
#      restarted with the same instance id, takes over;
#   6. containerd restarts with the plugins running: the active instance
#      exits 2 (the runtime went away) and, restarted as the kubelet would,
#      synchronizes as a fresh join, with the containers that outlived the
#      restart in its state file; the superseded one stays down (held, not
#      ready); one instance of the plugin registers;
#   7. two instances of an unmodified upstream v0.12.5 plugin (legacy, same
#      name and index) next to ours, while ours hands over from v4 to v5:
#      both get every event and adjust every container, as upstream NRI has it.
# The plugin is the sample plugin, examples/annotator, built from its own
# code by test/realcontainerd/annotator (which adds only -hold-sync, to stop
# an instance inside a synchronization round for step 5); each instance takes
# its instance id and generation from the environment, as a DaemonSet pod
# gets them from the downward API, and all share one state file, as the
# DaemonSet's hostPath. The checks read what the sample logs (stderr, one
# structured line per fact) and what it stamps. containerd is built by
# build-containerd.sh; the upstream plugin (test/upstream/plugin) is built
# with GOWORK=off against the released containerd/nri v0.12.5. One line per
# check, then "N passed, N failed".
#
# Usage: [R=/tmp/nrh] [LOOP_AFTER=5] [KEEP=1] test/realcontainerd/surge.sh
set -euo pipefail

R=${R:-/tmp/nrh}
STATE=$R/annotator-state.json # the annotators' state file, shared as a DaemonSet's hostPath
LOOP_AFTER=${LOOP_AFTER:-5} # pods a loop creates after the event it waits for
REPO=$(cd "$(dirname "$0")/../.." && pwd)
CGROUP_PARENT=/nrisurge-$(basename "$R") # one per scratch directory: clean-up kills what is in it
# Long enough that the script kills a held plugin (step 5) before containerd
# gives up on it; containerd's default is 2s.
NRI_REQUEST_TIMEOUT=10s
# shellcheck source=../realruntime/lib.sh
. "$REPO/test/realruntime/lib.sh"
# shellcheck source=../realruntime/instances.sh
. "$REPO/test/realruntime/instances.sh"
# shellcheck source=../realruntime/scenario.sh
. "$REPO/test/realruntime/scenario.sh"

step "packages and tools"
install_packages
install_crictl
R=$R "$REPO/test/realcontainerd/build-containerd.sh" >"$R/build.log" 2>&1 || { tail -30 "$R/build.log"; exit 1; }
export PATH="$R/ours/bin:$PATH"
(cd "$REPO" && go build -o "$R/bin/surge-annotator" ./test/realcontainerd/annotator)
# Upstream's plugin links the released containerd/nri: never in a workspace.
(cd "$REPO" && GOWORK=off go build -o "$R/bin/upstream-plugin" ./test/upstream/plugin)
containerd --version

step "images and config"
build_images
write_config
rm -rf "$R"/nri-plugins/* "$R"/v*.log "$R"/v*.stderr "$R"/v*.ready "$R"/up-*.jsonl "$R"/up-*.stderr "$STATE"* \
	"$R"/*.list "$R"/stop-* "$R"/hold-* "$R"/gaps-* "$R/loop.err" \
	"$R"/*.pod.json "$R"/*.ctr.json "$R"/*.ctr.log "$R"/*.inspect.json "$R"/podlogs/*

# The hooks of the scenario (../realruntime/scenario.sh).
RUNTIME=containerd
RUNTIME_LOG=$R/containerd.log
LEDGER_EXACT=1 # containerd relays every change: the ledger compares equal
START_TITLE="start containerd (built on our NRI)"
UNIT=pod
T_DELETED="its pod is deleted" T_EXIT2=" (the kubelet restarts it)" T_FRESH=", all its own or its predecessors'"
LOGS_HINT="v*.log (the annotators), annotator-state.json, up-*.jsonl, *.stderr, *.list, loop.err, containerd.log"
rt_boot() { : >"$R/containerd.log"; start_containerd; }
rt_start() { start_containerd; }
rt_stop() { stop_containerd; }
rt_cleanup() { cleanup_runtime; }
rt_mark() { loop_count s5; }
rt_past() { loop_past s5 "$1"; }

ANNOTATOR=$R/bin/surge-annotator # has, alive, gone: lib.sh; start_instance and the checks: instances.sh
ANNOTATOR_FLAGS=()

# The lists: one line "POD CONTAINER-ID POD-ID" per pod ("POD FAILED" when
# its creation failed) in $R/NAME.list; WANT[POD] is the stamp (a regex:
# "a|b" when either may be right) of the instance that must have handled it.
# make_ctrs LIST INSTANCE POD...: host-network pods, one after the other.
make_ctrs() {
	local list=$1 want=$2 pod
	shift 2
	for pod in "$@"; do
		run_pod "$pod" 2
		echo "$pod $CTR_ID $POD_ID" >>"$R/$list.list"
		WANT[$pod]=$want
	done
}
# create_loop NAME: pods NAME-1, NAME-2, ... until $R/stop-NAME exists.
create_loop() {
	local name=$1 i=0
	while [ ! -e "$R/stop-$name" ]; do
		i=$((i + 1))
		list_pod "$name" "$name-$i" "$R/loop.err"
	done
}
# start_loop, loop_past, stop_loop, want_loop, watch_ready, stop_watch: ../realruntime/instances.sh

# stamped_by POD: the stamps of the instances that logged stamping POD's
# container (the annotator's "stamped container" line), space-separated.
stamped_by() {
	cat "$R"/v*.log | sed -n "s/.*msg=\"stamped container\" pod=$1 namespace=default container=bb .* stamp=\([^ ]*\)$/\1/p" |
		sort | paste -sd' '
}
# annotation FILE: the values of the annotator's annotation in the JSON FILE.
annotation() { grep -oE '"annotator\.nri-handover\.io/handled-by": *"[^"]*"' "$1" 2>/dev/null | sed 's/.*: *"\(.*\)"/\1/' | sort -u | paste -sd' '; }
# check_list NAME: every container of the list ran and has its own log, was
# stamped by exactly one instance, the wanted one, whose stamp is in its OCI
# spec as containerd keeps it (crictl inspect) and as runc ran it (the
# bundle's config.json).
check_list() {
	local n=0 pod ctr spec bundle by
	while read -r pod ctr _; do
		n=$((n + 1))
		if [ "$ctr" = FAILED ]; then fail "$pod: container created"; continue; fi
		wait_for 10 bash -c "crictl --config '$R/crictl.yaml' logs '$ctr' 2>/dev/null | grep -q '^env-listed$'" || true
		cri logs "$ctr" >"$R/$pod.ctr.log" 2>&1 || true
		cri inspect "$ctr" >"$R/$pod.inspect.json" 2>&1 || true
		spec=$(annotation "$R/$pod.inspect.json")
		bundle=$(annotation "$R/state/io.containerd.runtime.v2.task/k8s.io/$ctr/config.json")
		by=$(stamped_by "$pod")
		expect "$pod: stamped by exactly one instance, ${WANT[$pod]:-?} ($by)" \
			bash -c "[[ '$by' =~ ^(${WANT[$pod]:-none})$ ]]"
		expect "$pod: its OCI spec ($spec) and its bundle ($bundle) carry that stamp; it ran, logging to its own file" \
			bash -c "[ '$spec' = '$by' ] && [ '$bundle' = '$by' ] && grep -qx 'pod=$pod' '$R/$pod.ctr.log' && [ \$(grep -c '^pod=' '$R/$pod.ctr.log') = 1 ]"
	done <"$R/$1.list"
	expect "$1: $n containers checked" [ "$n" -ge 1 ]
}

# v1's identity, as containerd's CRI hands the environment to nobody: the
# annotator logs it.
v1_checks_pre() {
	expect "v1: starts with its identity from the environment" \
		has "$R/v1.log" '^.* msg="annotator: starting" plugin=50-annotator version=1\.0\.0 instance=uid-v1 generation=1 '
}
v4r_checks() { expect "v4 (restarted): the state file lists before-restart as its own" state_lists s6 2.1.0/uid-v4; }
upstream_flags() { UP_FLAGS=(-annotate "nri-handover.test/upstream-$1=adjusted-by-upstream-$1"); }
# check_upstream U: every event of every pod of s7 once, U's annotation in
# every container.
check_upstream() {
	local u=$1 ok=0 bad="" pod ctr podid ev
	while read -r pod ctr podid; do
		[ "$ctr" != FAILED ] || continue
		for ev in "RunPodSandbox\",\"pod\":\"$podid\"" "CreateContainer\",\"pod\":\"$podid\",\"ctr\":\"$ctr\"" \
			"StartContainer\",\"pod\":\"$podid\",\"ctr\":\"$ctr\""; do
			[ "$(grep -cF "\"ev\":\"$ev" "$R/up-$u.jsonl")" = 1 ] || bad+=" $pod:${ev%%\"*}"
		done
		grep -qE "\"nri-handover\\.test/upstream-$u\": *\"adjusted-by-upstream-$u\"" "$R/$pod.inspect.json" || bad+=" $pod:annotation"
		ok=$((ok + 1))
	done <"$R/s7.list"
	expect "upstream-$u: every event of the $ok pods exactly once, and its annotation in every container${bad:+ (missing:$bad)}" [ -z "$bad" ]
}

run_scenario
