# shellcheck shell=bash disable=SC2034 # WANT, AT_START, AT_READY are for the callers
# Annotator instances on the host and the checks of a handover between them,
# shared by ../realcontainerd/{surge,restart,stops}.sh, ../realdocker/e2e.sh
# (dockerd). Source it after lib.sh. Callers set R, STATE (the state file
# the instances share, as a DaemonSet's hostPath), ANNOTATOR (the annotator
# binary), optionally ANNOTATOR_FLAGS (an array of flags every instance
# gets) and RUNTIME (the runtime's name in check lines; containerd by
# default), declare the associative arrays PID, STAMP and WANT, and define
# create_loop NAME (one runtime's way of creating NAME-1, NAME-2, ... into
# $R/NAME.list until $R/stop-NAME exists).
RUNTIME=${RUNTIME:-containerd}

# start_instance LABEL INSTANCE GENERATION VERSION [FLAGS...]: one instance of
# the annotator (50-annotator), identity from the environment as the
# DaemonSet's downward API gives it, the shared state file; its log (stderr)
# in $R/LABEL.log; STAMP[LABEL] is the stamp it puts on containers,
# VERSION/INSTANCE.
start_instance() {
	local label=$1 id=$2 gen=$3 ver=$4
	shift 4
	NRI_PLUGIN_INSTANCE_ID=$id NRI_PLUGIN_GENERATION=$gen "$ANNOTATOR" "${ANNOTATOR_FLAGS[@]}" \
		-socket "$R/nri/nri.sock" -version "$ver" -ready-file "$R/$label.ready" -state-file "$STATE" \
		"$@" >"$R/$label.log" 2>&1 &
	PID[$label]=$!
	STAMP[$label]=$ver/$id
}

