#!/usr/bin/env bash
# The runtime itself upgraded or downgraded in the middle of a plugin's
# rollout (issue 21, item 5; part R of e2e.sh). A DaemonSet's surge leaves two
# instances of the plugin connected for a while; a node's containerd can be
# restarted onto another build at any moment of it. What does each side see?
#
#   1. containerd built on our NRI: the sample plugin (examples/annotator, as
#      surge.sh runs it) rolled out v0 -> v1 (v0 superseded; v0 restarted is
#      refused: its instance id is retired), then v2 surging in, held in its
#      full synchronization (a candidate: two instances connected, v1
#      active). Standby is a runtime option (WithStandbyGrace) that containerd
#      built unchanged does not set, so candidate is the second connected role
#      this build can show;
#   2. containerd restarted onto stock v2.4.2 (upstream NRI v0.12.3): both
#      instances exit and are restarted as the kubelet would; upstream knows
#      no handover: both register as plain plugins, both synchronize, both
#      take the state file and both get every container's creation, in
#      turn: the first stamps it, the second finds the stamp and leaves it
#      (upstream refuses a container two plugins set one annotation on, as
#      two unmodified upstream v0.12.5 plugins show);
#   3. containerd restarted back onto our NRI: both restarted again, at once;
#      the higher generation (v2) ends active, whichever registered first
#      (v1 refused as older, displaced while it synchronized, or superseded
#      after it became active); the containers that outlived both restarts
#      are in v2's first synchronization; every container created afterwards
#      carries exactly one stamp, v2's. The runtime forgot the retired ids
#      (they live in its memory): v0 restarted is refused again, now by the
#      generation rule.
# Pods are created before, between and after the restarts. Which instance
# exits with which code is what the sample logs (exit=N) and what its
# process returns. One line per check, then "N passed, N failed".
#
# Binaries: STOCK (a directory with stock containerd, its shim, ctr and
# crictl; e2e.sh passes run.sh's $RA/bin) and OURS (containerd on our NRI;
# e2e.sh passes surge.sh's $RC/ours/bin), copied into $R; either missing is
# built here (go install of stock v2.4.2; build-containerd.sh).
#
# Usage: [R=/tmp/nrr] [STOCK=/tmp/nrc/bin] [OURS=/tmp/nrh/ours/bin] [KEEP=1] test/realcontainerd/restart.sh
set -euo pipefail

R=${R:-/tmp/nrr}
STATE=$R/annotator-state.json # shared by all instances, as a DaemonSet's hostPath
REPO=$(cd "$(dirname "$0")/../.." && pwd)
CGROUP_PARENT=/nrirestart-$(basename "$R")
# v2 is held in its synchronization until containerd stops: containerd must
# not give up on it first (the default is 2s).
NRI_REQUEST_TIMEOUT=60s
# shellcheck source=../realruntime/lib.sh
. "$REPO/test/realruntime/lib.sh"
# shellcheck source=../realruntime/instances.sh
. "$REPO/test/realruntime/instances.sh"

step "packages and binaries"
install_packages
mkdir -p "$R/stock/bin" "$R/ours/bin"
install_both_containerds
(cd "$REPO" && go build -o "$R/bin/restart-annotator" ./test/realcontainerd/annotator)
# Upstream's plugin links the released containerd/nri: never in a workspace.
(cd "$REPO" && GOWORK=off go build -o "$R/bin/upstream-plugin" ./test/upstream/plugin)
BASE_PATH=$PATH
# use_runtime stock|ours: the containerd, shim and ctr the next start runs.
use_runtime() { export PATH="$R/$1/bin:$BASE_PATH"; }
nri_of() { go version -m "$R/$1/bin/containerd" | awk '$1 == "dep" && $2 ~ /^github.com\/(containerd\/nri|nri-handover\/nri)$/ {print $2 "@" $3}' | paste -sd' '; }
expect "stock containerd $("$R/stock/bin/containerd" --version | awk '{print $3}') links upstream NRI ($(nri_of stock))" \
	bash -c "[[ '$(nri_of stock)' = github.com/containerd/nri@v0.12.3 ]]"
expect "our containerd $("$R/ours/bin/containerd" --version | awk '{print $3}') links our NRI ($(nri_of ours))" \
	bash -c "[[ '$(nri_of ours)' =~ github.com/nri-handover/nri@ ]] && [[ ! '$(nri_of ours)' =~ containerd/nri@v ]]"

