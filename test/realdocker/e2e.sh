#!/usr/bin/env bash
# Handover on a second runtime, built unchanged on our NRI: Docker Engine
# (dockerd from moby v2, build-dockerd.sh), on containerd v2.4.2 (stock:
# NRI lives in dockerd here), with real containers through `docker run`.
# The plugin is the sample, examples/annotator (as surge.sh runs it, built
# by test/realcontainerd/annotator), with -stamp-env: dockerd takes no
# annotation adjustment (it fails the creation), so the stamp is the
# environment variable ANNOTATOR_HANDLED_BY, which dockerd also hands back
# in Synchronize (a container's Config.Env, NRI's additions included).
#   1. v1 active: containers carry its stamp (docker inspect's Config.Env,
#      and the process's environment as it printed it);
#   2. v2 surges in while a bounded loop keeps running short containers: its
#      synchronization skips every container (all stamped), it becomes
#      active, v1 is superseded and stays up, not ready;
#   3. every container: stamped by exactly one instance, the one active at
#      its creation, none failed;
#   4. rollback: v1 deleted exits 0; v3 (v1's version, generation 3) takes
#      over from v2; v2 restarted with its instance id is refused twice;
#      v3 ready throughout;
#   5. kill -9 of a successor (v4) held in its full synchronization (which
#      our adaptation sends after dockerd's SyncFn returned: containers keep
#      being created) and in its catch-up delta round (under the sync gate):
#      v3 keeps serving, none fails; restarted, v4 takes over;
#   6. dockerd restarts: the active instance exits 2 and, restarted,
#      synchronizes as a fresh join with the containers that outlived the
#      restart; the superseded one stays down; one instance registers;
#   7. two unmodified upstream v0.12.5 plugins (test/upstream/plugin, same
#      name and index) beside ours while ours hands over v4 -> v5: each sees
#      every CreateContainer once and its variable is in every container.
# One line per check, then "N passed, N failed".
#
# Usage: [R=/tmp/nrdk-ish] [LOOP_AFTER=4] [KEEP=1] test/realdocker/e2e.sh
set -euo pipefail

R=${R:-/tmp/nrdk-ish}
STATE=$R/annotator-state.json
LOOP_AFTER=${LOOP_AFTER:-4}
REPO=$(cd "$(dirname "$0")/../.." && pwd)
RUNTIME=dockerd
# shellcheck source=lib.sh
. "$REPO/test/realdocker/lib.sh"
# shellcheck source=../realcontainerd/instances.sh
. "$REPO/test/realcontainerd/instances.sh"

step "packages, runc, containerd, dockerd"
install_packages
install_stock_containerd
install_runc
R=$R "$REPO/test/realdocker/build-dockerd.sh" >"$R/build.log" 2>&1 || { tail -30 "$R/build.log"; exit 1; }
grep '^PASS' "$R/build.log"
(cd "$REPO" && GOWORK=off go build -o "$R/bin/surge-annotator" ./test/realcontainerd/annotator)
(cd "$REPO" && GOWORK=off go build -o "$R/bin/upstream-plugin" ./test/upstream/plugin)

