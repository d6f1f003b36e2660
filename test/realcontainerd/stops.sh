#!/usr/bin/env bash
# Graceful stops racing takeovers (issue 30, finding 5; part S), on
# containerd v2.4.2 built unchanged on our NRI.
#
# Why: containerd's syncPlugin (its SyncFn) resets its per-container NRI
# state from the CRI store, and relays StopContainer only to containers whose
# state still says created or running; CRI StopContainer holds
# BlockPluginSync across the whole graceful stop and relays after the exit.
# An adaptation that calls SyncFn outside that gate (the design before the
# ledger: at every opted-in registration, in a takeover's first phase) makes
# containerd drop a stop in flight for every plugin, legacy ones included.
# The redesign calls SyncFn only under the gate; a takeover beside a running
# instance synchronizes from the ledger and waits for no operation in flight.
#
#   1. a legacy plugin (test/upstream/stopcount: upstream v0.12.5's stub,
#      GOWORK=off, not opted in) records every StopContainer it is relayed;
#      the sample plugin (examples/annotator, opted in) v1 is active;
#   2. containers that ignore SIGTERM for HOLD seconds (a trap that sleeps,
#      then exits 0) are stopped with `crictl stop --timeout`, one every
#      STEP seconds, each stop holding BlockPluginSync for HOLD seconds;
#      while they run, v2, v3, ... register and take over one after the
#      other, each started just after a stop began;
#   3. every stop was graceful (took about HOLD seconds, the container logged
#      the SIGTERM and left on its own); the legacy plugin got StopContainer
#      once for each container stopped, no more, no fewer (also after the
#      containers are removed); containerd ran no syncPlugin while the stops
#      were in flight (its "Synchronizing NRI (plugin)" line);
#   4. each takeover: took over from its predecessor, how long from its
#      registration to active (the stub's log lines), and that it did so
#      inside one stop's graceful wait (between the crictl stop's start and
#      end), i.e. while that stop held the block.
# One line per check, then "N passed, N failed". About 35 s warm.
#
# Binaries: OURS (containerd on our NRI, its shim and ctr; e2e.sh passes
# surge.sh's $RC/ours/bin) and CRICTL (a crictl; e2e.sh passes run.sh's), copied
# into $R; either missing is built here.
#
# Usage: [R=/tmp/nrs] [OURS=/tmp/nrh/ours/bin] [CRICTL=/tmp/nrc/bin/crictl] [N=10] [HOLD=4] [STEP=1.2] [KEEP=1] test/realcontainerd/stops.sh
set -euo pipefail

R=${R:-/tmp/nrs}
STATE=$R/annotator-state.json
REPO=$(cd "$(dirname "$0")/../.." && pwd)
CGROUP_PARENT=/nristops-$(basename "$R")
N=${N:-10}       # containers stopped
HOLD=${HOLD:-4}  # seconds each container ignores SIGTERM
STEP=${STEP:-1.2} # seconds between two stops
# shellcheck source=../realruntime/lib.sh
. "$REPO/test/realruntime/lib.sh"
# shellcheck source=../realruntime/instances.sh
. "$REPO/test/realruntime/instances.sh"

step "packages and binaries"
install_packages
mkdir -p "$R/ours/bin"
if [ -n "${OURS:-}" ] && [ -x "$OURS/containerd" ] && [ -x "$OURS/containerd-shim-runc-v2" ] && [ -x "$OURS/ctr" ]; then
	cp "$OURS"/{containerd,containerd-shim-runc-v2,ctr} "$R/ours/bin/"
else
	R=$R "$REPO/test/realcontainerd/build-containerd.sh" >"$R/build.log" 2>&1 || { tail -30 "$R/build.log"; exit 1; }
fi
if [ -n "${CRICTL:-}" ] && [ -x "$CRICTL" ]; then cp "$CRICTL" "$R/bin/"; else install_crictl; fi
export PATH="$R/ours/bin:$PATH"
(cd "$REPO" && go build -o "$R/bin/stops-annotator" ./test/realcontainerd/annotator)
# Upstream's stub: never in a workspace.
(cd "$REPO" && GOWORK=off go build -o "$R/bin/stopcount" ./test/upstream/stopcount)

