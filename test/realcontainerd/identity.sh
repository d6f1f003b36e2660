#!/usr/bin/env bash
# Who may take over is decided from the runtime's own records (issue 18,
# part D of make e2e-containerd): containerd v2.4.2 built unchanged on our
# NRI (build-containerd.sh), the sample plugin (examples/annotator, built as
# is, statically) running as the container of a pod created through crictl,
# the NRI socket's directory mounted with a hostPath, as deploy/daemonset.yaml
# has it. The runtime learns who a plugin is from the connection (the peer's
# pid, its cgroup, the container and pod the runtime created there), not from
# what the plugin says:
#   1. v1, pod nri-annotator-h1 in kube-system (app=nri-annotator,
#      pod-template-generation=1, controller-revision-hash=h1), registers
#      and becomes active; containerd's admission line names its pod; a
#      workload pod is stamped by v1;
#   2. impostors, while v1 is active, each refused (neither takes over nor
#      becomes active; the refusal names both sides) and v1 keeps serving:
#        host   a host process as root with the plugin's name and index,
#               opted in, generation 2^64-1 (outside any pod);
#        ns     a pod in another namespace with the workload's labels and a
#               newer pod-template-generation;
#        labels a pod in kube-system with other labels (app=evil) and a newer
#               pod-template-generation;
#        old    a pod of the workload with an older pod-template-generation
#               (0) that declares generation 2^64-1 (precedence is the pod's
#               label, not what the plugin declares);
#      then a workload pod is stamped by v1 only;
#   3. the rollout, after those impostors registered: v2, pod nri-annotator-h2
#      of the same workload (pod-template-generation=2, another
#      controller-revision-hash), takes over: containerd's line names both
#      pods, v2's Takeover info names v1's pod, v2 takes the state file from
#      v1, v1 stands by while its pod runs (told STANDBY, not shut down: it
#      would serve again if v2 left); new workload pods are stamped by v2;
#   4. the impostors again, now against v2: refused, v2 keeps serving;
#   5. every container created during the run (workload pods and the plugin
#      pods' own containers) carries at most one stamp, that of the instance
#      active at its creation, in its OCI spec (crictl inspect) and in the
#      instances' logs.
# The plugin's log is its container's log (CRI format, read from the pod's
# log directory); its ready file and the shared state file are hostPath
# mounts. One line per check, then "N passed, N failed".
#
# containerd comes from OURS (a directory with containerd, its shim and ctr
# built by build-containerd.sh; e2e.sh passes surge.sh's) or is built here.
#
# Usage: [R=/tmp/nrd] [OURS=$RC/ours/bin] [KEEP=1] test/realcontainerd/identity.sh
set -euo pipefail

R=${R:-/tmp/nrd}
REPO=$(cd "$(dirname "$0")/../.." && pwd)
CGROUP_PARENT=/nriident-$(basename "$R") # one per scratch directory: clean-up kills what is in it
MAXGEN=18446744073709551615               # 2^64-1
# shellcheck source=../realruntime/lib.sh
. "$REPO/test/realruntime/lib.sh"

step "packages and tools"
install_packages
install_crictl
if [ -z "${OURS:-}" ] || [ ! -x "$OURS/containerd" ] || [ ! -x "$OURS/containerd-shim-runc-v2" ] || [ ! -x "$OURS/ctr" ]; then
	R=$R "$REPO/test/realcontainerd/build-containerd.sh" >"$R/build.log" 2>&1 || { tail -30 "$R/build.log"; exit 1; }
	OURS=$R/ours/bin
fi
export PATH="$OURS:$PATH"
containerd --version