loop_count() { wc -l <"$R/$1.list"; }
# loop_past NAME N [SECONDS]: wait until the loop created more than N.
loop_past() { wait_for "${3:-60}" bash -c "[ \$(wc -l <'$R/$1.list') -gt $2 ]"; }
# stop_loop NAME: after LOOP_AFTER more (each runtime call is bounded, so
# is the wait).
stop_loop() {
	loop_past "$1" $(($(loop_count "$1") + LOOP_AFTER - 1)) || true
	touch "$R/stop-$1"
	wait "$LOOP_PID" || true
	LOOP_PID=""
}
# want_loop NAME BEFORE AFTER AT_START AT_READY: loop items created before
# AT_START were BEFORE's, those started after AT_READY (the one in flight
# when the successor turned ready may go either way) AFTER's.
want_loop() {
	local name=$1 before=$2 after=$3 at_start=$4 at_ready=$5 item i
	while read -r item _; do
		i=${item##*-}
		if [ "$i" -le "$at_start" ]; then WANT[$item]=$before
		elif [ "$i" -gt $((at_ready + 1)) ]; then WANT[$item]=$after
		else WANT[$item]="$before|$after"; fi
	done <"$R/$name.list"
}
# watch_ready LABEL: records in $R/gaps-LABEL every moment LABEL's ready file
# is missing, until $R/stop-watch exists (a readinessProbe that never fails).
watch_ready() {
	rm -f "$R/stop-watch"
	: >"$R/gaps-$1"
	(while [ ! -e "$R/stop-watch" ]; do
		[ -f "$R/$1.ready" ] || date +%T.%N >>"$R/gaps-$1"
		sleep 0.05
	done) &
	WATCH_PID=$!
}
stop_watch() { touch "$R/stop-watch"; wait "$WATCH_PID" || true; WATCH_PID=""; }
# start_loop NAME: create_loop in the background, once it created 2.
start_loop() {
	: >"$R/$1.list"
	create_loop "$1" &
	LOOP_PID=$!
	wait_for 60 bash -c "[ \$(wc -l <'$R/$1.list') -ge 2 ]" || true
}

# exited LABEL CODE: LABEL's process ended with CODE after logging that it
# stopped or was superseded.
exited() {
	local rc=0
	wait_for 10 gone "${PID[$1]}" || return 1
	wait "${PID[$1]}" || rc=$?
	unset "PID[$1]"
	[ "$rc" = "$2" ] || echo "  ($1 exited with status $rc)"
	[ "$rc" = "$2" ] && has "$R/$1.log" "msg=\"annotator: (stopped|superseded|refused by the runtime)\".* exit=$2\$"
}
# state_is OWNER RELEASED: the shared state file's owner and release mark.
state_is() {
	grep -qE "^  \"owner\": \"$1\",\$" "$STATE" && grep -qE "^  \"released\": $2,\$" "$STATE"
}
# state_has CONTAINER-ID STAMP: the state file lists the container as STAMP's.
state_has() { grep -qE "^    \"$1\": \"$2\",?\$" "$STATE"; }
# state_lists LIST STAMP: STAMP owns the state file, which lists every
# container of LIST (second column) as STAMP's.
state_lists() {
	local ctr
	state_is "$2" false || return 1
	while read -r _ ctr _; do state_has "$ctr" "$2" || return 1; done <"$R/$1.list"
}
# round LABEL MSG: the fields of LABEL's last synchronization round logged
# as MSG ("taking over", "synchronized"...): sets CONTAINERS MINE SKIPPED
# UNSTAMPED and FROM.
round() {
	local line
	CONTAINERS="" MINE="" SKIPPED="" UNSTAMPED="" FROM=""
	# slog quotes a message only when it has spaces.
	line=$(grep -E "msg=(\"$2\"|$2) " "$R/$1.log" | tail -1)
	CONTAINERS=$(sed -n 's/.* containers=\([0-9]*\).*/\1/p' <<<"$line")
	MINE=$(sed -n 's/.* mine=\([0-9]*\).*/\1/p' <<<"$line")
	SKIPPED=$(sed -n 's/.* skipped=\([0-9]*\).*/\1/p' <<<"$line")
	UNSTAMPED=$(sed -n 's/.* unstamped=\([0-9]*\).*/\1/p' <<<"$line")
	FROM=$(sed -n 's/.* from=\([^ ]*\).*/\1/p' <<<"$line")
	[ -n "$CONTAINERS" ]
}

ready_gone() { ! test -f "$R/$1.ready"; }
# superseded LABEL NEW: LABEL was told to stand by for NEW (before NEW was
# told it is active) and released the state file, was then told NEW
# superseded it, and stays up without being ready.
superseded() {
	expect "$1: told to stand by for ${STAMP[$2]}, released the state file" wait_for 10 has "$R/$1.log" \
		"msg=\"released the state file\" .* why=\"standby: ${STAMP[$2]} took over\"\$"
	expect "$1: then told it is superseded" wait_for 10 has "$R/$1.log" \
		"runtime shuts the plugin down.*successor version"
	expect "$1: ready file gone" wait_for 10 ready_gone "$1"
	expect "$1: process stays up" alive "${PID[$1]}"
}
# took_over LABEL OLD: LABEL became active in a takeover from OLD: its full
# synchronization skipped every container (all stamped, none by itself), and
# it found the state file released by OLD.
took_over() {
	expect "$1: ready file appears" wait_for 30 test -f "$R/$1.ready"
	round "$1" "taking over" || true
	expect "$1: synchronized as a takeover from ${STAMP[$2]}, skipping all $CONTAINERS containers (mine $MINE, skipped $SKIPPED, unstamped $UNSTAMPED)" \
		bash -c "[ '$FROM' = '${STAMP[$2]}' ] && [ '$MINE' = 0 ] && [ '$UNSTAMPED' = 0 ] && [ '$SKIPPED' = '$CONTAINERS' ] && [ '$CONTAINERS' -ge 1 ]"
	expect "$1: took the state file over, released by ${STAMP[$2]}" \
		wait_for 10 has "$R/$1.log" "msg=\"owns the state file\" .* hand-off=\"clean, released by ${STAMP[$2]}\""
}
# surge LOOP NEW INSTANCE GENERATION VERSION OLD: while LOOP (started here)
# keeps creating, NEW takes over from OLD, which is superseded. Sets AT_START
# and AT_READY, the loop's items before NEW started and before it was ready,
# for want_loop.
surge() {
	local loop=$1 new=$2 id=$3 gen=$4 ver=$5 old=$6
	start_loop "$loop"
	AT_START=$(loop_count "$loop")
	start_instance "$new" "$id" "$gen" "$ver"
	took_over "$new" "$old"
	AT_READY=$(loop_count "$loop")
	superseded "$old" "$new"
}
# killed_in LABEL ROUND: LABEL held in ROUND is killed with SIGKILL, before
# the runtime gave up on it (it got no shutdown notice).
killed_in() {
	kill -KILL "${PID[$1]}"
	wait "${PID[$1]}" 2>/dev/null || true
	unset "PID[$1]"
	expect "$1: killed (-9) in its $2 round, before $RUNTIME gave up on it" \
		bash -c "! grep -q 'runtime shuts the plugin down' '$R/$1.log'"
}
# still_serving LABEL: LABEL is active and ready, never told otherwise.
still_serving() {
	expect "$1: still active and ready" bash -c "test -f '$R/$1.ready' && kill -0 ${PID[$1]}"
	expect "$1: never told to stand by or shut down" \
		bash -c "! grep -qE 'runtime assigns role PLUGIN_ROLE_STANDBY|runtime shuts the plugin down|released the state file|annotator: (stopped|superseded)' '$R/$1.log'"
	expect "$1: still owns the state file" state_is "${STAMP[$1]}" false
}