step "images and config"
build_images
write_config
rm -rf "$R"/nri-plugins/* "$R"/v*.log "$R"/v*.ready "$R"/legacy.* "$STATE"* "$R"/stops.* "$R"/*.pod.json \
	"$R"/*.ctr.json "$R"/*.ctr.log "$R"/podlogs/*
: >"$R/containerd.log"

declare -A PID=() STAMP=()
cleanup() {
	set +e
	stop_pids "${PID[@]}"
	cleanup_runtime
}
trap cleanup EXIT

step "1. containerd on our NRI; the legacy plugin and v1"
start_containerd
"$R/bin/stopcount" -socket "$R/nri/nri.sock" -name stopcount -idx 70 -record "$R/legacy.jsonl" 2>"$R/legacy.stderr" &
PID[legacy]=$!
expect "legacy plugin (upstream v0.12.5 stub, not opted in): registered and synchronized" \
	wait_for 30 has "$R/legacy.jsonl" '"ev":"Synchronize"'
ANNOTATOR=$R/bin/stops-annotator
ANNOTATOR_FLAGS=()
start_instance v1 uid-v1 1 1.0.0
expect "v1 (opted in): active" wait_for 30 test -f "$R/v1.ready"

# Containers that ignore SIGTERM for HOLD seconds, then leave on their own;
# they log when they were told to stop.
PODS=2
per=$(((N + PODS - 1) / PODS))
: >"$R/stops.ctrs"
for p in $(seq 1 "$PODS"); do
	pod_json "sp$p" 2
	pid=$(cri runp "$R/sp$p.pod.json")
	for c in $(seq 1 "$per"); do
		[ "$(wc -l <"$R/stops.ctrs")" -lt "$N" ] || break
		name=c$p-$c
		cat >"$R/$name.ctr.json" <<EOF
{"metadata": {"name": "$name"}, "image": {"image": "$BUSYBOX_IMAGE"}, "log_path": "$name.log",
 "command": ["/bin/sh", "-c", "trap 'echo got-TERM; sleep $HOLD; echo leaving; exit 0' TERM; echo started; sleep 3600 & wait"], "linux": {}}
EOF
		id=$(cri create "$pid" "$R/$name.ctr.json" "$R/sp$p.pod.json")
		cri start "$id" >/dev/null
		echo "$name $id sp$p" >>"$R/stops.ctrs"
	done
done
started() { grep -q started "$R/podlogs/$1/$2.log" 2>/dev/null; }
all_started() {
	local name pod
	while read -r name _ pod; do started "$pod" "$name" || return 1; done <"$R/stops.ctrs"
}
expect "$N containers running, their SIGTERM trap set" wait_for 30 all_started

# ---- 2. stops, and takeovers while they hold the block ---------------------------
step "2. $N graceful stops (each ignores SIGTERM for ${HOLD}s), takeovers in between"
mark=$(wc -l <"$R/containerd.log")
: >"$R/stops.times"
# stop_one NAME ID: crictl stop, recording "NAME ID START END STATUS".
stop_one() {
	local s e rc=0
	s=$(date +%s.%N)
	cri stop --timeout 30 "$2" >/dev/null 2>>"$R/stops.err" || rc=$?
	e=$(date +%s.%N)
	echo "$1 $2 $s $e $rc" >>"$R/stops.times"
}
STOP_PIDS=()
gen=1
TAKEOVERS=()
while read -r name id _; do
	stop_one "$name" "$id" &
	STOP_PIDS+=($!)
	sleep 0.3
	# Every stop but the last two gets a takeover started just after it.
	if [ "$gen" -lt $((N - 1)) ]; then
		prev=v$gen
		gen=$((gen + 1))
		start_instance "v$gen" "uid-v$gen" "$gen" "1.$gen.0"
		if wait_for 30 test -f "$R/v$gen.ready"; then
			TAKEOVERS+=("v$gen:$prev")
			# The rollout moves on: the kubelet deletes the old pod.
			stop_pids "${PID[$prev]}"
			unset "PID[$prev]"
		else
			fail "v$gen: became active within 30 s"
			break
		fi
	fi
	sleep "$STEP"
done <"$R/stops.ctrs"
for p in "${STOP_PIDS[@]}"; do wait "$p" || true; done

# ---- 3. the stops, at the legacy plugin ------------------------------------------
step "3. the stops, and StopContainer at the legacy plugin"
stopped=0
while read -r name id s e rc; do
	d=$(awk -v s="$s" -v e="$e" 'BEGIN {printf "%.1f", e - s}')
	pod=$(awk -v n="$name" '$1 == n {print $3}' "$R/stops.ctrs")
	if [ "$rc" = 0 ] && grep -q got-TERM "$R/podlogs/$pod/$name.log" && grep -q leaving "$R/podlogs/$pod/$name.log" &&
		awk -v d="$d" -v h="$HOLD" 'BEGIN {exit !(d >= h - 0.5)}'; then
		stopped=$((stopped + 1))
	else
		fail "$name: stopped gracefully (crictl status $rc, ${d}s, log: $(tr '\n' ' ' <"$R/podlogs/$pod/$name.log" 2>/dev/null))"
	fi
done <"$R/stops.times"
durations=$(awk '{printf "%.1f ", $4 - $3}' "$R/stops.times")
expect "$stopped of $N containers stopped gracefully, each stop holding about ${HOLD}s (${durations% })" [ "$stopped" = "$N" ]
stop_events() { grep -c '"ev":"StopContainer"' "$R/legacy.jsonl" || true; }
wait_for 10 bash -c "[ \$(grep -c '\"ev\":\"StopContainer\"' '$R/legacy.jsonl') -ge $N ]" || true
sleep 1 # a duplicate would come now
got=$(stop_events)
expect "legacy plugin: StopContainer $got times, containers stopped $N" [ "$got" = "$N" ]
once() {
	local id bad=""
	while read -r _ id _; do
		[ "$(grep -cF "\"ctr\":\"$id\"" "$R/legacy.jsonl")" = 1 ] || bad+=" $id"
	done <"$R/stops.ctrs"
	[ -z "$bad" ] || echo "  (not exactly once:$bad)"
	[ -z "$bad" ]
}
expect "legacy plugin: each container's StopContainer exactly once" once
# containerd logs this line in its syncPlugin, the SyncFn it gives NRI.
syncline='Synchronizing NRI (plugin) with current runtime state'
pre=$(head -n "$mark" "$R/containerd.log" | grep -c "$syncline" || true)
syncs=$(tail -n +"$((mark + 1))" "$R/containerd.log" | grep -c "$syncline" || true)
expect "containerd: syncPlugin (its SyncFn) ran $pre times before the stops (its start, the two joins under the gate), $syncs times while the stops and takeovers ran" \
	[ "$pre" -ge 2 -a "$syncs" = 0 ]
expect "legacy plugin: not disturbed by the takeovers (connected, no shutdown)" \
	bash -c "kill -0 ${PID[legacy]} && ! grep -qE '\"ev\":\"(Shutdown|Exit)\"' '$R/legacy.jsonl'"

# ---- 4. the takeovers ----------------------------------------------------------------
step "4. the takeovers, from registration to active"
# logtime LABEL REGEX: the time (epoch seconds) of LABEL's first log line
# matching REGEX (log/slog's time=).
logtime() {
	local t
	t=$(grep -E "$2" "$R/$1.log" | head -1 | sed -n 's/^time=\([^ ]*\) .*/\1/p')
	[ -n "$t" ] && date -d "$t" +%s.%N
}
# within S E: the stop whose crictl call ran from before S to after E (the
# latest begun, if several), "NAME (from-to s into it)".
within() {
	awk -v s="$1" -v e="$2" '$3 <= s && $4 >= e && $3 > best {best = $3; w = sprintf("%s (%.1f-%.1fs into it)", $1, s - $3, e - $3)}
		END {if (w != "") print w}' "$R/stops.times"
}
# took_from NEW OLD INSIDE: NEW's takeover was from OLD, inside a stop.
took_from() { has "$R/$1.log" "msg=\"taking over\" .* from=${STAMP[$2]}" && [ -n "$3" ]; }
n=0
for t in "${TAKEOVERS[@]}"; do
	new=${t%%:*} old=${t#*:}
	n=$((n + 1))
	reg=$(logtime "$new" 'registering plugin') || reg=""
	act=$(logtime "$new" 'plugin [^ ]* is ready') || act=""
	if [ -z "$reg" ] || [ -z "$act" ]; then fail "$new: registration and activation logged"; continue; fi
	took=$(awk -v a="$act" -v r="$reg" 'BEGIN {printf "%.3f", a - r}')
	inside=$(within "$reg" "$act")
	expect "$new: took over from $old (${STAMP[$old]}) in ${took}s from registration to active, inside the graceful stop of ${inside:-none}" \
		took_from "$new" "$old" "$inside"
done
expect "$n takeovers while stops were in flight (at least 3)" [ "$n" -ge 3 ]

# The containers removed: no second StopContainer.
while read -r _ id _; do cri rm "$id" >/dev/null 2>&1 || true; done <"$R/stops.ctrs"
got=$(stop_events)
expect "legacy plugin: still $got StopContainer after the containers were removed" [ "$got" = "$N" ]

for f in "$R"/v*.log; do
	expect "no panic in $(basename "$f")" bash -c "! grep -iE 'panic|fatal' '$f'"
done
expect "containerd: no panic" bash -c "! grep -iE 'panic' '$R/containerd.log'"
[ "$FAILED" = 0 ] || echo "== logs in $R: v*.log (the instances), legacy.jsonl, stops.times, stops.ctrs, containerd.log"
summary