step "images and config"
build_busybox
echo '{}' >"$R/daemon.json"
rm -rf "$R"/v*.log "$R"/v*.ready "$R"/up-*.jsonl "$R"/up-*.stderr "$STATE"* "$R"/*.list "$R"/stop-* \
	"$R"/hold-* "$R"/gaps-* "$R"/out "$R/loop.err" "$R/containerd.log" "$R/dockerd.log"
mkdir -p "$R/out"

declare -A PID=() STAMP=()
LOOP_PID=""
WATCH_PID=""
cleanup() {
	set +e
	[ -n "$LOOP_PID" ] && kill "$LOOP_PID" 2>/dev/null
	[ -n "$WATCH_PID" ] && kill "$WATCH_PID" 2>/dev/null
	stop_pids "${PID[@]}"
	cleanup_docker
}
trap cleanup EXIT
trap 'echo "e2e.sh: line $LINENO: $BASH_COMMAND failed" >&2' ERR

step "start containerd and dockerd (built on our NRI)"
start_backend
start_dockerd "$R/ours/bin/dockerd"
docker load -q -i "$IMG/busybox.tar"

ANNOTATOR=$R/bin/surge-annotator # has, alive, gone: realcontainerd/lib.sh; start_instance and the checks: realcontainerd/instances.sh
ANNOTATOR_FLAGS=(-stamp-env) # dockerd takes env adjustments, not annotations

# The lists: "NAME CONTAINER-ID" per container ("NAME FAILED" when docker
# run failed) in $R/LIST.list; WANT[NAME] the stamp (a regex) it must carry.
declare -A WANT=()
# run_one NAME: a short container, attached: it prints its name and the
# annotator's variable and exits; docker run is bounded by timeout.
run_one() {
	timeout 60 docker run --network none --name "$1" "$BUSYBOX" \
		sh -c "echo name=$1; env | grep -E '^(ANNOTATOR_|NRI_)' | sort; echo env-listed" >"$R/out/$1.log" 2>>"$R/loop.err"
}
record() { # record LIST NAME: after run_one, its line in the list.
	local id
	if id=$(timeout 20 docker inspect -f '{{.Id}}' "$2" 2>/dev/null) && grep -qx env-listed "$R/out/$2.log"; then
		echo "$2 $id" >>"$R/$1.list"
	else
		echo "$2 FAILED" >>"$R/$1.list"
	fi
}
make_ctrs() { # make_ctrs LIST WANT NAME...: one after the other
	local list=$1 want=$2 n
	shift 2
	for n in "$@"; do
		run_one "$n" || true
		record "$list" "$n"
		WANT[$n]=$want
	done
}
create_loop() { # create_loop NAME: NAME-1, NAME-2, ... until $R/stop-NAME exists
	local name=$1 i=0
	while [ ! -e "$R/stop-$name" ]; do
		i=$((i + 1))
		run_one "$name-$i" || true
		record "$name" "$name-$i"
	done
}
# start_loop, loop_past, stop_loop, want_loop, watch_ready, stop_watch: realcontainerd/instances.sh

# stamped_by ID: the stamps of the instances that logged stamping container ID.
stamped_by() {
	cat "$R"/v*.log | sed -n "s/.*msg=\"stamped container\" .* id=$1 stamp=\([^ ]*\)$/\1/p" | sort | paste -sd' '
}
# env_stamp: the values of ANNOTATOR_HANDLED_BY in stdin.
env_stamp() { grep -oE 'ANNOTATOR_HANDLED_BY=[^" ]*' | sed 's/^[^=]*=//' | sort | paste -sd' '; }
# check_list LIST: each container ran, was stamped by exactly one instance,
# the wanted one, whose stamp is in docker inspect's Config.Env and in the
# environment the process printed.
check_list() {
	local n=0 name id by spec ran
	while read -r name id; do
		n=$((n + 1))
		if [ "$id" = FAILED ]; then fail "$name: docker run succeeded"; continue; fi
		by=$(stamped_by "$id")
		spec=$(timeout 20 docker inspect -f '{{json .Config.Env}}' "$id" </dev/null | env_stamp || true)
		ran=$(env_stamp <"$R/out/$name.log" || true)
		expect "$name: stamped by exactly one instance, ${WANT[$name]:-?} ($by)" \
			bash -c "[[ '$by' =~ ^(${WANT[$name]:-none})$ ]]"
		expect "$name: docker inspect ($spec) and its process ($ran) carry that stamp" \
			bash -c "[ '$spec' = '$by' ] && [ '$ran' = '$by' ] && grep -qx 'name=$name' '$R/out/$name.log'"
	done <"$R/$1.list"
	expect "$1: $n containers checked" [ "$n" -ge 1 ]
}
# stamps LABEL: how many containers LABEL stamped so far; stamps_past LABEL N:
# more than N.
stamps() { grep -c 'msg="stamped container"' "$R/$1.log" || true; }
stamps_past() { [ "$(stamps "$1")" -gt "$2" ]; }

# ---- 1. v1 ------------------------------------------------------------------
step "1. v1 active"
start_instance v1 uid-v1 1 1.0.0
expect "v1: ready file appears" wait_for 20 test -f "$R/v1.ready"
expect "v1: dockerd (built on our NRI) offers handover" has "$R/v1.log" 'plugin 50-annotator: runtime \(NRI [^)]*\) offers handover'
expect "v1: configured by docker $(sed -n 's/.*runtime docker \([^ ]*\) .*/\1/p' "$R/v1.log" | head -1)" has "$R/v1.log" 'configuring for runtime docker '
expect "v1: takes the state file, the first owner" has "$R/v1.log" 'msg="owns the state file" .* epoch=1 hand-off=fresh'
make_ctrs s1 1.0.0/uid-v1 first second
expect "v1: the state file is v1's and lists its containers" state_lists s1 1.0.0/uid-v1

