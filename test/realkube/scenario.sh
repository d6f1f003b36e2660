# scenario.sh: sourced by run.sh. The recording and the load of a rollout
# scenario, and its checks from Kubernetes and from the runtime's own records.
# Everything a scenario SC records goes to $R/ev/SC.*:
#   .pods     one line per watch event of a plugin pod: time name gen uid Ready del=...
#   .ds       one line per watch event of the DaemonSet: time available unavailable ready updated desired
#   .load     one line per load pod: time name ok|FAILED container-id seconds-to-Ready
#   .marks    time what (start, patch, rollout done, kill, stop)
#   .created  one line per container containerd created while SC ran: id, then
#             every plugin instance active between its CreateContainer request
#             and reply (containerd's own log)
#   .lines    containerd.log's line numbers at start and stop
# Container records (crictl inspect) go to $R/ev/inspect/ID.json and the
# plugin pods' container logs are hard-linked into $R/ev/logs (they outlive
# the pod: the kubelet only unlinks its name).

# stamp: prefixes each line with the time it was read (epoch seconds, µs).
stamp() { while IFS= read -r l; do printf '%s %s\n' "$EPOCHREALTIME" "$l"; done; }
mark() { printf '%s %s\n' "$EPOCHREALTIME" "$*" >>"$R/ev/$SC.marks"; }
kcs() { kc -n kube-system "$@"; }
# plugin_pods: name uid ready, one line per plugin pod.
plugin_pods() {
	kcs get pods -l app.kubernetes.io/name=nri-annotator \
		-o jsonpath='{range .items[*]}{.metadata.name} {.metadata.uid} {.status.containerStatuses[0].ready}{"\n"}{end}'
}

REC=() # the recorders' and the load loop's pids, ended by record_stop
# record_start SCENARIO: watches the plugin pods and the DaemonSet, keeps
# the container records and logs, and starts the load loop.
record_start() {
	SC=$1
	mkdir -p "$R/ev/inspect" "$R/ev/logs"
	: >"$R/ev/$SC.marks"
	: >"$R/ev/$SC.load"
	rm -f "$R/ev/stop"
	wc -l <"$R/containerd.log" >"$R/ev/$SC.lines"
	# kubectl itself in the background (nsenter execs it), so that $! is
	# kubectl's pid and record_stop's signal reaches it.
	nsenter --net="/run/netns/$NS" -- kubectl --kubeconfig "$R/admin.kubeconfig" -n kube-system \
		get pods -w -l app.kubernetes.io/name=nri-annotator -o go-template='{{.metadata.name}} {{index .metadata.labels "pod-template-generation"}} {{.metadata.uid}} {{range .status.conditions}}{{if eq .type "Ready"}}{{.status}}{{end}}{{end}} del={{with .metadata.deletionTimestamp}}{{.}}{{end}}{{"\n"}}' \
		> >(stamp >"$R/ev/$SC.pods") 2>&1 &
	REC+=($!)
	nsenter --net="/run/netns/$NS" -- kubectl --kubeconfig "$R/admin.kubeconfig" -n kube-system \
		get ds nri-annotator -w -o go-template='{{or .status.numberAvailable 0}} {{or .status.numberUnavailable 0}} {{or .status.numberReady 0}} {{or .status.updatedNumberScheduled 0}} {{or .status.desiredNumberScheduled 0}}{{"\n"}}' \
		> >(stamp >"$R/ev/$SC.ds") 2>&1 &
	REC+=($!)
	case $SC in s5 | cu) ul_watch ;; esac
	keeper &
	REC+=($!)
	load_loop &
	REC+=($!)
	mark start
	# The load is running before the scenario acts.
	wait_for 90 bash -c "[ \$(wc -l <'$R/ev/$SC.load') -ge 2 ]" || true
}
# record_stop: lets the load create LOAD_AFTER more pods, ends the load loop
# (after its current pod) and the recorders.
record_stop() {
	local n
	n=$(wc -l <"$R/ev/$SC.load")
	wait_for 90 bash -c "[ \$(wc -l <'$R/ev/$SC.load') -ge $((n + ${LOAD_AFTER:-3})) ]" || true
	mark stop
	touch "$R/ev/stop"
	wait_for 90 bash -c "! kill -0 ${REC[-1]} 2>/dev/null" || true
	keep_once
	stop_pids "${REC[@]}"
	REC=()
	wc -l <"$R/containerd.log" >>"$R/ev/$SC.lines"
	created_during "$SC" >"$R/ev/$SC.created"
}

