# shellcheck shell=bash disable=SC2034,SC2154 # the hooks' variables are the adapters'
# One handover scenario, seven steps, on any runtime built on our NRI: the
# adapters (../realcontainerd/surge.sh: containerd with crictl pods;
# ../realdocker/e2e.sh: dockerd with `docker run` containers) install and
# build what they need, set the hooks below and call run_scenario.
#   1. v1 active: containers carry its stamp, as the runtime keeps it and as
#      the container ran;
#   2. v2 surges in while a loop keeps creating containers: its
#      synchronization skips every container (all stamped), it becomes
#      active, v1 is superseded and stays up, not ready, and releases the
#      state file to v2 (a clean hand-off);
#   3. every container created during the run was stamped by exactly one
#      instance, the one active at its creation; none failed, none is
#      unstamped (checked for every step's containers);
#   4. rollback: v1, deleted, exits 0; v1's version as a new instance with a
#      newer generation (v3) takes over; the superseded v2, restarted with
#      its instance id as the kubelet would, is refused, twice, exits 1, and
#      v3 never stops being ready;
#   5. kill -9 of a successor (v4) in the middle of its handover, during its
#      full synchronization and in its catch-up delta round (under the sync
#      gate, after its synchronization, before the switch): v3 keeps serving
#      throughout and keeps the state file; then v4, restarted with the same
#      instance id, takes over;
#   6. the runtime restarts with the plugins running: the active instance
#      exits 2 and, restarted, synchronizes as a fresh join with the
#      containers that outlived the restart; the superseded one stays down
#      (held, not ready); one instance of the plugin registers;
#   7. two instances of an unmodified upstream v0.12.5 plugin (legacy, same
#      name and index) next to ours, while ours hands over from v4 to v5:
#      both see what the runtime hands them and adjust every container.
# Source it after ./lib.sh and ./instances.sh, with R, STATE and ANNOTATOR
# set. The hooks (functions and variables the adapter defines):
#   RUNTIME             the runtime's name in check lines (containerd, dockerd)
#   RUNTIME_LOG         the runtime's log, where it says why it refused a plugin
#   START_TITLE         the title of the step that starts the runtime
#   rt_boot             start the runtime (and what it needs) the first time
#   rt_stop, rt_start   stop and start it again (step 6)
#   rt_cleanup          the clean-up of the runtime, on exit
#   make_ctrs LIST WANT NAME...   create containers, one after the other,
#                       each a line in $R/LIST.list, WANT[NAME]=WANT
#   create_loop NAME    NAME-1, NAME-2, ... until $R/stop-NAME (instances.sh)
#   check_list LIST     inspect each container of LIST: stamped by exactly
#                       one instance, the wanted one, as the runtime keeps it
#                       and as the container ran
#   rt_mark, rt_past N  a count of the containers created so far, and a
#                       check that more than N were (step 5)
#   UNIT                what the workload is called (pod, container)
#   upstream_flags U    (sets UP_FLAGS) how upstream plugin U adjusts containers
#   check_upstream U    upstream plugin U saw and adjusted every container of s7
#   v1_checks_pre, v1_checks_post, v4r_checks   (optional) the runtime's own
#                       checks in step 1, and in step 6 after v4 restarted
#   T_DELETED, T_EXIT2, T_FRESH    the wording of a few titles
#   LEDGER_EXACT        1 if the runtime relays every change it makes
#                       (containerd): every comparison of the adaptation's
#                       ledger with SyncFn in RUNTIME_LOG must find 0
#                       differing entries; otherwise they are only printed
#   LOGS_HINT           where to look when a check failed

declare -A PID=() STAMP=() WANT=()
LOOP_PID=""
WATCH_PID=""
cleanup() {
	set +e
	trap - ERR # an adapter's: the clean-up's failures are expected
	[ -n "$LOOP_PID" ] && kill "$LOOP_PID" 2>/dev/null
	[ -n "$WATCH_PID" ] && kill "$WATCH_PID" 2>/dev/null
	stop_pids "${PID[@]}"
	rt_cleanup
}
# hook NAME: NAME, if the adapter defined it.
hook() { if declare -F "$1" >/dev/null; then "$@"; fi; }

