#!/usr/bin/env bash
# Part U of make e2e-containerd (make e2e-containerd-patched runs it alone):
# the seed's surge rollout on upstream containerd/nri v0.12.5 with the
# patches of upstream-patches/ (PRs a-d) applied, not on this module.
#   - the patched tree is the one make upstream-patches leaves in
#     _output/upstream-patches/tree, made afresh (hack/upstream-patches.sh
#     tree, seconds) when it is missing or older than the patches;
#   - containerd v2.4.2, unchanged, is built in a workspace with that tree
#     (build-containerd.sh with NRI_TREE: the binary links the tree, not a
#     release and not our module);
#   - the plugin (patched/, a module of its own) is built in a workspace with
#     the same tree: the patched stub, opted in with WithHandover and told
#     reasons through ShutdownWithReasonInterface.
# Then, with real pods created one after the other by a loop that never
# stops: v1 active; v2 (generation 2) takes over; v3 (generation 3), whose
# Synchronize takes SLOW_SYNC (a plugin reconciling its state), takes over
# from v2. Checked: every pod's RunPodSandbox, CreateContainer and
# StartContainer handled exactly once, by one instance, whose stamp is in
# the container's OCI spec; each predecessor told STANDBY, then SUPERSEDED,
# handles nothing after, and exits with stub.ErrSuperseded. Measured, on
# containerd's log and the loop's clock: how long each takeover held the
# sync lock (from the successor's registration to the switch), and how long
# the pod operations caught in it waited, against those outside it. The
# counts go to docs/results/e2e-containerd-patched.txt.
#
# Usage: [R=/tmp/nru] [LOOP_AFTER=5] [SLOW_SYNC=1s] [CRICTL=path] test/realcontainerd/patched.sh
set -euo pipefail

R=${R:-/tmp/nru}
REPO=$(cd "$(dirname "$0")/../.." && pwd)
CGROUP_PARENT=/nripatched-$(basename "$R")
LOOP_AFTER=${LOOP_AFTER:-5}
SLOW_SYNC=${SLOW_SYNC:-1s}
NRI_REQUEST_TIMEOUT=10s # above SLOW_SYNC: the slow Synchronize must not time out
TREE=$REPO/_output/upstream-patches/tree
# shellcheck source=../realruntime/lib.sh
. "$REPO/test/realruntime/lib.sh"
# Its own results file: the figures of upstream plus the patches, apart from
# those of this module (e2e-containerd.txt).
results_open e2e-containerd-patched
PART=U

declare -A PID=() PIDOF=()
LOOP_PID=""
cleanup() {
	set +e
	[ -n "$LOOP_PID" ] && kill "$LOOP_PID" 2>/dev/null
	stop_pids "${PID[@]}"
	cleanup_runtime
}
trap cleanup EXIT