# keep_once: hard-links new container logs of the plugin pods, records every
# container not recorded yet.
keep_once() {
	cp -aln "$PODLOGS/." "$R/ev/logs/" 2>/dev/null || true
	local id
	for id in $(cri ps -aq 2>/dev/null); do
		[ -s "$R/ev/inspect/$id.json" ] || cri inspect "$id" >"$R/ev/inspect/$id.json" 2>/dev/null || rm -f "$R/ev/inspect/$id.json"
	done
}
keeper() { # every half second until the stop file (bounded by the run's timeout)
	while [ ! -e "$R/ev/stop" ]; do keep_once; sleep 0.5; done
}

# load_loop: the load, until the stop file: LOAD_PAR workers (load_worker)
# creating and deleting short-lived pods side by side, and one stopper
# (stop_worker) whose pods take STOP_GRACE seconds to stop, so that
# containerd always has a call in flight that holds BlockPluginSync (a
# StopContainer holds it across the whole graceful stop). It ends once every
# worker ended after its current pod.
load_loop() {
	local w
	for w in $(seq 1 "${LOAD_PAR:-3}"); do load_worker "$w" load & done
	[ "${STOP_GRACE:-10}" = 0 ] || load_worker s stop &
	wait
}
# load_worker W KIND: creates pods on the node one after the other, each
# waited for Ready (60 s), recorded and deleted, until the stop file, at most
# LOAD_MAX. KIND load: deleted at once (grace 0, forced); stop: its
# container ignores SIGTERM (PID 1 without a handler) and is deleted with
# its STOP_GRACE seconds of grace, not waited for. What kubectl said about a
# pod that failed goes to $R/ev/$SC.load.err.
load_worker() {
	local w=$1 kind=$2 i=0 name ok id t0 manifest=$R/manifests/load.yaml
	[ "$kind" = load ] || manifest=$R/manifests/stopper.yaml
	while [ ! -e "$R/ev/stop" ] && [ $i -lt "${LOAD_MAX:-400}" ]; do
		i=$((i + 1))
		name=load-$SC-$w-$i
		ok=FAILED
		t0=$EPOCHREALTIME
		if sed "s/@NAME@/$name/" "$manifest" | kc apply -f - >>"$R/ev/$SC.load.err" 2>&1 &&
			kc wait --for=condition=Ready "pod/$name" --timeout=60s >>"$R/ev/$SC.load.err" 2>&1; then
			ok=ok
		else
			kc get pod "$name" -o yaml >>"$R/ev/$SC.load.err" 2>&1
		fi
		id=$(cri ps -aq --label "io.kubernetes.pod.name=$name" 2>/dev/null | head -1)
		[ -z "$id" ] || cri inspect "$id" >"$R/ev/inspect/$id.json" 2>/dev/null
		printf '%s %s %s %s %.1f\n' "$EPOCHREALTIME" "$name" "$ok" "${id:-none}" "$(awk "BEGIN {print $EPOCHREALTIME - $t0}")" >>"$R/ev/$SC.load"
		if [ "$kind" = load ]; then
			kc delete pod "$name" --wait=false --grace-period=0 --force >/dev/null 2>&1
		else
			kc delete pod "$name" --wait=false >/dev/null 2>&1
		fi
	done
}