run_scenario() {
	trap cleanup EXIT
	step "$START_TITLE"
	rt_boot

	# ---- 1. v1 ------------------------------------------------------------------
	step "1. v1 active"
	start_instance v1 uid-v1 1 1.0.0
	expect "v1: ready file appears" wait_for 20 test -f "$R/v1.ready"
	hook v1_checks_pre
	expect "v1: $RUNTIME (built on our NRI) offers handover" has "$R/v1.log" 'plugin 50-annotator: runtime \(NRI [^)]*\) offers handover'
	hook v1_checks_post
	expect "v1: takes the state file, the first owner" has "$R/v1.log" 'msg="owns the state file" .* epoch=1 hand-off=fresh'
	make_ctrs s1 1.0.0/uid-v1 first second
	expect "v1: the state file is v1's and lists its containers" state_lists s1 1.0.0/uid-v1

	# ---- 2. v2 surges in while containers keep being created ----------------------
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
	expect "v1: ends when $T_DELETED, exit 0 after standing down" exited v1 0
	surge s4 v3 uid-v3 3 1.0.0 v2
	watch_ready v3
	# v2's container crashes; the kubelet restarts it in the same pod: same
	# instance id, same generation, twice.
	kill -KILL "${PID[v2]}"
	wait "${PID[v2]}" 2>/dev/null || true
	unset "PID[v2]"
	local attempt
	for attempt in 1 2; do
		start_instance "v2r$attempt" uid-v2 2 2.0.0
		expect "v2 restarted (attempt $attempt): registration refused" \
			wait_for 20 has "$R/v2r$attempt.log" 'msg="annotator: (stopped|refused by the runtime)" error=".*registration rejected by the runtime'
		expect "v2 restarted (attempt $attempt): exits 1, no retry" exited "v2r$attempt" 1
	done
	expect "$RUNTIME says why: v2 was superseded" has "$RUNTIME_LOG" 'rejecting plugin registration.*uid-v2.*was superseded'
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
	local n gated=""
	# Where the adaptation's ledger did not compare equal with SyncFn (a
	# runtime that does not relay every change: moby), a takeover joins under
	# the sync gate, as upstream's join does: operations wait for it, and it
	# has no catch-up round to be killed in.
	if has "$RUNTIME_LOG" 'instance uid-v4 .*joins under the sync gate'; then
		gated=1
		pass "v4 (1st run): joins under the sync gate: the ledger did not compare equal with SyncFn on $RUNTIME (differing at each comparison: $(ledger_counts "$RUNTIME_LOG"))"
	else
		n=$(rt_mark)
		expect "v3: ${UNIT}s keep being created while v4 synchronizes" rt_past "$n"
	fi
	killed_in v4a full
	if [ -n "$gated" ]; then
		echo "  5b: not applicable on $RUNTIME: a takeover under the sync gate has no catch-up round"
	else
		# 5b: in its catch-up round: v4 synchronized, a container was created
		# since, and the runtime holds its sync gate to bring v4 up to date
		# before the switch.
		start_instance v4b uid-v4 4 2.1.0 -hold-sync "$R/hold-v4b"
		expect "v4 (2nd run): holds in its full synchronization" wait_for 30 has "$R/v4b.log" 'msg="test: holding synchronization round" round=full$'
		n=$(rt_mark)
		expect "v3: a $UNIT created after v4's snapshot" rt_past "$n"
		touch "$R/hold-v4b.full"
		expect "v4 (2nd run): synchronized, holds in its delta round under the sync gate" \
			wait_for 30 has "$R/v4b.log" 'msg="test: holding synchronization round" round=delta$'
		round v4b "taking over" || true
		expect "v4 (2nd run): its full round skipped all $CONTAINERS containers, v3's and its predecessors' (mine $MINE, unstamped $UNSTAMPED)" \
			bash -c "[ '$FROM' = 1.0.0/uid-v3 ] && [ '$MINE' = 0 ] && [ '$UNSTAMPED' = 0 ] && [ '$SKIPPED' = '$CONTAINERS' ]"
		killed_in v4b delta
	fi
	stop_loop s5
	stop_watch
	expect "v3: ready throughout both kills ($(wc -l <"$R/gaps-v3") gaps)" [ ! -s "$R/gaps-v3" ]
	still_serving v3
	local name
	while read -r name _; do WANT[$name]=1.0.0/uid-v3; done <"$R/s5.list"
	check_list s5
	# 5c: the kubelet restarts v4's container: same instance id; it was never
	# active, so nothing retired it.
	start_instance v4 uid-v4 4 2.1.0
	took_over v4 v3
	superseded v3 v4
	make_ctrs s5c 2.1.0/uid-v4 after-v4
	check_list s5c

	# ---- 6. the runtime restarts -------------------------------------------------------------------
	step "6. $RUNTIME restarts with the plugins running"
	make_ctrs s6 2.1.0/uid-v4 before-restart
	local mark registered
	mark=$(wc -l <"$RUNTIME_LOG")
	rt_stop
	expect "v4: connection gone, not ready" wait_for 10 ready_gone v4
	expect "v4: exits 2, the runtime went away$T_EXIT2" exited v4 2
	rt_start
	# The kubelet restarts v4's container: same instance id, a fresh process.
	start_instance v4r uid-v4 4 2.1.0
	expect "v4 (restarted): ready again" wait_for 30 test -f "$R/v4r.ready"
	round v4r synchronized || true
	expect "v4 (restarted): synchronized as a fresh join with the $CONTAINERS containers that outlived the restart$T_FRESH (mine $MINE, skipped $SKIPPED, unstamped $UNSTAMPED)" \
		bash -c "[ '$MINE' -ge 1 ] && [ '$UNSTAMPED' = 0 ] && [ \$(($MINE + $SKIPPED)) = '$CONTAINERS' ] && ! grep -q 'msg=\"taking over\"' '$R/v4r.log'"
	expect "v4 (restarted): took the state file back (it owned it last)" \
		has "$R/v4r.log" 'msg="owns the state file" .* hand-off="this instance owned it last"'
	hook v4r_checks
	expect "v3 (superseded): stayed down, held and not ready" \
		bash -c "kill -0 ${PID[v3]} && [ \$(grep -c 'registering plugin' '$R/v3.log') = 1 ] && ! test -f '$R/v3.ready'"
	registered=$(tail -n +"$((mark + 1))" "$RUNTIME_LOG" | grep -c 'plugin [^ ]*50-annotator.* registered' || true)
	expect "$RUNTIME: one instance of 50-annotator registered after the restart ($registered)" [ "$registered" = 1 ]
	make_ctrs s6 2.1.0/uid-v4 after-restart-1 after-restart-2
	check_list s6

	# ---- 7. upstream v0.12.5 plugins (legacy) next to ours ------------------------------------------
	step "7. two upstream v0.12.5 plugins (legacy, same name and index) next to ours"
	local u f
	for u in a b; do
		upstream_flags "$u"
		"$R/bin/upstream-plugin" -socket "$R/nri/nri.sock" -name upstream -idx 60 \
			"${UP_FLAGS[@]}" -record "$R/up-$u.jsonl" >/dev/null 2>"$R/up-$u.stderr" &
		PID[up-$u]=$!
		expect "upstream-$u: registered and synchronized" wait_for 30 has "$R/up-$u.jsonl" '"ev":"Synchronize"'
	done
	surge s7 v5 uid-v5 5 2.2.0 v4r
	stop_loop s7
	want_loop s7 2.1.0/uid-v4 2.2.0/uid-v5 "$AT_START" "$AT_READY"
	check_list s7
	for u in a b; do
		check_upstream "$u"
		expect "upstream-$u: not disturbed by our handover (connected, no shutdown)" \
			bash -c "kill -0 ${PID[up-$u]} && ! grep -qE '\"ev\":\"(Shutdown|Exit)\"' '$R/up-$u.jsonl'"
	done
	expect "every synchronization round of every instance found every container stamped (unstamped=0)" \
		bash -c "! grep -h 'unstamped=' '$R'/v*.log | grep -qvE 'unstamped=0( |\$)'"

	for f in "$R"/v*.log "$R"/up-*.stderr; do
		expect "no panic in $(basename "$f")" bash -c "! grep -iE 'panic|fatal' '$f'"
	done
	expect "$RUNTIME: no panic" bash -c "! grep -iE 'panic' '$RUNTIME_LOG'"
	check_ledger "$RUNTIME" "$RUNTIME_LOG" "${LEDGER_EXACT:-0}"

	[ "$FAILED" = 0 ] || echo "== logs in $R: $LOGS_HINT"
	summary
}