# ---- 2. v2 surges in while containers keep being run ---------------------------
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
kill -TERM "${PID[v1]}"
expect "v1: ends when deleted, exit 0 after standing down" exited v1 0
surge s4 v3 uid-v3 3 1.0.0 v2
watch_ready v3
kill -KILL "${PID[v2]}"
wait "${PID[v2]}" 2>/dev/null || true
unset "PID[v2]"
for attempt in 1 2; do
	start_instance "v2r$attempt" uid-v2 2 2.0.0
	expect "v2 restarted (attempt $attempt): registration refused" \
		wait_for 20 has "$R/v2r$attempt.log" 'msg="annotator: (stopped|refused by the runtime)" error=".*registration rejected by the runtime'
	expect "v2 restarted (attempt $attempt): exits 1, no retry" exited "v2r$attempt" 1
done
expect "dockerd says why: v2 was superseded" has "$R/dockerd.log" 'rejecting plugin registration.*uid-v2.*was superseded'
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
# 5a: in its full synchronization. Our adaptation copies dockerd's state
# inside its SyncFn (which holds dockerd's container lock) and sends the
# round after SyncFn returned: containers keep being created meanwhile.
start_instance v4a uid-v4 4 2.1.0 -hold-sync "$R/hold-v4a"
expect "v4 (1st run): holds in its full synchronization" wait_for 30 has "$R/v4a.log" 'msg="test: holding synchronization round" round=full$'
n=$(stamps v3)
expect "v3: containers keep being created while v4 synchronizes" wait_for 60 stamps_past v3 "$n"
killed_in v4a full
# 5b: in its catch-up round: v4 synchronized, a container was created since,
# and the runtime holds its sync gate to bring v4 up to date before the switch.
start_instance v4b uid-v4 4 2.1.0 -hold-sync "$R/hold-v4b"
expect "v4 (2nd run): holds in its full synchronization" wait_for 30 has "$R/v4b.log" 'msg="test: holding synchronization round" round=full$'
# A container v3 stamps from here was created after v4's snapshot: the
# adaptation drained the operations in flight before taking it.
n=$(stamps v3)
expect "v3: a container created after v4's snapshot" wait_for 60 stamps_past v3 "$n"
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
while read -r name _; do WANT[$name]=1.0.0/uid-v3; done <"$R/s5.list"
check_list s5
start_instance v4 uid-v4 4 2.1.0
took_over v4 v3
superseded v3 v4
make_ctrs s5c 2.1.0/uid-v4 after-v4
check_list s5c