# rollout_to VERSION: the image and -version together (the manifest's rule).
rollout_to() {
	mark "patch $1"
	kcs patch ds nri-annotator --type=json -p "[
		{\"op\": \"replace\", \"path\": \"/spec/template/spec/containers/0/image\", \"value\": \"$ANN_IMAGE:$1\"},
		{\"op\": \"replace\", \"path\": \"/spec/template/spec/containers/0/args/0\", \"value\": \"-version=$1\"}]" >/dev/null
}
# rollout_wait: kubectl rollout status, its duration in ROLLOUT_S (and the
# scenario's durations, comma-separated, in the results).
declare -A ROLLOUTS
SC=${SC:-setup}
rollout_wait() {
	local t0=$EPOCHREALTIME rc=0
	kcs rollout status ds/nri-annotator --timeout="${1:-300}s" >/dev/null || rc=$?
	ROLLOUT_S=$(awk "BEGIN {printf \"%.1f\", $EPOCHREALTIME - $t0}")
	mark "rollout done rc=$rc ${ROLLOUT_S}s"
	ROLLOUTS[$SC]+=${ROLLOUTS[$SC]:+,}$ROLLOUT_S
	result "$SC.rollouts-s" "${ROLLOUTS[$SC]}"
	return $rc
}

# ---- the runtime's records ----------------------------------------------------
# created_during SC: from containerd's log between SC's start and stop, each
# container created, with the plugin instances active while containerd
# created it (at its CreateContainer request and until its reply), "none"
# for a time no instance was active: from the active instance's loss (the
# adaptation's "plugin ...[PID] removed", logged only for the active one)
# to the next activation (test/realkube/active reads the whole log).
created_during() {
	"$R/bin/active" -containerd-log "$R/containerd.log" -ev "$R/ev" -scenario "$1" created
}
# annotation_of ID: the stamps on container ID's record (distinct values).
annotation_of() {
	grep -oE '"annotator\.nri-handover\.io/handled-by": *"[^"]*"' "$R/ev/inspect/$1.json" 2>/dev/null |
		sed 's/.*: *"\(.*\)"/\1/' | sort -u | paste -sd' ' || true
}
# nstamps_of ID: how many "stamped container" lines the plugin pods logged for ID.
nstamps_of() { cat "$R"/ev/logs/*/*/*.log 2>/dev/null | grep -F 'msg="stamped container"' | grep -cF " id=$1 " || true; }

# ---- checks -------------------------------------------------------------------
# max_ready SC: the most plugin pods Ready at one time, replaying the watch
# (a pod counts from its Ready=True event to its next event; one being
# deleted does not count).
max_ready() {
	awk '{ready[$2] = ($5 == "True" && $6 == "del=") ? 1 : 0; n = 0; for (p in ready) n += ready[p]; if (n > m) m = n} END {print m + 0}' "$R/ev/$1.pods"
}
# min_available SC: the DaemonSet's lowest numberAvailable while SC ran.
min_available() { awk '$2 + 0 < m || NR == 1 {m = $2 + 0} END {print m + 0}' "$R/ev/$1.ds"; }
# load_counts SC: "created failed slowest-seconds-to-Ready" of the load pods.
load_counts() { awk '{n++} $3 != "ok" {f++} $5 + 0 > m {m = $5 + 0} END {print n + 0, f + 0, m + 0}' "$R/ev/$1.load"; }
# create_errors SC: how many CreateContainer calls containerd failed while
# SC ran (the kubelet retries them, so a pod may still turn Ready, later);
# the first error's text goes to $R/ev/SC.create-errors.
create_errors() {
	local from to
	{ read -r from; read -r to; } <"$R/ev/$1.lines"
	sed -n "$((from + 1)),${to}p" "$R/containerd.log" | grep -F 'level=error msg="CreateContainer' >"$R/ev/$1.create-errors" || true
	wc -l <"$R/ev/$1.create-errors"
}
# stamp_counts SC: "containers one wrong-instance double unstamped window"
# over the containers containerd created while SC ran: one = exactly one
# stamp, from an instance active while it was created, logged once by the
# plugin; window = unstamped, and created while at some moment no instance
# was active (from the active one's loss, even mid-call, to the next
# activation; check_premises fails any other period with none active).
stamp_counts() {
	local id active ann n c=0 one=0 wrong=0 dbl=0 none=0 win=0
	while read -r id active; do
		c=$((c + 1))
		ann=$(annotation_of "$id")
		n=$(nstamps_of "$id")
		if [ -z "$ann" ] && [[ " $active " == *" none "* ]]; then win=$((win + 1))
		elif [ -z "$ann" ]; then none=$((none + 1)); echo "  $id unstamped, active: $active" >&2
		elif [ "${ann// /}" != "$ann" ] || [ "$n" -gt 1 ]; then dbl=$((dbl + 1)); echo "  $id stamped $ann ($n log lines)" >&2
		elif [[ " $active " == *" ${ann#*/} "* ]]; then one=$((one + 1))
		else wrong=$((wrong + 1)); echo "  $id stamped $ann, active: $active" >&2
		fi
	done <"$R/ev/$1.created"
	echo "$c $one $wrong $dbl $none $win"
}

# first_ready SC UID: when the watch first said pod UID is Ready (epoch).
first_ready() { awk -v u="$2" '$4 == u && $5 == "True" && $6 == "del=" {print $1; exit}' "$R/ev/$1.pods"; }
# took_over UID: when containerd made instance UID active (epoch): its
# "superseded by" line naming UID the successor, or, with no predecessor
# left (killed or deleted first), the "connected and synchronized" line of
# the connection that registered as UID.
took_over() {
	local t pid
	t=$(grep -E " superseded by .* instance $1 generation " "$R/containerd.log" | head -1 | sed -n 's/^time="\([^"]*\)".*/\1/p' || true)
	if [ -z "$t" ]; then
		pid=$(grep -F "registered (version" "$R/containerd.log" | grep -F "instance \\\"$1\\\"" | head -1 | sed -n 's/.*50-annotator\[\([0-9]*\)\] registered.*/\1/p' || true)
		[ -z "$pid" ] || t=$(grep -F "50-annotator[$pid] connected and synchronized" "$R/containerd.log" | head -1 | sed -n 's/^time="\([^"]*\)".*/\1/p' || true)
	fi
	[ -z "$t" ] || date -d "$t" +%s.%N
}
# ready_after_active SC: "checked late" over the plugin pods SC created:
# checked = Ready and taken over, late = Ready only after containerd
# logged its takeover (what makes the DaemonSet delete the old pod only
# after the switch).
ready_after_active() {
	local uid r t n=0 late=0
	for uid in $(awk 'NR == 1 {first = $4} $4 != first {print $4}' "$R/ev/$1.pods" | sort -u); do
		r=$(first_ready "$1" "$uid"); t=$(took_over "$uid")
		[ -n "$r" ] && [ -n "$t" ] || continue
		n=$((n + 1))
		awk "BEGIN {exit !($r >= $t)}" && late=$((late + 1))
	done
	echo "$n $late"
}

# old_deleted SC: when the DaemonSet controller deleted the pod that was
# there at SC's start (its first watch event with a deletionTimestamp).
old_deleted() { awk 'NR == 1 {p = $2} $2 == p && $6 != "del=" {print $1; exit}' "$R/ev/$1.pods"; }
# available_between SC FROM TO: the lowest numberAvailable, and the seconds
# it was 0, over the DaemonSet's events in [FROM, TO).
available_between() {
	awk -v a="$2" -v b="$3" '$1 >= a && $1 < b {if (!n++ || $2 + 0 < m) m = $2 + 0; if ($2 + 0 < 1 && !d) {d = 1; t = $1} else if ($2 + 0 >= 1 && d) {d = 0; s += $1 - t}}
		END {if (d) s += b - t; printf "%d %.1f\n", (n ? m : 1), s}' "$R/ev/$1.ds"
}

# takeover_report SC: each instance that registered while SC ran,
# registration → synchronized → active, and the gaps of BlockPluginSync (the
# longest interval with no CRI call that takes it in flight) over SC and
# within each takeover (test/realkube/takeovers); checks that each takeover
# went from synchronized to active within TAKEOVER_BOUND: the plugin request
# timeout (2 s) for the catch-up rounds, plus the hold (its last round and
# two role notices, each bounded by the request timeout: 6 s).
TAKEOVER_BOUND=${TAKEOVER_BOUND:-8}
takeover_report() {
	local out n within sa ra gap sgap
	out=$("$R/bin/takeovers" -containerd-log "$R/containerd.log" -ev "$R/ev" -scenario "$1" -bound "${TAKEOVER_BOUND}s" 2>&1) || true
	printf '%s\n' "$out" | grep -v '^summary:' || true
	read -r n within sa ra gap sgap < <(printf '%s\n' "$out" | sed -n 's/^summary: takeovers=\([0-9]*\) within=\([0-9]*\) max-synced-active=\([0-9.]*\) max-registered-active=\([0-9.]*\) gap=\([0-9.]*\) stop-gap=\([0-9.]*\)$/\1 \2 \3 \4 \5 \6/p')
	result "$1.takeovers" "${n:-0}"
	result "$1.synchronized-to-active-max-s" "${sa:-?}"
	result "$1.registered-to-active-max-s" "${ra:-?}"
	expect "$1: each of ${n:-0} takeovers went from synchronized to active within ${TAKEOVER_BOUND}s (request timeout + hold; longest ${sa:-?}s; registration → active at most ${ra:-?}s), while BlockPluginSync's calls left a gap of at most ${gap:-?}s (stop-side calls ${sgap:-?}s)" \
		[ "${n:-0}" -ge 1 -a "${within:-x}" = "${n:-0}" ]
}

# result_counts SC PODS FAILED CREATE-ERRORS CONTAINERS STAMPED-ONCE WINDOW:
# SC's counts in the run's results (results.sh).
result_counts() {
	result "$1.pods" "$2"; result "$1.pods-failed" "$3"; result "$1.create-errors" "$4"
	result "$1.containers" "$5"; result "$1.stamped-once" "$6"; result "$1.unstamped-while-none" "$7"
}

# check_rollout SC [nokill|kill]: the checks of a rollout on our NRI; with
# nokill also Kubernetes' view of the handover; with kill, containers
# created while no instance was active (the killed one gone, its successor
# not yet switched in) may be unstamped, and are counted.
check_rollout() {
	local sc=$1 n f m e c one wrong dbl none win k late del lo s0 lo2 s2
	read -r n f m < <(load_counts "$sc")
	e=$(create_errors "$sc")
	expect "$sc: $n pods created on the node during the rollout, $f failed, $e CreateContainer calls failed (slowest Ready after ${m}s)" [ "$f" = 0 -a "$e" = 0 -a "$n" -ge 3 ]
	read -r c one wrong dbl none win < <(stamp_counts "$sc")
	result_counts "$sc" "$n" "$f" "$e" "$c" "$one" "$win"
	result "$sc.slowest-ready-s" "$m"
	if [ "${2:-}" = kill ]; then
		expect "$sc: $c containers created, each with exactly one stamp from the instance active at its creation, or none while no instance was active ($one; $win while none was; $wrong from another, $dbl twice, $none none)" \
			[ "$((one + win))" = "$c" -a "$c" -ge 3 ]
	else
		expect "$sc: $c containers created, each with exactly one stamp from the instance active at its creation ($one; $wrong from another, $dbl twice, $none none, $win while none was)" \
			[ "$one" = "$c" -a "$c" -ge 3 ]
	fi
	takeover_report "$sc"
	read -r k late < <(ready_after_active "$sc")
	result "$sc.new-pods" "$k"
	result "$sc.ready-after-active" "$late"
	expect "$sc: each new plugin pod turned Ready only after containerd made it the active instance ($late of $k)" [ "$k" -ge 1 -a "$late" = "$k" ]
	[ "${2:-}" = nokill ] || return 0
	del=$(old_deleted "$sc")
	read -r lo s0 < <(available_between "$sc" 0 "${del:-9e99}")
	result "$sc.available-lowest" "$lo"
	expect "$sc: the DaemonSet's numberAvailable never dropped until the controller deleted the old pod (lowest $lo)" [ "$lo" -ge 1 -a -n "$del" ]
	read -r lo2 s2 < <(available_between "$sc" "${del:-9e99}" 9e99)
	echo "  $sc: after the deletion, numberAvailable $lo2 for ${s2}s while the old pod terminated (the controller counts a node's oldest pod, terminating or not)"
	echo "  $sc: plugin pods Ready at once, at most: $(max_ready "$sc") (the old one stays Ready after it handed over, until deleted)"
}

# check_premises SC: what SC claims to exercise, from containerd's log and
# SC's marks (test/realkube/active): the killed pid was the active
# instance when its connection closed; the deleted pod's instance
# registered, and was active or not (the result deleted-instance says
# which); every period with no active instance ran from the active
# instance's loss to the next activation; an instance superseded by one
# that was lost, whose pod was not being deleted, served again next within
# TAKEOVER_BOUND.
check_premises() {
	local st text
	while read -r st text; do
		case $st in
		ok) pass "$1: $text" ;;
		FAIL) fail "$1: $text" ;;
		result) result "$1.${text%% *}" "${text#* }" ;;
		esac
	done < <("$R/bin/active" -containerd-log "$R/containerd.log" -ev "$R/ev" -scenario "$1" -bound "${TAKEOVER_BOUND}s" premises 2>&1 ||
		echo "FAIL test/realkube/active could not check the premises")
}

