#!/usr/bin/env bash
# Handover on a second runtime, built unchanged on our NRI: Docker Engine
# (dockerd from moby v2, build-dockerd.sh), on containerd v2.4.2 (stock:
# NRI lives in dockerd here), with real containers through `docker run`.
# The plugin is the sample, examples/annotator (as surge.sh runs it, built
# by test/realcontainerd/annotator), with -stamp-env: dockerd takes no
# annotation adjustment (it fails the creation), so the stamp is the
# environment variable ANNOTATOR_HANDLED_BY, which dockerd also hands back
# in Synchronize (a container's Config.Env, NRI's additions included).
# The steps are ../realruntime/scenario.sh's (as surge.sh runs them on
# containerd); this script is its adapter for dockerd, the hooks below:
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
# shellcheck source=../realruntime/instances.sh
. "$REPO/test/realruntime/instances.sh"
# shellcheck source=../realruntime/scenario.sh
. "$REPO/test/realruntime/scenario.sh"

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

set -E # the ERR trap also in the scenario's function
trap 'echo "e2e.sh: line $LINENO: $BASH_COMMAND failed" >&2' ERR

# The hooks of the scenario (../realruntime/scenario.sh).
RUNTIME_LOG=$R/dockerd.log
LEDGER_EXACT=0 # moby relays only creation: the comparisons find removed containers
START_TITLE="start containerd and dockerd (built on our NRI)"
UNIT=container
T_DELETED="deleted" T_EXIT2="" T_FRESH=""
LOGS_HINT="v*.log (the annotators), annotator-state.json, up-*.jsonl, out/, *.list, loop.err, dockerd.log, containerd.log"
rt_boot() {
	start_backend
	start_dockerd "$R/ours/bin/dockerd"
	docker load -q -i "$IMG/busybox.tar"
}
rt_start() { start_dockerd "$R/ours/bin/dockerd"; }
rt_stop() { stop_dockerd; }
rt_cleanup() { cleanup_docker; }

ANNOTATOR=$R/bin/surge-annotator # has, alive, gone: realruntime/lib.sh; start_instance and the checks: realruntime/instances.sh
ANNOTATOR_FLAGS=(-stamp-env) # dockerd takes env adjustments, not annotations

# The lists: "NAME CONTAINER-ID" per container ("NAME FAILED" when docker
# run failed) in $R/LIST.list; WANT[NAME] the stamp (a regex) it must carry.
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
# start_loop, loop_past, stop_loop, want_loop, watch_ready, stop_watch: realruntime/instances.sh

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
# Step 5 counts the containers v3 stamped: our adaptation copies dockerd's
# state inside its SyncFn (which holds dockerd's container lock) and sends
# the round after SyncFn returned, so containers keep being created while v4
# synchronizes; one v3 stamps after v4's snapshot was created after it (the
# adaptation drained the operations in flight before taking it).
rt_mark() { stamps v3; }
rt_past() { wait_for 60 stamps_past v3 "$1"; }

v1_checks_post() {
	expect "v1: configured by docker $(sed -n 's/.*runtime docker \([^ ]*\) .*/\1/p' "$R/v1.log" | head -1)" has "$R/v1.log" 'configuring for runtime docker '
}
upstream_flags() { UP_FLAGS=(-env "NRI_UPSTREAM_${1^^}=adjusted-by-upstream-$1"); }
# check_upstream U: U saw CreateContainer of every container of s7 once, and
# its variable is in every one.
check_upstream() {
	local u=$1 ok=0 bad="" name id
	while read -r name id; do
		[ "$id" != FAILED ] || continue
		[ "$(grep -cF "\"ev\":\"CreateContainer\",\"pod\":\"$id\",\"ctr\":\"$id\"" "$R/up-$u.jsonl")" = 1 ] || bad+=" $name:CreateContainer"
		grep -qx "NRI_UPSTREAM_${u^^}=adjusted-by-upstream-$u" "$R/out/$name.log" || bad+=" $name:env"
		ok=$((ok + 1))
	done <"$R/s7.list"
	expect "upstream-$u: CreateContainer of each of the $ok containers exactly once, its variable in every one${bad:+ (missing:$bad)}" [ -z "$bad" ]
}


run_scenario