# ---- 6. dockerd restarts -------------------------------------------------------------------
step "6. dockerd restarts with the plugins running"
make_ctrs s6 2.1.0/uid-v4 before-restart
mark=$(wc -l <"$R/dockerd.log")
stop_dockerd
expect "v4: connection gone, not ready" wait_for 10 ready_gone v4
expect "v4: exits 2, the runtime went away" exited v4 2
start_dockerd "$R/ours/bin/dockerd"
start_instance v4r uid-v4 4 2.1.0
expect "v4 (restarted): ready again" wait_for 30 test -f "$R/v4r.ready"
round v4r synchronized || true
expect "v4 (restarted): synchronized as a fresh join with the $CONTAINERS containers that outlived the restart (mine $MINE, skipped $SKIPPED, unstamped $UNSTAMPED)" \
	bash -c "[ '$MINE' -ge 1 ] && [ '$UNSTAMPED' = 0 ] && [ \$(($MINE + $SKIPPED)) = '$CONTAINERS' ] && ! grep -q 'msg=\"taking over\"' '$R/v4r.log'"
expect "v4 (restarted): took the state file back (it owned it last)" \
	has "$R/v4r.log" 'msg="owns the state file" .* hand-off="this instance owned it last"'
expect "v3 (superseded): stayed down, held and not ready" \
	bash -c "kill -0 ${PID[v3]} && [ \$(grep -c 'registering plugin' '$R/v3.log') = 1 ] && ! test -f '$R/v3.ready'"
registered=$(tail -n +"$((mark + 1))" "$R/dockerd.log" | grep -c 'plugin [^ ]*50-annotator.* registered' || true)
expect "dockerd: one instance of 50-annotator registered after the restart ($registered)" [ "$registered" = 1 ]
make_ctrs s6 2.1.0/uid-v4 after-restart-1 after-restart-2
check_list s6

# ---- 7. upstream v0.12.5 plugins (legacy) next to ours ------------------------------------------
step "7. two upstream v0.12.5 plugins (legacy, same name and index) next to ours"
for u in a b; do
	"$R/bin/upstream-plugin" -socket "$R/nri/nri.sock" -name upstream -idx 60 \
		-env "NRI_UPSTREAM_${u^^}=adjusted-by-upstream-$u" -record "$R/up-$u.jsonl" >/dev/null 2>"$R/up-$u.stderr" &
	PID[up-$u]=$!
	expect "upstream-$u: registered and synchronized" wait_for 30 has "$R/up-$u.jsonl" '"ev":"Synchronize"'
done
surge s7 v5 uid-v5 5 2.2.0 v4r
stop_loop s7
want_loop s7 2.1.0/uid-v4 2.2.0/uid-v5 "$AT_START" "$AT_READY"
check_list s7
for u in a b; do
	ok=0 bad=""
	while read -r name id; do
		[ "$id" != FAILED ] || continue
		[ "$(grep -cF "\"ev\":\"CreateContainer\",\"pod\":\"$id\",\"ctr\":\"$id\"" "$R/up-$u.jsonl")" = 1 ] || bad+=" $name:CreateContainer"
		grep -qx "NRI_UPSTREAM_${u^^}=adjusted-by-upstream-$u" "$R/out/$name.log" || bad+=" $name:env"
		ok=$((ok + 1))
	done <"$R/s7.list"
	expect "upstream-$u: CreateContainer of each of the $ok containers exactly once, its variable in every one${bad:+ (missing:$bad)}" [ -z "$bad" ]
	expect "upstream-$u: not disturbed by our handover (connected, no shutdown)" \
		bash -c "kill -0 ${PID[up-$u]} && ! grep -qE '\"ev\":\"(Shutdown|Exit)\"' '$R/up-$u.jsonl'"
done
expect "every synchronization round of every instance found every container stamped (unstamped=0)" \
	bash -c "! grep -h 'unstamped=' '$R'/v*.log | grep -qvE 'unstamped=0( |\$)'"
for f in "$R"/v*.log "$R"/up-*.stderr; do
	expect "no panic in $(basename "$f")" bash -c "! grep -iE 'panic|fatal' '$f'"
done
expect "dockerd: no panic" bash -c "! grep -iE 'panic' '$R/dockerd.log'"

[ "$FAILED" = 0 ] || echo "== logs in $R: v*.log (the annotators), annotator-state.json, up-*.jsonl, out/, *.list, loop.err, dockerd.log, containerd.log"
summary