# log_count SC REGEX: how many lines of containerd's log matched REGEX while
# SC ran.
log_count() {
	local from to
	{ read -r from; read -r to; } <"$R/ev/$1.lines"
	sed -n "$((from + 1)),${to}p" "$R/containerd.log" | grep -cE "$2" || true
}

# refusals SC: "new came-back": the registrations refused while SC ran,
# split by the refused instance's rollout generation against the one it was
# refused beside or for: new = not older (a new pod, which would stall the
# rollout), came-back = older (a superseded pod registering again).
refusals() {
	local from to
	{ read -r from; read -r to; } <"$R/ev/$1.lines"
	sed -n "$((from + 1)),${to}p" "$R/containerd.log" | grep -F 'rejecting plugin registration' |
		awk '{ n = 0; s = $0
		       while (match(s, /instance [^ ]+ generation [0-9]+/)) {
		           g[++n] = substr(s, RSTART, RLENGTH); sub(/.* /, "", g[n]); s = substr(s, RSTART + RLENGTH) }
		       if (n < 2) next; if (g[1] + 0 < g[2] + 0) back++; else new++ }
		     END { print new + 0, back + 0 }'
}

# check_kill_switch SC: the kill switch rolled out with the shipped manifest
# and back: no creation failed, every container stamped once by the
# instance active at its creation, each new pod switched in by containerd
# (the one without handover superseding the opted-in one, then the opted-in
# one taking over from it), no new pod refused, one plugin pod left, Ready.
check_kill_switch() {
	local sc=$1 n f m e c one wrong dbl none win k late refused off on
	read -r n f m < <(load_counts "$sc")
	e=$(create_errors "$sc")
	expect "$sc: $n pods created on the node during both rollouts, $f failed, $e CreateContainer calls failed (slowest Ready after ${m}s)" [ "$f" = 0 -a "$e" = 0 -a "$n" -ge 3 ]
	read -r c one wrong dbl none win < <(stamp_counts "$sc")
	result_counts "$sc" "$n" "$f" "$e" "$c" "$one" "$win"
	expect "$sc: $c containers created, each with exactly one stamp from the instance active at its creation ($one; $wrong from another, $dbl twice, $none none, $win while none was)" \
		[ "$one" = "$c" -a "$c" -ge 3 ]
	off=$(log_count "$sc" 'superseded by .*, which does not use handover')
	expect "$sc: containerd switched the plugin to the new pod without handover, superseding the opted-in one ($off)" [ "$off" = 1 ]
	on=$(log_count "$sc" 'takes over from external:50-annotator\[[0-9]+\], which does not support handover')
	expect "$sc: with handover back on, the opted-in pod took over from it ($on)" [ "$on" = 1 ]
	# The pod without handover cannot know it was superseded: its connection
	# closes and it may register again before its pod is deleted, and be
	# refused, as older or (without handover) beside the holder of a later
	# generation. Only a refusal of a new pod would stall the rollout.
	read -r refused back < <(refusals "$sc")
	expect "$sc: no new plugin pod refused ($refused refused beside an older holder; $back superseded pods that came back refused)" [ "$refused" = 0 ]
	read -r k late < <(ready_after_active "$sc")
	expect "$sc: both new plugin pods became the active instance ($k)" [ "$k" = 2 ]
	expect "$sc: one plugin pod left, Ready" wait_for 60 one_pod_ready
}
# one_pod_ready: the plugin has one pod, and it is Ready.
one_pod_ready() { [ "$(plugin_pods | awk '{print $3}' | paste -sd' ')" = true ]; }

