#!/usr/bin/env bash
# Handover on a real containerd built, unchanged, on our NRI (issue 11,
# part C), with real pods through crictl:
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
# shellcheck source=lib.sh
. "$REPO/test/realcontainerd/lib.sh"
# shellcheck source=instances.sh
. "$REPO/test/realcontainerd/instances.sh"

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

declare -A PID=() STAMP=()
LOOP_PID=""
WATCH_PID=""
cleanup() {
	set +e
	[ -n "$LOOP_PID" ] && kill "$LOOP_PID" 2>/dev/null
	[ -n "$WATCH_PID" ] && kill "$WATCH_PID" 2>/dev/null
	stop_pids "${PID[@]}"
	cleanup_runtime
}
trap cleanup EXIT

step "start containerd (built on our NRI)"
: >"$R/containerd.log"
start_containerd

ANNOTATOR=$R/bin/surge-annotator # has, alive, gone: lib.sh; start_instance and the checks: instances.sh
ANNOTATOR_FLAGS=()

# The lists: one line "POD CONTAINER-ID POD-ID" per pod ("POD FAILED" when
# its creation failed) in $R/NAME.list; WANT[POD] is the stamp (a regex:
# "a|b" when either may be right) of the instance that must have handled it.
declare -A WANT=()
# make_pods LIST INSTANCE POD...: host-network pods, one after the other.
make_pods() {
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
# start_loop, loop_past, stop_loop, want_loop, watch_ready, stop_watch: instances.sh

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

# ---- 1. v1 ------------------------------------------------------------------
step "1. v1 active"
start_instance v1 uid-v1 1 1.0.0
expect "v1: ready file appears" wait_for 20 test -f "$R/v1.ready"
expect "v1: starts with its identity from the environment" \
	has "$R/v1.log" '^.* msg="annotator: starting" plugin=50-annotator version=1\.0\.0 instance=uid-v1 generation=1 '
expect "v1: containerd (built on our NRI) offers handover" has "$R/v1.log" 'plugin 50-annotator: runtime \(NRI [^)]*\) offers handover'
expect "v1: takes the state file, the first owner" has "$R/v1.log" 'msg="owns the state file" .* epoch=1 hand-off=fresh'
make_pods s1 1.0.0/uid-v1 first second
expect "v1: the state file is v1's and lists its containers" state_lists s1 1.0.0/uid-v1

# ---- 2. v2 surges in while pods keep being created ------------------------------
step "2. v2 surges in"
surge s2 v2 uid-v2 2 2.0.0 v1
stop_loop s2
expect "v1: still up after the rollout" alive "${PID[v1]}"
want_loop s2 1.0.0/uid-v1 2.0.0/uid-v2 "$AT_START" "$AT_READY"

# ---- 3. every container: exactly one instance, the active one ------------------
step "3. every container of steps 1 and 2"
check_list s1
check_list s2

# ---- 4. rollback ------------------------------------------------------------------
step "4. rollback to v1's version as a new instance (generation 3)"
# The rollout finished: the kubelet deletes v1's pod.
kill -TERM "${PID[v1]}"
expect "v1: ends when its pod is deleted, exit 0 after standing down" exited v1 0
surge s4 v3 uid-v3 3 1.0.0 v2
watch_ready v3
# v2's container crashes; the kubelet restarts it in the same pod: same
# instance id, same generation, twice.
kill -KILL "${PID[v2]}"
wait "${PID[v2]}" 2>/dev/null || true
unset "PID[v2]"
for attempt in 1 2; do
	start_instance "v2r$attempt" uid-v2 2 2.0.0
	STAMP[v2r$attempt]=2.0.0/uid-v2
	expect "v2 restarted (attempt $attempt): registration refused" \
		wait_for 20 has "$R/v2r$attempt.log" 'msg="annotator: (stopped|refused by the runtime)" error=".*registration rejected by the runtime'
	expect "v2 restarted (attempt $attempt): exits 1, no retry" exited "v2r$attempt" 1
done
expect "containerd says why: v2 was superseded" has "$R/containerd.log" 'rejecting plugin registration.*uid-v2.*was superseded'
stop_loop s4
stop_watch
expect "v3: ready throughout the restarts of v2, no flapping ($(wc -l <"$R/gaps-v3") gaps)" [ ! -s "$R/gaps-v3" ]
still_serving v3
want_loop s4 2.0.0/uid-v2 1.0.0/uid-v3 "$AT_START" "$AT_READY"
check_list s4

# ---- 5. kill -9 of a successor in the middle of its handover ---------------------------
step "5. v4 killed in the middle of its handover, twice"
watch_ready v3
start_loop s5
# 5a: in its full synchronization, which runs while v3 keeps serving.
start_instance v4a uid-v4 4 2.1.0 -hold-sync "$R/hold-v4a"
expect "v4 (1st run): holds in its full synchronization" wait_for 30 has "$R/v4a.log" 'msg="test: holding synchronization round" round=full$'
n=$(loop_count s5)
expect "v3: pods keep being created while v4 synchronizes" loop_past s5 "$n"
killed_in v4a full
# 5b: in its catch-up round: v4 synchronized, a pod was created since, and
# the runtime holds its sync gate to bring v4 up to date before the switch.
start_instance v4b uid-v4 4 2.1.0 -hold-sync "$R/hold-v4b"
expect "v4 (2nd run): holds in its full synchronization" wait_for 30 has "$R/v4b.log" 'msg="test: holding synchronization round" round=full$'
n=$(loop_count s5)
expect "v3: a pod created after v4's snapshot" loop_past s5 "$n"
touch "$R/hold-v4b.full"
expect "v4 (2nd run): synchronized, holds in its delta round under the sync gate" \
	wait_for 30 has "$R/v4b.log" 'msg="test: holding synchronization round" round=delta$'
round v4b "taking over" || true
expect "v4 (2nd run): its full round skipped all $CONTAINERS containers, v3's and its predecessors' (mine $MINE, unstamped $UNSTAMPED)" \
	bash -c "[ '$FROM' = 1.0.0/uid-v3 ] && [ '$MINE' = 0 ] && [ '$UNSTAMPED' = 0 ] && [ '$SKIPPED' = '$CONTAINERS' ]"
killed_in v4b delta
stop_loop s5
stop_watch
expect "v3: ready throughout both kills ($(wc -l <"$R/gaps-v3") gaps)" [ ! -s "$R/gaps-v3" ]
still_serving v3
while read -r pod _; do WANT[$pod]=1.0.0/uid-v3; done <"$R/s5.list"
check_list s5
# 5c: the kubelet restarts v4's container: same instance id; it was never
# active, so nothing retired it.
start_instance v4 uid-v4 4 2.1.0
took_over v4 v3
superseded v3 v4
make_pods s5c 2.1.0/uid-v4 after-v4
check_list s5c

# ---- 6. containerd restarts -------------------------------------------------------------------
step "6. containerd restarts with the plugins running"
make_pods s6 2.1.0/uid-v4 before-restart
mark=$(wc -l <"$R/containerd.log")
stop_containerd
expect "v4: connection gone, not ready" wait_for 10 ready_gone v4
expect "v4: exits 2, the runtime went away (the kubelet restarts it)" exited v4 2
start_containerd
# The kubelet restarts v4's container: same instance id, a fresh process.
start_instance v4r uid-v4 4 2.1.0
expect "v4 (restarted): ready again" wait_for 30 test -f "$R/v4r.ready"
round v4r synchronized || true
expect "v4 (restarted): synchronized as a fresh join with the $CONTAINERS containers that outlived the restart, all its own or its predecessors' (mine $MINE, skipped $SKIPPED, unstamped $UNSTAMPED)" \
	bash -c "[ '$MINE' -ge 1 ] && [ '$UNSTAMPED' = 0 ] && [ \$(($MINE + $SKIPPED)) = '$CONTAINERS' ] && ! grep -q 'msg=\"taking over\"' '$R/v4r.log'"
expect "v4 (restarted): took the state file back (it owned it last)" \
	has "$R/v4r.log" 'msg="owns the state file" .* hand-off="this instance owned it last"'
expect "v4 (restarted): the state file lists before-restart as its own" state_lists s6 2.1.0/uid-v4
expect "v3 (superseded): stayed down, held and not ready" \
	bash -c "kill -0 ${PID[v3]} && [ \$(grep -c 'registering plugin' '$R/v3.log') = 1 ] && ! test -f '$R/v3.ready'"
registered=$(tail -n +"$((mark + 1))" "$R/containerd.log" | grep -c 'plugin [^ ]*50-annotator.* registered' || true)
expect "containerd: one instance of 50-annotator registered after the restart ($registered)" [ "$registered" = 1 ]
make_pods s6 2.1.0/uid-v4 after-restart-1 after-restart-2
check_list s6

# ---- 7. upstream v0.12.5 plugins (legacy) next to ours ------------------------------------------
step "7. two upstream v0.12.5 plugins (legacy, same name and index) next to ours"
for u in a b; do
	"$R/bin/upstream-plugin" -socket "$R/nri/nri.sock" -name upstream -idx 60 \
		-annotate "nri-handover.test/upstream-$u=adjusted-by-upstream-$u" -record "$R/up-$u.jsonl" \
		>/dev/null 2>"$R/up-$u.stderr" &
	PID[up-$u]=$!
	expect "upstream-$u: registered and synchronized" wait_for 30 has "$R/up-$u.jsonl" '"ev":"Synchronize"'
done
surge s7 v5 uid-v5 5 2.2.0 v4r
stop_loop s7
want_loop s7 2.1.0/uid-v4 2.2.0/uid-v5 "$AT_START" "$AT_READY"
check_list s7
for u in a b; do
	ok=0 bad=""
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
	expect "upstream-$u: not disturbed by our handover (connected, no shutdown)" \
		bash -c "kill -0 ${PID[up-$u]} && ! grep -qE '\"ev\":\"(Shutdown|Exit)\"' '$R/up-$u.jsonl'"
done
expect "every synchronization round of every instance found every container stamped (unstamped=0)" \
	bash -c "! grep -h 'unstamped=' '$R'/v*.log | grep -qvE 'unstamped=0( |\$)'"

for f in "$R"/v*.log "$R"/up-*.stderr; do
	expect "no panic in $(basename "$f")" bash -c "! grep -iE 'panic|fatal' '$f'"
done
expect "containerd: no panic" bash -c "! grep -iE 'panic' '$R/containerd.log'"

[ "$FAILED" = 0 ] || echo "== logs in $R: v*.log (the annotators), annotator-state.json, up-*.jsonl, *.stderr, *.list, loop.err, containerd.log"
summary