step "images and config"
build_images
rm -rf "$IMG/ann-root" "$R/out" "$R/statedir" "$R"/*.log.txt "$R"/*.pod.json "$R"/*.ctr.json "$R"/*.inspect.json "$R"/podlogs/*
mkdir -p "$IMG/ann-root" "$R/out" "$R/statedir"
# The sample plugin as is, static: the image holds nothing else.
(cd "$REPO" && CGO_ENABLED=0 go build -trimpath -o "$IMG/ann-root/annotator" ./examples/annotator)
cp "$IMG/ann-root/annotator" "$R/bin/annotator"
ANN_IMAGE=localhost/realctrd/annotator:1
oci_archive "$ANN_IMAGE" "$IMG/ann-root" "$IMG/annotator.tar" '["/annotator"]'
write_config
STATE=$R/statedir/state.json # the hostPath /var/lib/nri-annotator of the DaemonSet

declare -A HOSTPID=() CID=() PODID=() STAMP=() LOG=() WANT=() PODOF=()
CTRS=() # every container created: its id, in creation order
cleanup() {
	set +e
	local p l
	# The pods' logs go with the pods: keep a copy (CRI prefix removed).
	for l in "${!CID[@]}"; do text "$l" >"$R/$l.log.txt"; done
	stop_pids "${HOSTPID[@]}"
	cleanup_runtime
}
trap cleanup EXIT

step "start containerd (built on our NRI)"
: >"$R/containerd.log"
start_containerd
ctr -a "$R/containerd.sock" -n k8s.io images import --platform linux/amd64 "$IMG/annotator.tar" >/dev/null

# ---- helpers ------------------------------------------------------------------
# labels_json APP GEN HASH: a DaemonSet pod's labels.
labels_json() {
	printf '{"app": "%s", "pod-template-generation": "%s", "controller-revision-hash": "%s"}' "$1" "$2" "$3"
}
# plugin_pod LABEL NAME NAMESPACE LABELS_JSON GENERATION VERSION: a pod whose
# container is the annotator, as the DaemonSet runs it: instance id = the pod
# uid, generation from the environment (the downward API's
# pod-template-generation, or what an impostor chooses to declare), the NRI
# socket's directory, the ready file's and the state file's as hostPaths.
# Its log is LOG[LABEL] (the container's CRI log), its stamp STAMP[LABEL].
plugin_pod() {
	local label=$1 name=$2 ns=$3 labels=$4 gen=$5 ver=$6 uid want
	uid=uid-$ns-$name
	# The kubelet adds these to every sandbox it asks for (the runtime's
	# NRI pod labels carry them): each names this one pod.
	labels="${labels%\}}, \"io.kubernetes.pod.name\": \"$name\", \"io.kubernetes.pod.namespace\": \"$ns\", \"io.kubernetes.pod.uid\": \"$uid\"}"
	mkdir -p "$R/podlogs/$name" "$R/out/$label"
	cat >"$R/$label.pod.json" <<EOF
{"metadata": {"name": "$name", "namespace": "$ns", "uid": "$uid", "attempt": 0},
 "labels": $labels,
 "log_directory": "$R/podlogs/$name",
 "linux": {"cgroup_parent": "$CGROUP_PARENT",
           "security_context": {"namespace_options": {"network": 2, "pid": 1}}}}
EOF
	cat >"$R/$label.ctr.json" <<EOF
{"metadata": {"name": "annotator"}, "image": {"image": "$ANN_IMAGE"},
 "args": ["-socket", "/var/run/nri/nri.sock", "-version", "$ver", "-ready-file", "/out/ready",
          "-state-file", "/var/lib/nri-annotator/state.json", "-shutdown-timeout", "5s"],
 "envs": [{"key": "NRI_PLUGIN_INSTANCE_ID", "value": "$uid"}, {"key": "NRI_PLUGIN_GENERATION", "value": "$gen"}],
 "mounts": [{"container_path": "/var/run/nri", "host_path": "$R/nri"},
            {"container_path": "/out", "host_path": "$R/out/$label"},
            {"container_path": "/var/lib/nri-annotator", "host_path": "$R/statedir"}],
 "log_path": "annotator.log", "linux": {}}
EOF
	want=$(active_stamp)
	PODID[$label]=$(cri runp "$R/$label.pod.json")
	CID[$label]=$(cri create "${PODID[$label]}" "$R/$label.ctr.json" "$R/$label.pod.json")
	note_ctr "${CID[$label]}" "$ns/$name" "$want"
	cri start "${CID[$label]}" >/dev/null
	LOG[$label]=$R/podlogs/$name/annotator.log
	STAMP[$label]=$ver/$uid
}
# host_plugin LABEL INSTANCE GENERATION VERSION: the annotator as a host
# process (root, outside any pod).
host_plugin() {
	local label=$1 id=$2 gen=$3 ver=$4
	mkdir -p "$R/out/$label"
	"$R/bin/annotator" -socket "$R/nri/nri.sock" -instance "$id" -generation "$gen" -version "$ver" \
		-ready-file "$R/out/$label/ready" -state-file "$STATE" -shutdown-timeout 5s >"$R/$label.log.txt" 2>&1 &
	HOSTPID[$label]=$!
	LOG[$label]=$R/$label.log.txt
	STAMP[$label]=$ver/$id
}
# text LABEL: LABEL's log, without the CRI prefix (time, stream, tag).
text() { sed -E 's/^[^ ]+ (stdout|stderr) [PF] //' "${LOG[$1]}" 2>/dev/null || true; }
has() { text "$1" | grep -qE "$2"; }
ready() { test -f "$R/out/$1/ready"; }
# exited LABEL CODE: LABEL's process (host) or container (pod) ended with
# exit status CODE, and the annotator logged it.
exited() {
	local label=$1 code=$2 rc=0
	if [ -n "${HOSTPID[$label]:-}" ]; then
		wait_for 20 bash -c "! kill -0 ${HOSTPID[$label]} 2>/dev/null" || return 1
		wait "${HOSTPID[$label]}" || rc=$?
		unset "HOSTPID[$label]"
	else
		wait_for 20 ctr_exited "${CID[$label]}" || return 1
		rc=$(cri inspect "${CID[$label]}" | sed -n 's/^ *"exitCode": \([0-9]*\),*$/\1/p' | head -1)
	fi
	[ "$rc" = "$code" ] || echo "  ($label exited with status $rc)"
	[ "$rc" = "$code" ] && has "$label" "msg=\"annotator: (stopped|superseded|refused by the runtime)\".* exit=$code\$"
}
ctr_exited() { cri inspect "$1" 2>/dev/null | grep -q '"state": "CONTAINER_EXITED"'; }
# running LABEL: LABEL's process or container runs.
running() {
	if [ -n "${HOSTPID[$1]:-}" ]; then kill -0 "${HOSTPID[$1]}" 2>/dev/null; return; fi
	cri inspect "${CID[$1]}" 2>/dev/null | grep -q '"state": "CONTAINER_RUNNING"'
}
# since MARK: containerd's log after line MARK.
since() { tail -n +"$(($1 + 1))" "$R/containerd.log"; }
mark() { wc -l <"$R/containerd.log"; }

ACTIVE="" # the label of the instance that must be active
active_stamp() { [ -z "$ACTIVE" ] || echo "${STAMP[$ACTIVE]}"; }
# note_ctr ID WHO WANT: a container created while WANT's instance was the
# active one (WANT empty: none was).
note_ctr() { CTRS+=("$1"); PODOF[$1]=$2; WANT[$1]=$3; }
WORKLOADS=0
# workload: a busybox pod in namespace default, created while ACTIVE is the
# active instance; it must be stamped by ACTIVE only.
workload() {
	WORKLOADS=$((WORKLOADS + 1))
	local name=w$WORKLOADS
	pod_json "$name" 2
	ctr_json "$name"
	local pod ctr
	pod=$(cri runp "$R/$name.pod.json")
	ctr=$(cri create "$pod" "$R/$name.ctr.json" "$R/$name.pod.json")
	note_ctr "$ctr" "default/$name" "$(active_stamp)"
	cri start "$ctr" >/dev/null
	LAST_CTR=$ctr
}
# stamps ID: the stamps the instances logged for container ID, sorted.
stamps() {
	local l
	for l in "${!LOG[@]}"; do text "$l"; done |
		sed -n "s/.*msg=\"stamped container\" .* id=$1 stamp=\([^ ]*\)$/\1/p" | sort | paste -sd' '
}
# annotation ID: the values of the annotator's annotation in the container's
# OCI spec as containerd keeps it.
annotation() {
	{ cri inspect "$1" 2>/dev/null | grep -oE '"annotator\.nri-handover\.io/handled-by": *"[^"]*"' || true; } |
		sed 's/.*: *"\(.*\)"/\1/' | sort -u | paste -sd' '
}
# stamped_once ID: the container was stamped by exactly the wanted instance
# (or by none, when none was active), in the logs and in its OCI spec.
stamped_once() {
	local by spec
	by=$(stamps "$1")
	spec=$(annotation "$1")
	[ "$by" = "${WANT[$1]}" ] && [ "$spec" = "${WANT[$1]}" ]
}
check_ctr() {
	local by spec
	by=$(stamps "$1")
	spec=$(annotation "$1")
	expect "${PODOF[$1]}: stamped once, by ${WANT[$1]:-none (no instance active)} (logs: ${by:-none}; OCI spec: ${spec:-none})" stamped_once "$1"
}
# state_is OWNER RELEASED: the shared state file's owner and release mark.
state_is() { grep -qE "^  \"owner\": \"$1\",\$" "$STATE" && grep -qE "^  \"released\": $2,\$" "$STATE"; }

# serving LABEL: LABEL is the active instance: ready, running, never told
# to stand by or shut down, and it owns the state file.
serving() {
	ready "$1" && running "$1" && state_is "${STAMP[$1]}" false &&
		! has "$1" 'runtime assigns role PLUGIN_ROLE_STANDBY|runtime shuts the plugin down|released the state file|annotator: (stopped|superseded)'
}
still_serving() {
	expect "$1: still active and ready, never told to stand by or shut down, owns the state file" serving "$1"
}

# Admission lines. containerd logs through logrus (msg="..."); the runtime
# names a plugin's pod as "NAMESPACE/NAME (template generation N)" or says
# "outside any pod" (PeerIdentity.PodString, pkg/adaptation/identity.go).
podref() { printf '%s/%s \\(template generation %s\\)' "$1" "$2" "$3"; }

refused_out() { exited "$1" 1 && ! ready "$1" && ! has "$1" 'runtime assigns role PLUGIN_ROLE_ACTIVE|owns the state file'; }
# impostor LABEL MARK INCUMBENT_POD_RE SELF_RE: LABEL registered after MARK and was refused: its
# registration was rejected (the annotator says so and exits 1), it never
# became ready nor took the state file; containerd says why, naming the
# impostor and the active instance's pod.
impostor() {
	local label=$1 m=$2 incumbent_pod=$3 self_re=$4
	expect "$label: registration refused by the runtime" \
		wait_for 20 has "$label" 'msg="annotator: (stopped|refused by the runtime)" error=".*registration rejected by the runtime'
	expect "$label: exits 1, never ready nor active" refused_out "$label"
	local line
	line=$(since "$m" | grep -E 'rejecting plugin registration' | grep -E -- "$self_re" | tail -1 || true)
	expect "$label: containerd's refusal names the impostor ($self_re) and the active instance's pod ($incumbent_pod): ${line:+$(sed -E 's/^.*rejecting plugin registration: //; s/" *$//' <<<"$line" | cut -c1-300)}" \
		bash -c "[ -n \"\$1\" ] && grep -qE -- \"\$2\" <<<\"\$1\"" _ "$line" "$incumbent_pod"
}
# impostors ROUND: the four impostors of step 2, with ACTIVE active; each
# must be refused and leave ACTIVE serving.
impostors() {
	local n=$1 m inc
	# shellcheck disable=SC2086 # three words
	inc=$(podref ${APOD[$ACTIVE]})
	m=$(mark)
	host_plugin "host-$n" "impostor-host-$n" "$MAXGEN" 9.9.$n
	impostor "host-$n" "$m" "$inc" "instance impostor-host-$n|outside any pod"
	expect "host-$n: containerd's log says it is outside any pod" \
		bash -c "tail -n +$((m + 1)) '$R/containerd.log' | grep -E '50-annotator|impostor-host-$n' | grep -q 'outside any pod'"
	still_serving "$ACTIVE"

	m=$(mark)
	plugin_pod "ns-$n" "nri-annotator-n$n" other "$(labels_json nri-annotator $((9 + n)) n$n)" $((9 + n)) 9.8.$n
	impostor "ns-$n" "$m" "$inc" "other/nri-annotator-n$n"
	still_serving "$ACTIVE"

	m=$(mark)
	plugin_pod "labels-$n" "evil-e$n" kube-system "$(labels_json evil $((9 + n)) e$n)" $((9 + n)) 9.7.$n
	impostor "labels-$n" "$m" "$inc" "kube-system/evil-e$n"
	still_serving "$ACTIVE"

	m=$(mark)
	plugin_pod "old-$n" "nri-annotator-o$n" kube-system "$(labels_json nri-annotator 0 o$n)" "$MAXGEN" 9.6.$n
	impostor "old-$n" "$m" "$inc" "kube-system/nri-annotator-o$n"
	still_serving "$ACTIVE"
}
declare -A APOD=() # LABEL: "NAMESPACE NAME TEMPLATE-GENERATION" of a real instance's pod

# ---- 1. v1 ------------------------------------------------------------------
step "1. v1 in pod kube-system/nri-annotator-h1 becomes active"
m=$(mark)
plugin_pod v1 nri-annotator-h1 kube-system "$(labels_json nri-annotator 1 h1)" 1 1.0.0
APOD[v1]="kube-system nri-annotator-h1 1"
expect "v1: ready file appears (active)" wait_for 30 ready v1
expect "v1: starts in its pod with its identity from the environment" \
	has v1 'msg="annotator: starting" plugin=50-annotator version=1\.0\.0 instance=uid-kube-system-nri-annotator-h1 generation=1 '
expect "v1: containerd (built on our NRI) offers handover" has v1 'plugin 50-annotator: runtime \(NRI [^)]*\) offers handover'
expect "v1: takes the state file, the first owner" has v1 'msg="owns the state file" .* hand-off=fresh'
line=$(since "$m" | grep -E '50-annotator' | grep -E "$(podref kube-system nri-annotator-h1 1)" | head -1 || true)
expect "containerd's admission line names v1's pod: ${line:+$(sed -E 's/^.*msg="//; s/" *$//' <<<"$line" | cut -c1-300)}" [ -n "$line" ]
ACTIVE=v1
workload
check_ctr "$LAST_CTR"

# ---- 2. impostors while v1 is active -------------------------------------------
step "2. impostors against v1"
impostors 1
workload
check_ctr "$LAST_CTR"

# ---- 3. the rollout -----------------------------------------------------------------
step "3. rollout: v2 in pod kube-system/nri-annotator-h2 (pod-template-generation 2) takes over"
m=$(mark)
plugin_pod v2 nri-annotator-h2 kube-system "$(labels_json nri-annotator 2 h2)" 2 2.0.0
APOD[v2]="kube-system nri-annotator-h2 2"
expect "v2: ready file appears (active), not kept out by the impostors that registered first" wait_for 30 ready v2
expect "v2: synchronized as a takeover from v1 (${STAMP[v1]})" has v2 "msg=\"taking over\" .* from=${STAMP[v1]}( |\$)"
expect "v2: its Takeover info names v1's pod (kube-system/nri-annotator-h1)" has v2 'msg="taking over" .*kube-system/nri-annotator-h1'

expect "v2: took the state file over, released by v1" \
	wait_for 10 has v2 "msg=\"owns the state file\" .* hand-off=\"clean, released by ${STAMP[v1]}\""
line=$(since "$m" | grep -E 'takes over' | grep -E "$(podref kube-system nri-annotator-h2 2)" | grep -E "$(podref kube-system nri-annotator-h1 1)" | head -1 || true)
expect "containerd's takeover line names both pods: ${line:+$(sed -E 's/^.*msg="//; s/" *$//' <<<"$line" | cut -c1-300)}" [ -n "$line" ]
expect "v1: told to stand by for v2, released the state file" \
	wait_for 10 has v1 "msg=\"released the state file\" .* why=\"standby: ${STAMP[v2]} took over\"\$"
expect "v1: assigned the standby role" wait_for 10 has v1 'runtime assigns role PLUGIN_ROLE_STANDBY'
line=$(since "$m" | grep -E "superseded by .*${STAMP[v2]#*/}" | head -1 || true)
expect "containerd: v1 superseded by v2 and kept as the standby while its pod runs" [ -n "$line" ]
not_has() { ! has "$1" "$2"; }
expect "v1: not shut down (its pod runs: it would serve again if v2 left)" not_has v1 'runtime shuts the plugin down'