# ---- s5: an unmodified third-party plugin, opted in by its DaemonSet ---------
# upstream's ulimit-adjuster (containerd-nri-plugins/plugins/ulimit-adjuster,
# on upstream's stub v0.12.5, unmodified): it sets RLIMIT_NOFILE on every
# load container (the load pods' annotation), an adjustment two live
# instances conflict on (containerd's result claims each rlimit for one
# plugin: "plugins ... both tried to set rlimit").
UL_DS=ulimit-adjuster
UL_IMAGE=localhost/ulimit-adjuster
UL_SRC=${UL_SRC:-/work/shared/third_party/containerd-nri-plugins/plugins/ulimit-adjuster}
# build_ulimit_image: the plugin built as test/thirdparty builds upstream's
# samples (its go.mod copied aside, its replace of NRI dropped for upstream
# v0.12.5, GOWORK=off), then images v1 and v2 of it the way the annotator's
# are built (OCI archives, imported into containerd).
build_ulimit_image() {
	local m=$IMG/ul-mod
	mkdir -p "$m" "$IMG/ul-root"
	[ -d "$UL_SRC" ] || { echo "e2e-kubernetes: $UL_SRC missing (the third-party sample plugins)"; return 1; }
	cp "$UL_SRC/go.mod" "$m/ul.mod"
	cp "$UL_SRC/go.sum" "$m/ul.sum"
	(cd "$UL_SRC" && GOWORK=off go mod edit -dropreplace=github.com/containerd/nri -require=github.com/containerd/nri@v0.12.5 "$m/ul.mod" &&
		CGO_ENABLED=0 GOWORK=off GOFLAGS=-mod=mod go build -modfile="$m/ul.mod" -trimpath -ldflags=-s -o "$IMG/ul-root/ulimit-adjuster" .)
	go version -m "$IMG/ul-root/ulimit-adjuster" | grep -qE 'dep[[:space:]]+github.com/containerd/nri[[:space:]]+v0.12.5' ||
		{ echo "e2e-kubernetes: ulimit-adjuster does not link upstream NRI v0.12.5"; return 1; }
	oci_archive "$UL_IMAGE:v1" "$IMG/ul-root" "$IMG/ul-v1.tar" '["/ulimit-adjuster"]'
	oci_archive "$UL_IMAGE:v2" "$IMG/ul-root" "$IMG/ul-v2.tar" '["/ulimit-adjuster"]'
}
# ulimit_manifest ANNOTATE: the DaemonSet (maxSurge 1, maxUnavailable 0),
# with the handover annotation on its pod template if ANNOTATE is yes.
# The plugin has no readiness of its own, so the controller would delete
# the old pod as soon as the new one runs, whether the runtime switched to
# it or not; a kill -9 of the newer instance then leaves the node without
# any instance until the restarted one connects (upstream's join:
# containers created meanwhile go unadjusted). So the pod turns Ready
# UL_START_DELAY (30) s after each start of its container, the restart
# after the kill too: a startupProbe that only runs the plugin's binary
# (-h exits 0) after initialDelaySeconds. 30 s covers the takeover's wait
# for a quiet instant (up to the stopper's 10 s graceful stops).
# minReadySeconds stays 0: with it, the DaemonSet controller deletes the
# old pod only on a sync after the new one is available, and queues that
# sync once, minReadySeconds after the update in which the new pod turned
# Ready; its work queue keeps the earliest pending time of a key, so when
# the new pod restarts and turns Ready again within minReadySeconds, the
# second sync is dropped, the first finds the pod not yet available, and
# the rollout stalls (first whole run; and with minReadySeconds 30 at
# commit 445c9f5: 300 s). With 0 the Ready update itself triggers the
# deletion.
ulimit_manifest() {
	local ann=""
	[ "$1" != yes ] || ann=", annotations: {nri.containerd.io/handover: workload}"
	cat <<Y
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: $UL_DS, namespace: kube-system, labels: {app.kubernetes.io/name: $UL_DS}}
spec:
  selector: {matchLabels: {app.kubernetes.io/name: $UL_DS}}
  minReadySeconds: ${UL_MIN_READY:-0}
  updateStrategy: {type: RollingUpdate, rollingUpdate: {maxSurge: 1, maxUnavailable: 0}}
  template:
    metadata: {labels: {app.kubernetes.io/name: $UL_DS}$ann}
    spec:
      automountServiceAccountToken: false
      priorityClassName: system-node-critical
      tolerations: [{operator: Exists}]
      terminationGracePeriodSeconds: 15
      containers:
      - name: $UL_DS
        image: $UL_IMAGE:v1
        args: [-idx, "60", -name, $UL_DS, -socket, /var/run/nri/nri.sock]
        securityContext: {runAsUser: 0, allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: {drop: [ALL]}}
        volumeMounts: [{name: nri, mountPath: /var/run/nri}]
        startupProbe: {exec: {command: [/ulimit-adjuster, -h]}, initialDelaySeconds: ${UL_START_DELAY:-30}, periodSeconds: 1}
      volumes: [{name: nri, hostPath: {path: /var/run/nri}}]