step "images and config"
build_images
write_config
rm -rf "$R"/nri-plugins/* "$R"/v*.log "$R"/v*.ready "$R"/hold-* "$R"/up-* "$STATE"* "$R"/*.list "$R"/*.err \
	"$R"/*.pod.json "$R"/*.ctr.json "$R"/*.ctr.log "$R"/*.inspect.json "$R"/podlogs/*
: >"$R/containerd.log"

declare -A PID=() STAMP=() WANT=()
cleanup() {
	set +e
	stop_pids "${PID[@]}"
	cleanup_runtime
}
trap cleanup EXIT

ANNOTATOR=$R/bin/restart-annotator # has, alive, gone: lib.sh; start_instance, round: instances.sh
ANNOTATOR_FLAGS=(-leave-stamped) # on stock containerd both instances get each creation
ready() { test -f "$R/$1.ready"; }
not_ready() { ! test -f "$R/$1.ready"; }
# exit_of LABEL: waits (bounded) for LABEL's process to end; sets E to its
# exit status and the exit= the sample logged, "status/logged" ("running"
# if it did not end).
exit_of() {
	local rc=0
	E=running
	wait_for 20 gone "${PID[$1]}" || return 0
	wait "${PID[$1]}" || rc=$?
	unset "PID[$1]"
	E="$rc/$(sed -n 's/.*msg="annotator: \(stopped\|superseded\|refused by the runtime\)".* exit=\([0-9]*\)$/\2/p' "$R/$1.log" | tail -1)"
}
# since MARK: containerd's log after line MARK (this run of containerd).
since() { tail -n +"$(($1 + 1))" "$R/containerd.log"; }
mark() { wc -l <"$R/containerd.log"; }
# log_has MARK REGEX: containerd logged REGEX after line MARK.
log_has() { since "$1" | grep -qE "$2"; }
both_connected() { ready v1 && not_ready v2 && alive "${PID[v1]}" && alive "${PID[v2]}"; }

# try_pods LIST WANT POD...: host-network pods with one container each, one
# after the other; "POD CTR-ID POD-ID" in $R/LIST.list, or "POD FAILED"
# when a step failed (crictl's error in $R/POD.err). WANT[POD] is the stamp
# (a regex) the container must carry.
try_pods() {
	local list=$1 want=$2 pod
	shift 2
	for pod in "$@"; do
		WANT[$pod]=$want
		list_pod "$list" "$pod" "$R/$pod.err"
	done
}
# created: the ids of the containers created so far, one per line.
created() { cat "$R"/*.list 2>/dev/null | awk '$2 != "FAILED" {print $2}'; }
# stamped_by POD: the stamps of the instances that logged stamping POD's
# container, space-separated, sorted.
stamped_by() {
	cat "$R"/v*.log | sed -n "s/.*msg=\"stamped container\" pod=$1 namespace=default container=bb .* stamp=\([^ ]*\)$/\1/p" |
		sort | paste -sd' '
}
annotation() { grep -oE '"annotator\.nri-handover\.io/handled-by": *"[^"]*"' "$1" 2>/dev/null | sed 's/.*: *"\(.*\)"/\1/' | sort -u | paste -sd' '; }
# check_list LIST: every pod of LIST was created, its container stamped by
# the instances WANT names (their log lines), the stamp in its OCI spec.
check_list() {
	local pod ctr by spec
	while read -r pod ctr _; do
		by=$(stamped_by "$pod")
		if [ "$ctr" = FAILED ]; then
			fail "$pod: created ($(tr '\n' ' ' <"$R/$pod.err" | sed 's/.*desc = //' | cut -c1-200); handlers that ran: ${by:-none})"
			continue
		fi
		cri inspect "$ctr" >"$R/$pod.inspect.json" 2>&1 || true
		spec=$(annotation "$R/$pod.inspect.json")
		expect "$pod: created; stamped by ${WANT[$pod]} (logged: $by; in its OCI spec: $spec)" \
			bash -c "[[ '$by' =~ ^(${WANT[$pod]})$ ]] && [[ '$spec' =~ ^(${WANT[$pod]})$ ]]"
	done <"$R/$1.list"
}
state_owner() { sed -n 's/^  "owner": "\(.*\)",$/\1/p' "$STATE"; }
# state_lists_all: the state file lists every container created so far.
state_lists_all() {
	local c
	for c in $(created); do grep -qE "^    \"$c\": " "$STATE" || return 1; done
}

# ---- 1. our NRI: v0 -> v1, then v2 a candidate ---------------------------------
step "1. containerd on our NRI: v0 rolled out to v1, v2 surging in, held in its synchronization"
use_runtime ours
start_containerd
m1=$(mark)
start_instance v0 uid-v0 1 0.9.0
expect "v0: ready (active)" wait_for 20 ready v0
expect "v0: containerd (ours) offers handover" has "$R/v0.log" 'runtime \(NRI [^)]*\) offers handover'
try_pods p1 0.9.0/uid-v0 before-a
start_instance v1 uid-v1 2 1.0.0
expect "v1: ready (active)" wait_for 30 ready v1
expect "v1: took over from v0" has "$R/v1.log" 'msg="taking over" .* from=0\.9\.0/uid-v0'
expect "v0: superseded, stays up, not ready" \
	wait_for 10 has "$R/v0.log" "runtime shuts the plugin down.*successor"
kill -TERM "${PID[v0]}"
exit_of v0
expect "v0: its pod deleted, exits $E (status/logged)" [ "$E" = 0/0 ]
# The kubelet would not restart a deleted pod's container; a stale process
# with v0's identity (a pod that lingered, a restart racing the deletion) is
# what the retired ids keep out.
start_instance v0r uid-v0 1 0.9.0
exit_of v0r
expect "v0 again (same instance id): registration refused, exits $E" [ "$E" = 1/1 ]
expect "containerd (ours) says why: v0's instance id is retired" \
	log_has "$m1" 'rejecting plugin registration.*uid-v0.*was superseded'
try_pods p1 1.0.0/uid-v1 before-b
start_instance v2 uid-v2 3 2.0.0 -hold-sync "$R/hold-v2"
expect "v2: a candidate, held in its full synchronization" \
	wait_for 30 has "$R/v2.log" 'msg="test: holding synchronization round" round=full$'
try_pods p1 1.0.0/uid-v1 before-c
expect "two instances connected: v1 active and ready, v2 a candidate, not ready" \
	both_connected
check_list p1

# ---- 2. restart onto stock containerd (upstream NRI) ---------------------------
step "2. containerd restarted onto stock v2.4.2 (upstream NRI v0.12.3)"
stop_containerd
exit_of v1
expect "v1 (active): the runtime went away, exits $E" [ "$E" = 2/2 ]
exit_of v2
expect "v2 (candidate, in its synchronization): exits $E" [ "$E" = 2/2 ]
expect "v1 and v2: not ready" not_ready v1
expect "v2: not ready" not_ready v2
n_outlived=$(created | wc -l)
use_runtime stock
start_containerd
m2=$(mark)
# The kubelet restarts both containers: same identity, no hold.
touch "$R/hold-v2.full" "$R/hold-v2.delta"
start_instance v1s uid-v1 2 1.0.0
start_instance v2s uid-v2 3 2.0.0
for l in v1s v2s; do
	expect "$l: told the runtime does not know handover (upstream NRI)" wait_for 30 has "$R/$l.log" \
		'the runtime does not know NRI handover \(upstream NRI\); handover unavailable, ready once synchronized'
	expect "$l: ready once synchronized, as a plain plugin" wait_for 30 ready "$l"
	round "$l" synchronized || true
	expect "$l: synchronized with the $CONTAINERS containers that outlived the restart (of $n_outlived; mine $MINE, skipped $SKIPPED, unstamped $UNSTAMPED)" \
		bash -c "[ '$CONTAINERS' = $n_outlived ] && [ '$UNSTAMPED' = 0 ]"
	expect "$l: takes the state file (no roles on upstream)" has "$R/$l.log" 'msg="owns the state file"'
done
connected=$(since "$m2" | grep -cF 'plugin \"50-annotator\" connected and synchronized' || true)
expect "stock containerd: 50-annotator connected and synchronized twice, as two plain plugins ($connected)" [ "$connected" = 2 ]
# Both instances get every creation, in turn (upstream's behaviour for two
# plugins of one name and index). Upstream refuses a container two plugins
# set one annotation on, so the sample does not stamp twice: the instance
# that comes second finds the first one's stamp and leaves the container to
# it. Either may come first.
try_pods p2 "1.0.0/uid-v1|2.0.0/uid-v2" between-a between-b
check_list p2
# handled_by_both POD: both instances logged POD's creation, one stamping,
# the other leaving it.
handled_by_both() {
	local l n=0
	for l in v1s v2s; do
		has "$R/$l.log" "msg=\"(stamped container|left container to another instance)\" pod=$1 " && n=$((n + 1))
	done
	[ "$n" = 2 ] && [ "$(cat "$R/v1s.log" "$R/v2s.log" | grep -c "msg=\"left container to another instance\" pod=$1 ")" = 1 ]
}
while read -r pod _; do
	expect "$pod: both instances got its creation; the second left it to the first" handled_by_both "$pod"
done <"$R/p2.list"
# What the sample avoids, shown with an unmodified upstream v0.12.5 plugin:
# two instances of it, connected at once, setting the same annotation make
# the creation fail.
for u in a b; do
	"$R/bin/upstream-plugin" -socket "$R/nri/nri.sock" -name upstream -idx 60 -annotate "nri-handover.test/same=1" \
		-record "$R/up-$u.jsonl" >/dev/null 2>"$R/up-$u.stderr" &
	PID[up-$u]=$!
	expect "upstream-$u (v0.12.5): registered and synchronized" wait_for 30 has "$R/up-$u.jsonl" '"ev":"Synchronize"'
done
try_pods p2u none conflict
expect "stock: with two upstream instances setting one annotation, the creation fails ($(tr '\n' ' ' <"$R/conflict.err" | grep -oE 'plugins [^,]*both tried to set [^"]*' | head -1))" \
	bash -c "grep -q '^conflict FAILED' '$R/p2u.list' && grep -q 'both tried to set' '$R/conflict.err'"
stop_pids "${PID[up-a]}" "${PID[up-b]}"
unset "PID[up-a]" "PID[up-b]"

# ---- 3. back onto our NRI -------------------------------------------------------
step "3. containerd restarted back onto our NRI"
stop_containerd
for l in v1s v2s; do
	exit_of "$l"
	expect "$l: the runtime went away, exits $E" [ "$E" = 2/2 ]
done
n_outlived=$(created | wc -l)
use_runtime ours
start_containerd
m3=$(mark)
# The kubelet restarts both at once: which registers first is a race, and
# so is whether v1 became active before v2 registered. Three outcomes, all
# ending with v2 active: v2 first (v1 refused, older), v1 still synchronizing
# (v2 displaces it), v1 active (v2 takes over, v1 superseded).
start_instance v1o uid-v1 2 1.0.0
start_instance v2o uid-v2 3 2.0.0
expect "v2 (generation 3): active, ready" wait_for 30 ready v2o
if has "$R/v2o.log" 'msg="taking over"'; then
	round v2o "taking over" || true
	first="v1 registered first; v2 took over from $FROM"
else
	round v2o synchronized || true
	first="its first round a fresh join (no takeover)"
fi
expect "v2: offered handover again; $first" has "$R/v2o.log" 'runtime \(NRI [^)]*\) offers handover'
expect "v2: its first synchronization has the $CONTAINERS containers that outlived both restarts (of $n_outlived; mine $MINE, skipped $SKIPPED, unstamped $UNSTAMPED)" \
	bash -c "[ '$CONTAINERS' = $n_outlived ] && [ '$UNSTAMPED' = 0 ]"
# v1o_superseded: v1 was told v2 superseded it, and stays up, not ready.
v1o_superseded() {
	wait_for 10 has "$R/v1o.log" 'runtime shuts the plugin down.*successor' && wait_for 10 not_ready v1o && alive "${PID[v1o]}"
}
v2_owns_all() { [ "$(state_owner)" = 2.0.0/uid-v2 ] && state_lists_all; }
if wait_for 10 has "$R/v1o.log" 'registration rejected|runtime shuts the plugin down'; then :; fi
if has "$R/v1o.log" 'registration rejected'; then
	exit_of v1o
	expect "v1 (generation 2): registered second, refused, exits $E" [ "$E" = 1/1 ]
	expect "containerd (ours): v1 is older than v2 (generation 2 < 3)" \
		log_has "$m3" 'rejecting plugin registration.*uid-v1.*older than.*rollout generation 2 < 3'
elif log_has "$m3" 'uid-v2 generation 3 displaces .*uid-v1 generation 2 before it took over'; then
	expect "v1 (generation 2): registered first, displaced by v2 before it became active, stays up, not ready" v1o_superseded
else
	expect "v1 (generation 2): registered first and became active, superseded by v2, stays up, not ready" v1o_superseded
fi
expect "v2: owns the state file, which lists every container created ($(state_owner))" wait_for 10 v2_owns_all
# What the runtime forgot: the retired ids lived in the memory of the
# containerd that superseded v0. v0 is kept out by its generation now.
start_instance v0o uid-v0 1 0.9.0
exit_of v0o
expect "v0 again: refused, exits $E" [ "$E" = 1/1 ]
reason=$(since "$m3" | grep -oE 'rejecting plugin registration: [^"]*uid-v0[^"]*' | head -1 || true)
by_generation() { [[ $reason =~ "older than".*"(rollout generation 1 < 3)" ]] && [[ ! $reason =~ "was superseded" ]]; }
expect "containerd (ours, restarted) forgot v0's retired id and refuses it by the generation rule (${reason#*: })" by_generation
try_pods p3 2.0.0/uid-v2 after-a after-b
check_list p3
expect "v2 is the one active instance, v1 not ready" bash -c "test -f '$R/v2o.ready' && ! test -f '$R/v1o.ready'"

for f in "$R"/v*.log; do
	expect "no panic in $(basename "$f")" bash -c "! grep -iE 'panic|fatal' '$f'"
done
expect "containerd: no panic" bash -c "! grep -iE 'panic' '$R/containerd.log'"
[ "$FAILED" = 0 ] || echo "== logs in $R: v*.log (the instances), annotator-state.json, *.list, *.err, containerd.log"
summary