not_ready() { ! ready "$1"; }
expect "v1: ready file gone" wait_for 10 not_ready v1
expect "v1: container stays up (the kubelet deletes its pod)" running v1
ACTIVE=v2
workload
check_ctr "$LAST_CTR"

# ---- 4. impostors while v2 is active --------------------------------------------
step "4. impostors against v2"
impostors 2
workload
check_ctr "$LAST_CTR"

# ---- 5. every container -------------------------------------------------------------
step "5. every container of the run"
for c in "${CTRS[@]}"; do check_ctr "$c"; done
n=$(since 0 | grep -cE 'runs beside .*50-annotator|50-annotator.* runs beside' || true)
expect "containerd: no instance of 50-annotator ran beside the real one ($n)" [ "$n" = 0 ]
for l in $(printf '%s\n' "${!LOG[@]}" | sort); do
	expect "no panic in $l's log" bash -c "! sed -E 's/^[^ ]+ (stdout|stderr) [PF] //' '${LOG[$l]}' | grep -iE 'panic|fatal'"
done
expect "containerd: no panic" bash -c "! grep -iE 'panic' '$R/containerd.log'"

[ "$FAILED" = 0 ] || echo "== logs in $R: containerd.log, podlogs/*/annotator.log (the pod instances), *.log.txt (host instances), statedir/state.json"
summary