Y
}
# ul_watch: records the plugin's pods as the API shows them (Ready, its
# lastTransitionTime, restarts) in $SC.ulpods.
ul_watch() {
	nsenter --net="/run/netns/$NS" -- kubectl --kubeconfig "$R/admin.kubeconfig" -n kube-system \
		get pods -w -l "app.kubernetes.io/name=$UL_DS" -o go-template='{{.metadata.name}} {{index .metadata.labels "pod-template-generation"}} {{range .status.conditions}}{{if eq .type "Ready"}}{{.status}} {{.lastTransitionTime}}{{end}}{{end}} restarts={{range .status.containerStatuses}}{{.restartCount}}{{end}} del={{with .metadata.deletionTimestamp}}{{.}}{{end}}{{"\n"}}' \
		> >(stamp >"$R/ev/$SC.ulpods") 2>&1 &
	REC+=($!)
}
# ul_seen POD SINCE: POD's Ready as the API showed it from SINCE on
# ("False@lastTransitionTime True@..."), repeats dropped.
ul_seen() {
	awk -v p="$1" -v t="$2" '$1 >= t && $2 == p && $4 != last {printf "%s%s@%s", (n++ ? " " : ""), $4, $5; last = $4} END {print ""}' "$R/ev/$SC.ulpods"
}
ul_rollout_to() {
	mark "patch $UL_DS $1"
	kcs patch ds "$UL_DS" --type=json -p "[{\"op\": \"replace\", \"path\": \"/spec/template/spec/containers/0/image\", \"value\": \"$UL_IMAGE:$1\"}]" >/dev/null
}
ul_rollout_wait() {
	local t0=$EPOCHREALTIME rc=0
	kcs rollout status "ds/$UL_DS" --timeout="${1:-300}s" >/dev/null || rc=$?
	ROLLOUT_S=$(awk "BEGIN {printf \"%.1f\", $EPOCHREALTIME - $t0}")
	mark "$UL_DS rollout done rc=$rc ${ROLLOUT_S}s"
	ROLLOUTS[$SC]+=${ROLLOUTS[$SC]:+,}$ROLLOUT_S
	result "$SC.rollouts-s" "${ROLLOUTS[$SC]}"
	return $rc
}
# result_rlimits SC PODS NOT-READY CREATE-ERRORS CONTAINERS ONCE NONE TWICE:
# s5's or cu's counts in the run's results (results.sh).
result_rlimits() {
	result "$1.pods" "$2"; result "$1.pods-failed" "$3"; result "$1.create-errors" "$4"
	result "$1.containers" "$5"; result "$1.rlimit-once" "$6"; result "$1.rlimit-none" "$7"; result "$1.rlimit-twice" "$8"
}
# ul_pod GEN: the plugin's pod of template generation GEN, once it exists.
ul_pod() { kcs get pods -l "app.kubernetes.io/name=$UL_DS,pod-template-generation=$1" -o jsonpath='{.items[0].metadata.name}' 2>/dev/null | grep .; }
ul_gen() { kcs get ds "$UL_DS" -o jsonpath='{.metadata.generation}'; }
# ul_pid POD: the host pid of POD's running plugin container.
ul_pid() {
	local id
	id=$(cri ps -q --state running --label "io.kubernetes.pod.name=$1" --label "io.kubernetes.container.name=$UL_DS" | head -1)
	[ -n "$id" ] && cri inspect -o go-template --template '{{.info.pid}}' "$id"
}
# ul_pods_left: the plugin's pod names, space separated.
ul_pods_left() { kcs get pods -l "app.kubernetes.io/name=$UL_DS" -o jsonpath='{.items[*].metadata.name}'; }
# rlimit_counts SC: "containers once none twice unrecorded" over SC's load
# pods, from the runtime's view (crictl inspect's OCI spec): once = exactly
# one RLIMIT_NOFILE entry, with the plugin's values (hard 4321, soft 1234).
rlimit_counts() {
	local id k n c=0 once=0 none=0 twice=0 unrec=0
	while read -r _ _ _ id _; do
		c=$((c + 1))
		if [ "$id" = none ] || [ ! -s "$R/ev/inspect/$id.json" ]; then unrec=$((unrec + 1)); continue; fi
		k=$(jq '[.info.runtimeSpec.process.rlimits[]? | select(.type == "RLIMIT_NOFILE" and .hard == 4321 and .soft == 1234)] | length' "$R/ev/inspect/$id.json")
		n=$(jq '[.info.runtimeSpec.process.rlimits[]? | select(.type == "RLIMIT_NOFILE")] | length' "$R/ev/inspect/$id.json")
		if [ "$k" = 1 ] && [ "$n" = 1 ]; then once=$((once + 1))
		elif [ "$k" = 0 ]; then none=$((none + 1)); echo "  $id: not adjusted" >&2
		else twice=$((twice + 1)); echo "  $id: $k adjusted entries of $n RLIMIT_NOFILE" >&2
		fi
	done <"$R/ev/$1.load"
	echo "$c $once $none $twice $unrec"
}
# ul_took_over: containerd logged, since s5 started, that an instance of the
# plugin took over from another of its workload.
ul_took_over() {
	sed -n "$(head -1 "$R/ev/s5.lines"),\$p" "$R/containerd.log" | grep -qE "60-$UL_DS.* takes over from .*of its workload"
}