step "the patched tree, containerd and the plugin on it"
install_packages
if [ -n "${CRICTL:-}" ] && [ -x "$CRICTL" ]; then cp "$CRICTL" "$R/bin/"; else install_crictl; fi
# The tree is current when it was made from the patches as they are now.
sums() { (cd "$REPO/upstream-patches" && sha256sum series ./*.patch buf.gen.yaml); }
if [ ! -d "$TREE" ] || ! diff -q <(sums) "$TREE/../patches.sum" >/dev/null 2>&1; then
	[ -x "$REPO/.bin/buf" ] || make -C "$REPO" "$REPO/.bin/buf" >/dev/null
	"$REPO/hack/upstream-patches.sh" tree
fi
echo "patched tree: $TREE ($(git -C "$TREE" log --format=%s | paste -sd' '))"
NRI_TREE=$TREE R=$R "$REPO/test/realcontainerd/build-containerd.sh" >"$R/build.log" 2>&1 || { tail -30 "$R/build.log"; exit 1; }
grep '^PASS' "$R/build.log"
export PATH="$R/patched/bin:$PATH"
mkdir -p "$R/plugin"
rm -f "$R/plugin/go.work" "$R/plugin/go.work.sum"
(cd "$R/plugin" && go work init "$REPO/test/realcontainerd/patched" "$TREE")
(cd "$REPO/test/realcontainerd/patched" && GOWORK=$R/plugin/go.work GOFLAGS= go build -o "$R/bin/patched-plugin" .)
go version -m "$R/bin/patched-plugin" | grep -E '^[[:space:]]*dep[[:space:]]+github.com/containerd/nri[[:space:]]+\(devel\)' >/dev/null ||
	{ echo "FAIL: the plugin does not link the patched tree"; exit 1; }
containerd --version

step "images and config; containerd on the patched tree"
build_images
write_config
rm -rf "$R"/nri-plugins/* "$R"/v*.log "$R"/*.list "$R"/*.times "$R"/stop-* "$R"/*.pod.json "$R"/*.ctr.json \
	"$R"/*.inspect.json "$R"/podlogs/* "$R/loop.err"
: >"$R/containerd.log"
start_containerd

# instance LABEL GENERATION [FLAGS...]: an instance of the plugin, its
# instance id uid-LABEL, identity from the environment as the downward API
# gives it; its lines in $R/LABEL.log.
instance() {
	local label=$1 gen=$2
	shift 2
	NRI_PLUGIN_INSTANCE_ID=uid-$label NRI_PLUGIN_GENERATION=$gen "$R/bin/patched-plugin" \
		-socket "$R/nri/nri.sock" "$@" >"$R/$label.log" 2>"$R/$label.stderr" &
	PID[$label]=$!
	PIDOF[$label]=$!
}
# create_loop: pods s-1, s-2, ... until $R/stop-s, each "POD START END"
# (seconds, the loop's clock) in $R/s.times.
create_loop() {
	local i=0 t0
	while [ ! -e "$R/stop-s" ]; do
		i=$((i + 1))
		t0=$EPOCHREALTIME
		list_pod s "s-$i" "$R/loop.err"
		echo "s-$i $t0 $EPOCHREALTIME" >>"$R/s.times"
	done
}
count() { wc -l <"$R/s.list"; }
# more N: wait until the loop created N more pods.
more() { local n; n=$(count); wait_for 120 bash -c "[ \$(wc -l <'$R/s.list') -ge $((n + $1)) ]"; }
# ctrd_time REGEX: containerd's time (Unix seconds) of its first log line
# matching REGEX.
ctrd_time() {
	local t
	t=$(grep -m1 -E "$1" "$R/containerd.log" | sed -n 's/^time="\([^"]*\)".*/\1/p')
	[ -n "$t" ] && date -d "$t" +%s.%N
}
# line LABEL WHAT: the first line of LABEL's log with WHAT; its time.
line_time() { grep -m1 -E "^[0-9.]+ [^ ]+ $2" "$R/$1.log" | cut -d' ' -f1; }
# roles LABEL: the roles and the shutdown reason LABEL was told, in order.
roles() { sed -n 's/^[0-9.]* [^ ]* \(ROLE [A-Z_]*\|SHUTDOWN [A-Z_]*\).*/\1/p' "$R/$1.log" | sed 's/ PLUGIN_ROLE_\| SHUTDOWN_REASON_/ /' | paste -sd,; }
roles_are() { [ "$(roles "$1")" = "$2" ]; }
# exit_status LABEL: LABEL ended with status 0 after Run returned
# stub.ErrSuperseded.
exit_status() {
	local rc=0
	wait_for 10 gone "${PID[$1]}" || return 1
	wait "${PID[$1]}" || rc=$?
	unset "PID[$1]"
	[ "$rc" = 0 ] && has "$R/$1.log" 'EXIT stub: superseded by another instance'
}

step "1. v1 active; pods created one after the other from now on"
instance v1 1
expect "v1: told ACTIVE when it joins" wait_for 30 has "$R/v1.log" 'ROLE PLUGIN_ROLE_ACTIVE peer=$'
: >"$R/s.list"
: >"$R/s.times"
create_loop &
LOOP_PID=$!
more "$LOOP_AFTER"

step "2. v2 (generation 2) takes over"
instance v2 2
expect "v2: told ACTIVE, naming v1" wait_for 30 has "$R/v2.log" 'ROLE PLUGIN_ROLE_ACTIVE peer=uid-v1$'
expect "v1: told SUPERSEDED" wait_for 30 has "$R/v1.log" 'SHUTDOWN SHUTDOWN_REASON_SUPERSEDED superseded by instance "uid-v2"'
expect "v1: told ACTIVE, STANDBY, then SUPERSEDED" wait_for 10 roles_are v1 "ROLE ACTIVE,ROLE STANDBY,SHUTDOWN SUPERSEDED"
expect "v1: Run returns stub.ErrSuperseded, exit 0" exit_status v1
more "$LOOP_AFTER"

step "3. v3 (generation 3, a Synchronize of $SLOW_SYNC) takes over from v2"
instance v3 3 -sync-delay "$SLOW_SYNC"
expect "v3: told ACTIVE, naming v2" wait_for 60 has "$R/v3.log" 'ROLE PLUGIN_ROLE_ACTIVE peer=uid-v2$'
expect "v2: told ACTIVE, STANDBY, then SUPERSEDED" wait_for 30 roles_are v2 "ROLE ACTIVE,ROLE STANDBY,SHUTDOWN SUPERSEDED"
expect "v2: Run returns stub.ErrSuperseded, exit 0" exit_status v2
more "$LOOP_AFTER"
touch "$R/stop-s"
wait "$LOOP_PID" || true
LOOP_PID=""

step "4. every pod: each event exactly once, by one instance, its stamp in the OCI spec"
# took_over LABEL PREV: containerd's line, naming the processes.
took_over() { grep -qE "\[${PIDOF[$1]}\]\) took over from [^ ]*\[${PIDOF[$2]}\]" "$R/containerd.log"; }
expect "containerd: v2 took over from v1, v3 from v2" bash -c "$(declare -f took_over); $(declare -p PIDOF R); took_over v2 v1 && took_over v3 v2"
declare -A HANDLED=()
bad="" pods=0 failed=0
while read -r pod ctr _; do
	if [ "$ctr" = FAILED ]; then failed=$((failed + 1)); continue; fi
	pods=$((pods + 1))
	by=""
	for ev in RunPodSandbox CreateContainer StartContainer; do
		n=$(cat "$R"/v*.log | grep -cE "^[0-9.]+ [^ ]+ EVENT $ev pod=$pod " || true)
		[ "$n" = 1 ] || bad+=" $pod:$ev×$n"
	done
	by=$(cat "$R"/v*.log | sed -n "s/^[0-9.]* \([^ ]*\) EVENT CreateContainer pod=$pod .*/\1/p" | paste -sd' ')
	HANDLED[${by:-none}]=$((${HANDLED[${by:-none}]:-0} + 1))
	cri inspect "$ctr" >"$R/$pod.inspect.json" 2>&1 || true
	spec=$(grep -oE '"nri-handover\.test/handled-by": *"[^"]*"' "$R/$pod.inspect.json" | sed 's/.*: *"\(.*\)"/\1/' | sort -u | paste -sd' ')
	[ "$spec" = "$by" ] || bad+=" $pod:spec=$spec,handled-by=$by"
done <"$R/s.list"
expect "none of the $((pods + failed)) pods failed to start ($(head -3 "$R/loop.err" 2>/dev/null | paste -sd' '))" [ "$failed" = 0 ]
expect "each of the $pods pods: RunPodSandbox, CreateContainer, StartContainer exactly once; the instance that created its container stamped its OCI spec${bad:+ (wrong:$bad)}" [ -z "$bad" ]
# after LABEL: LABEL handled no event after it was told SUPERSEDED.
after() {
	local t
	t=$(line_time "$1" 'SHUTDOWN SHUTDOWN_REASON_SUPERSEDED')
	[ -n "$t" ] && awk -v t="$t" '$3 == "EVENT" && $1 + 0 > t + 0 { bad = 1 } END { exit bad }' "$R/$1.log"
}
expect "v1: no event after SUPERSEDED" after v1
expect "v2: no event after SUPERSEDED" after v2
echo "  containers created by: v1 ${HANDLED[uid-v1]:-0}, v2 ${HANDLED[uid-v2]:-0}, v3 ${HANDLED[uid-v3]:-0}"
expect "each instance created containers while active (v1 ${HANDLED[uid-v1]:-0}, v2 ${HANDLED[uid-v2]:-0}, v3 ${HANDLED[uid-v3]:-0})" \
	[ "${HANDLED[uid-v1]:-0}" -ge 1 -a "${HANDLED[uid-v2]:-0}" -ge 1 -a "${HANDLED[uid-v3]:-0}" -ge 1 ]

step "5. what each join under the sync lock cost the pods"
# window LABEL PREV: from LABEL's registration to containerd switching to it
# (its "took over" line), on containerd's clock: the sync lock is held from
# just after the registration (Configure, then requestPluginSync) to the
# switch, and every pod operation waits for it.
result U.pods "$pods"
result U.failed-pods "$failed"
for label in v1 v2 v3; do result "U.containers.$label" "${HANDLED[uid-$label]:-0}"; done
baseline=$(awk '{ printf "%.1f\n", ($3 - $2) * 1000 }' "$R/s.times" | sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }')
echo "  a pod (RunPodSandbox, CreateContainer, StartContainer through crictl), median of all $pods: $baseline ms"
result U.pod-median-ms "$baseline"
for pair in v2:v1 v3:v2; do
	label=${pair%%:*} prev=${pair##*:}
	from=$(ctrd_time "instance [^ ]*uid-$label[^ ]*, generation") || from=""
	to=$(ctrd_time "\\[${PIDOF[$label]}\\]\\) took over from [^ ]*\\[${PIDOF[$prev]}\\]") || to=""
	if [ -z "$from" ] || [ -z "$to" ]; then fail "$label: registration and switch in containerd's log"; continue; fi
	held=$(awk -v a="$from" -v b="$to" 'BEGIN { printf "%.1f", (b - a) * 1000 }')
	# The pods whose operations overlapped the window, and the longest.
	read -r caught worst < <(awk -v a="$from" -v b="$to" '$3 > a && $2 < b { n++; d = ($3 - $2) * 1000; if (d > m) m = d } END { printf "%d %.1f\n", n, m }' "$R/s.times")
	echo "  $label: registration to switch $held ms; $caught pods overlapped it, the longest took $worst ms"
	result "U.$label.join-ms" "$held"
	result "U.$label.caught" "$caught"
	result "U.$label.caught-max-ms" "$worst"
	expect "$label: the takeover completed ($held ms from registration to switch)" [ -n "$held" ]
done
result U.slow-sync "$SLOW_SYNC"

for f in "$R"/v*.log "$R"/v*.stderr; do
	expect "no panic in $(basename "$f")" bash -c "! grep -iE 'panic|fatal' '$f'"
done
expect "containerd: no panic" bash -c "! grep -iE 'panic' '$R/containerd.log'"
stop_pids "${PID[@]}"
PID=()
if summary; then rc=0; else rc=1; fi
results_close "$([ $rc = 0 ] && echo passed || echo failed)"
exit $rc
