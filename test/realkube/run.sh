#!/usr/bin/env bash
# run.sh: a real single-node Kubernetes cluster (etcd, kube-apiserver,
# kube-controller-manager, kube-scheduler, kubelet; k8s.io/kubernetes v1.37.2,
# build-kube.sh) over containerd v2.4.2 built unchanged on our NRI
# (test/realcontainerd/build-containerd.sh), all inside a network namespace of
# the run's own, with deploy/daemonset.yaml applied, only its image replaced.
# While a load creates and deletes pods on the node, several at once and one
# always stopping gracefully, so that containerd always holds
# BlockPluginSync (scenario.sh records the pods, the DaemonSet and every
# container, checks them against containerd's own log, and prints each
# takeover's registration → synchronized → active and the gaps):
#   s1  the rollout v1 -> v2 (image and -version patched together);
#   s2  kubectl rollout undo;
#   s3  a rollout with the active instance's process killed (-9) as the new
#       pod starts, then one with the new pod deleted before it is Ready;
#   s4  the kill switch rolled out (kubectl set env NRI_PLUGIN_HANDOVER=off):
#       the new pod, an upstream-style plugin, takes over; then handover
#       turned back on (the variable removed), which takes over from it;
#   s5  upstream's ulimit-adjuster, unmodified (upstream's stub v0.12.5), as
#       a DaemonSet whose pod template carries nri.containerd.io/handover:
#       workload (maxSurge 1, maxUnavailable 0): v1 -> v2 with the newer
#       instance killed (-9) once it took over, then kubectl rollout undo;
#       every load container carries its RLIMIT_NOFILE exactly once;
#   cu  its control: the same rollouts without the annotation on the same
#       node (both instances get every event, as upstream): creations fail;
#   ref a plain DaemonSet (no NRI) rolled the same way;
#   c   the control: the same rollout on stock containerd v2.4.2 (upstream
#       NRI), which fails creations while both instances are connected.
# One line per check, then "N passed, N failed"; figures in
# docs/runtime-integration.md ("Kubernetes").
#
# Usage (root): [R=/tmp/nrk] [NS=nrk] [NODE_IP=10.213.0.2] [SCENARIOS="s1 s5"] test/realkube/run.sh
# SCENARIOS: the scenarios to run, of s1 s2 s3 s4 s5 cu ref c (default:
# all; s2 undoes s1's rollout).
# Bounded by its waits; the EXIT trap stops every process it started, unmounts
# what the kubelet mounted, removes the netns and cgroups and restores the
# sysctls the kubelet rewrites, also on failure.
set -euo pipefail
R=${R:-/tmp/nrk}
NS=${NS:-nrk$(printf %s "$R" | cksum | cut -c1-5)}
NODE_IP=${NODE_IP:-10.213.0.2}
NODE=nrk-node
CGROUP_PARENT=/nrk-pods # lib.sh's clean-up removes it; the kubelet's cgroupRoot
PODLOGS=$R/podlogs-k    # the kubelet's podLogsDir
REPO=$(cd "$(dirname "$0")/../.." && pwd)
SCENARIOS=${SCENARIOS:-s1 s2 s3 s4 s5 cu ref c}
want() { [[ " $SCENARIOS " == *" $1 "* ]]; }
DIR=$REPO/test/realkube
if [ "$(id -u)" != 0 ]; then
	echo "e2e-kubernetes: SKIPPED: needs root (it runs a kubelet, containerd, runc and CNI); run it as root"
	exit 0
fi
# shellcheck source=../realruntime/lib.sh
. "$REPO/test/realruntime/lib.sh"
# shellcheck source=scenario.sh
. "$DIR/scenario.sh"
results_open e2e-kubernetes
result scenarios "${SCENARIOS// /,}"
# A run starts from an empty cluster (the certificates and builds are kept).
rm -rf "$R"/{etcd,kubelet,logs,manifests,ev,podlogs-k} "$R/containerd.log"
mkdir -p "$R"/{pki,etcd,kubelet,logs,manifests}

SYSCTLS="vm.overcommit_memory kernel.panic kernel.panic_on_oops"
declare -A SAVED
for s in $SYSCTLS; do SAVED[$s]=$(sysctl -n "$s"); done
PIDS=()
KUBELET_PID=""
inns() { nsenter --net="/run/netns/$NS" -- "$@"; }
# bg NAME CMD...: start CMD in the netns, log to $R/logs/NAME.log. nsenter
# (net only) execs CMD, so $! is CMD's own pid (a function put in the
# background would be a subshell whose death leaves CMD running).
bg() {
	local n=$1; shift
	nsenter --net="/run/netns/$NS" -- "$@" >>"$R/logs/$n.log" 2>&1 &
	PIDS+=($!)
}
cleanup() {
	local rc=$?
	set +e
	trap - EXIT
	# The kubelet first (it would restart what containerd stops), then the
	# control plane (cleanup_runtime's final wait would wait for it), then the
	# pods through CRI and containerd.
	touch "$R/ev/stop" 2>/dev/null
	stop_pids "${REC[@]}"
	[ -z "$KUBELET_PID" ] || stop_pids "$KUBELET_PID"
	stop_pids "${PIDS[@]}"
	cleanup_runtime
	mount | awk '{print $3}' | grep "^$R/" | sort -r | while read -r m; do umount -l "$m"; done
	for d in /sys/fs/cgroup/*/nrk-pods /sys/fs/cgroup/nrk-pods; do
		[ -d "$d" ] && find "$d" -depth -type d -exec rmdir {} \; 2>/dev/null
	done
	ip netns del "$NS" 2>/dev/null
	for s in $SYSCTLS; do sysctl -qw "$s=${SAVED[$s]}"; done
	rm -rf /var/lib/nri-annotator /var/run/nri
	wait 2>/dev/null
	exit "$rc"
}
trap cleanup EXIT

step "build: components (cached), containerd on our NRI, the annotator image"
KBIN=$("$DIR/build-kube.sh")
for b in kube-apiserver kube-controller-manager kube-scheduler kubelet kubectl etcd; do ln -sf "$KBIN/$b" "$R/bin/$b"; done
install_packages
install_crictl
R=$R "$REPO/test/realcontainerd/build-containerd.sh" >"$R/build.log" 2>&1 || { tail -30 "$R/build.log"; exit 1; }
for b in containerd containerd-shim-runc-v2 ctr; do ln -sf "$R/ours/bin/$b" "$R/bin/$b"; done
build_images
mkdir -p "$IMG/ann-root"
(cd "$REPO" && CGO_ENABLED=0 go build -trimpath -ldflags=-s -o "$IMG/ann-root/annotator" ./examples/annotator)
ANN_IMAGE=localhost/nri-annotator
oci_archive "$ANN_IMAGE:v1" "$IMG/ann-root" "$IMG/ann-v1.tar" '["/annotator"]'
oci_archive "$ANN_IMAGE:v2" "$IMG/ann-root" "$IMG/ann-v2.tar" '["/annotator"]'
build_ulimit_image >"$R/build-ulimit.log" 2>&1 || { tail -30 "$R/build-ulimit.log"; exit 1; }

# The node IP sits on one end of a veth pair whose both ends stay in the
# netns (this kernel has no dummy interfaces); nothing reaches the host's.
step "network namespace $NS, node IP $NODE_IP on a veth inside it"
ip netns del "$NS" 2>/dev/null || true
ip netns add "$NS"
inns ip link set lo up
inns ip link add nrk0 type veth peer name nrk1
inns ip addr add "$NODE_IP/24" dev nrk0
inns ip link set nrk1 up
inns ip link set nrk0 up

step "certificates"
P=$R/pki
if [ ! -s "$P/admin.crt" ]; then
	openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=nrk-ca -keyout "$P/ca.key" -out "$P/ca.crt" 2>/dev/null
	cert() { # cert NAME SUBJ [SAN]
		openssl req -newkey rsa:2048 -nodes -subj "$2" -keyout "$P/$1.key" -out "$P/$1.csr" 2>/dev/null
		openssl x509 -req -in "$P/$1.csr" -CA "$P/ca.crt" -CAkey "$P/ca.key" -CAcreateserial -days 2 \
			${3:+-extfile <(printf 'subjectAltName=%s\n' "$3")} -out "$P/$1.crt" 2>/dev/null
	}
	cert apiserver /CN=kube-apiserver "IP:$NODE_IP,IP:10.0.0.1,DNS:kubernetes,DNS:kubernetes.default.svc"
	cert admin "/O=system:masters/CN=nrk-admin"
	openssl genrsa -out "$P/sa.key" 2048 2>/dev/null
	openssl rsa -in "$P/sa.key" -pubout -out "$P/sa.pub" 2>/dev/null
fi
cat >"$R/admin.kubeconfig" <<K
apiVersion: v1
kind: Config
clusters: [{name: nrk, cluster: {server: "https://$NODE_IP:6443", certificate-authority: "$P/ca.crt"}}]
users: [{name: admin, user: {client-certificate: "$P/admin.crt", client-key: "$P/admin.key"}}]
contexts: [{name: nrk, context: {cluster: nrk, user: admin}}]
current-context: nrk
K
kc() { inns kubectl --kubeconfig "$R/admin.kubeconfig" "$@"; }

step "containerd (on our NRI), NRI socket /var/run/nri/nri.sock as the manifest mounts it"
write_config
sed -i "s#socket_path = .*#socket_path = '/var/run/nri/nri.sock'#; s#realctrd0#nrkbr0#; s#10.77.0.0/16#10.214.0.0/16#" "$R/containerd.toml" "$R/cni/10-realctrd.conflist"
mkdir -p /var/run/nri
# run_containerd: containerd from $R/bin in the netns; the kubelet, if
# running, reconnects by itself.
run_containerd() {
	rm -f "$R/containerd.sock" /var/run/nri/nri.sock
	nsenter --net="/run/netns/$NS" -- containerd --config "$R/containerd.toml" >>"$R/containerd.log" 2>&1 &
	CTRD_PID=$!
	wait_for 30 test -S "$R/containerd.sock" -a -S /var/run/nri/nri.sock || { tail -30 "$R/containerd.log"; exit 1; }
}
run_containerd
for t in pause busybox ann-v1 ann-v2 ul-v1 ul-v2; do
	ctr -a "$R/containerd.sock" -n k8s.io images import --platform linux/amd64 "$IMG/$t.tar" >/dev/null
done

step "etcd, kube-apiserver"
bg etcd etcd --data-dir "$R/etcd" --listen-client-urls http://127.0.0.1:2379 --advertise-client-urls http://127.0.0.1:2379 \
	--listen-peer-urls http://127.0.0.1:2380 --initial-advertise-peer-urls http://127.0.0.1:2380 \
	--initial-cluster default=http://127.0.0.1:2380 --name default
bg apiserver kube-apiserver --etcd-servers http://127.0.0.1:2379 --bind-address "$NODE_IP" --advertise-address "$NODE_IP" \
	--secure-port 6443 --tls-cert-file "$P/apiserver.crt" --tls-private-key-file "$P/apiserver.key" \
	--client-ca-file "$P/ca.crt" --service-account-key-file "$P/sa.pub" --service-account-signing-key-file "$P/sa.key" \
	--service-account-issuer https://kubernetes.default.svc --service-cluster-ip-range 10.0.0.0/24 \
	--authorization-mode Node,RBAC --disable-admission-plugins ServiceAccount --cert-dir "$R/pki/apiserver-dir"
wait_for 120 bash -c "nsenter --net=/run/netns/$NS -- kubectl --kubeconfig $R/admin.kubeconfig get --raw /readyz >/dev/null 2>&1" ||
	{ tail -20 "$R/logs/apiserver.log"; exit 1; }

step "kube-controller-manager (DaemonSet controller), kube-scheduler, kubelet"
bg kcm kube-controller-manager --kubeconfig "$R/admin.kubeconfig" --leader-elect=false \
	--controllers daemonset,garbagecollector --secure-port 0
bg scheduler kube-scheduler --kubeconfig "$R/admin.kubeconfig" --leader-elect=false
cat >"$R/kubelet.yaml" <<K
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
failCgroupV1: false
cgroupDriver: cgroupfs
cgroupRoot: $CGROUP_PARENT
containerRuntimeEndpoint: unix://$R/containerd.sock
authentication: {anonymous: {enabled: true}, webhook: {enabled: false}, x509: {clientCAFile: "$P/ca.crt"}}
authorization: {mode: AlwaysAllow}
failSwapOn: false
resolvConf: ""
address: $NODE_IP
port: 10250
readOnlyPort: 0
healthzPort: 0
serializeImagePulls: false
evictionHard: {memory.available: "1Mi", nodefs.available: "1%", imagefs.available: "1%"}
imageGCHighThresholdPercent: 100
podLogsDir: $PODLOGS
K
# The kubelet wants its cgroup root to exist in every hierarchy (cgroup v1).
for d in /sys/fs/cgroup/*/; do
	[ -d "$d" ] && [ ! -L "${d%/}" ] || continue
	mkdir -p "$d${CGROUP_PARENT#/}"
	[ -f "$d/cpuset.cpus" ] && cat "$d/cpuset.cpus" >"$d${CGROUP_PARENT#/}/cpuset.cpus" && cat "$d/cpuset.mems" >"$d${CGROUP_PARENT#/}/cpuset.mems" || true
done
nsenter --net="/run/netns/$NS" -- kubelet --kubeconfig "$R/admin.kubeconfig" --config "$R/kubelet.yaml" \
	--root-dir "$R/kubelet" --node-ip "$NODE_IP" --hostname-override "$NODE" >>"$R/logs/kubelet.log" 2>&1 &
KUBELET_PID=$!
wait_for 120 bash -c "nsenter --net=/run/netns/$NS -- kubectl --kubeconfig $R/admin.kubeconfig get node $NODE -o jsonpath='{.status.conditions[?(@.type==\"Ready\")].status}' 2>/dev/null | grep -q True" ||
	{ tail -30 "$R/logs/kubelet.log"; fail "node Ready"; summary; exit 1; }
pass "node $NODE Ready (IP $NODE_IP)"
# The node lifecycle controller (not run: nothing here is ever unreachable)
# would lift the kubelet's not-ready taint; the DaemonSet tolerates it, the
# load pods do not.
kc taint nodes "$NODE" node.kubernetes.io/not-ready:NoSchedule- >/dev/null 2>&1 || true

step "apply deploy/daemonset.yaml, image replaced by $ANN_IMAGE:v1"
sed "s#image: registry.example.com/nri-annotator:v0.1.0#image: $ANN_IMAGE:v1#" "$REPO/deploy/daemonset.yaml" >"$R/manifests/ds.yaml"
kc apply -f "$R/manifests/ds.yaml"
expect "v1: DaemonSet rolled out (rollout status)" kc -n kube-system rollout status ds/nri-annotator --timeout=120s
expect "v1: one pod Ready" bash -c "[ \"\$(nsenter --net=/run/netns/$NS -- kubectl --kubeconfig $R/admin.kubeconfig -n kube-system get pods -o jsonpath='{range .items[*]}{.status.containerStatuses[0].ready}{\"\\n\"}{end}' | grep -c true)\" = 1 ]"

# The load: plain pods on the node, one container each.
cat >"$R/manifests/load.yaml" <<Y
apiVersion: v1
kind: Pod
metadata: {name: "@NAME@", namespace: default, labels: {app: load}, annotations: {"ulimits.nri.containerd.io/container.bb": "- {type: nofile, hard: 4321, soft: 1234}"}}
spec:
  terminationGracePeriodSeconds: 0
  automountServiceAccountToken: false
  containers:
  - {name: bb, image: "$BUSYBOX_IMAGE", imagePullPolicy: Never, command: [sleep, "3600"]}
Y

# The stopper's pods (scenario.sh's stop_worker): PID 1 has no SIGTERM
# handler, so each stop takes the whole grace period, with BlockPluginSync
# held by containerd throughout.
cat >"$R/manifests/stopper.yaml" <<Y
apiVersion: v1
kind: Pod
metadata: {name: "@NAME@", namespace: default, labels: {app: load}, annotations: {"ulimits.nri.containerd.io/container.bb": "- {type: nofile, hard: 4321, soft: 1234}"}}
spec:
  terminationGracePeriodSeconds: ${STOP_GRACE:-10}
  automountServiceAccountToken: false
  containers:
  - {name: bb, image: "$BUSYBOX_IMAGE", imagePullPolicy: Never, command: [sleep, "3600"]}
Y
(cd "$REPO" && go build -o "$R/bin/takeovers" ./test/realkube/takeovers && go build -o "$R/bin/active" ./test/realkube/active)

# active_pid: the host pid of the process of the plugin pod that is Ready.
active_pid() {
	local name id
	name=$(plugin_pods | awk '$3 == "true" {print $1; exit}')
	id=$(cri ps -q --label "io.kubernetes.pod.name=$name" --label io.kubernetes.container.name=annotator | head -1)
	cri inspect -o go-template --template '{{.info.pid}}' "$id"
}
# new_pod GEN: the name of the plugin pod of template generation GEN, once it exists.
new_pod() { kcs get pods -l "pod-template-generation=$1" -o name 2>/dev/null | head -1 | grep .; }
gen_of() { kcs get ds nri-annotator -o jsonpath='{.metadata.generation}'; }

if want s1; then
step "scenario 1: roll v1 -> v2 under load"
record_start s1
rollout_to v2
expect "s1: kubectl rollout status completed" rollout_wait
S1_ROLLOUT=$ROLLOUT_S
record_stop
check_rollout s1 nokill
expect "s1: the surge took ${S1_ROLLOUT}s, within minReadySeconds (10s) + ${SURGE_BOUND:-60}s" \
	awk "BEGIN {exit !($S1_ROLLOUT <= 10 + ${SURGE_BOUND:-60})}"

fi

if want s2; then
step "scenario 2: kubectl rollout undo under load"
record_start s2
mark "rollout undo"
kcs rollout undo ds/nri-annotator >/dev/null 2>&1 # (its warning: the manifest was applied)
expect "s2: kubectl rollout status completed after undo" rollout_wait
record_stop
check_rollout s2 nokill

fi

if want s3; then
step "scenario 3: kill -9 the active instance mid-rollout; delete the new pod while it is a candidate"
record_start s3
# The pid is read before the rollout, when the one pod's process is the
# active instance, and killed as soon as the new pod exists: read after
# it, it took long enough on a busy node for the new instance to take over
# first (issue 39: superseded 0.3 s before the kill). check_premises tells
# from containerd's log whether it was the active instance when lost.
pid=$(active_pid)
g=$(($(gen_of) + 1))
rollout_to v2
wait_for 60 new_pod "$g" >/dev/null || true
mark "kill -9 active pid $pid"
expect "s3: killed the active instance's process (pid $pid) while the new pod was starting" \
	bash -c "[ '$pid' -gt 1 ] && kill -KILL '$pid'"
expect "s3: kubectl rollout status completed after the kill" rollout_wait
g=$(($(gen_of) + 1))
rollout_to v1
wait_for 60 new_pod "$g" >/dev/null || true
p=$(new_pod "$g" || true)
mark "delete candidate $p"
expect "s3: deleted the new pod ($p) before it was Ready" kcs delete "$p" --wait=false
expect "s3: kubectl rollout status completed after the deletion" rollout_wait
record_stop
check_premises s3
check_rollout s3 kill

fi

if want s4; then
step "scenario 4: roll out the kill switch NRI_PLUGIN_HANDOVER=off, then turn handover back on"
record_start s4
mark "set env NRI_PLUGIN_HANDOVER=off"
kcs set env ds/nri-annotator NRI_PLUGIN_HANDOVER=off >/dev/null
expect "s4: kubectl rollout status completed with the kill switch set" rollout_wait
mark "set env NRI_PLUGIN_HANDOVER-"
kcs set env ds/nri-annotator NRI_PLUGIN_HANDOVER- >/dev/null
expect "s4: kubectl rollout status completed with handover back on" rollout_wait
record_stop
check_kill_switch s4

fi

# ---- s5: an unmodified upstream plugin (ulimit-adjuster), opted in ----------
# The DaemonSet's pod template carries nri.containerd.io/handover: workload;
# the plugin is upstream's sample on upstream's stub, unchanged. Forward
# v1 -> v2 with the newer instance's process killed (-9) once it took over
# (the older one is synchronized again, the kubelet restarts the newer, which
# takes over again), then kubectl rollout undo. Every load container must
# carry the plugin's RLIMIT_NOFILE exactly once (crictl inspect), none fail.
if want s5; then
step "scenario 5: upstream's ulimit-adjuster, unmodified, annotated: roll v1 -> v2 with kill -9 of the newer instance, then undo"
SC=setup
mkdir -p "$R/ev"
ulimit_manifest yes >"$R/manifests/ul.yaml"
kc apply -f "$R/manifests/ul.yaml" >/dev/null
expect "s5: $UL_DS v1 rolled out (its binary links upstream NRI v0.12.5)" ul_rollout_wait 120
record_start s5
t5=$EPOCHREALTIME
g=$(($(ul_gen) + 1))
ul_rollout_to v2
wait_for 60 ul_pod "$g" >/dev/null || true
p=$(ul_pod "$g" || true)
# the newer instance took over (containerd's log) before it is killed
wait_for 30 ul_took_over || true
pid=$(ul_pid "$p" || true)
mark "kill -9 newer $p pid $pid"
tk=$EPOCHREALTIME
expect "s5: killed the newer instance's process ($p, pid ${pid:-none}) after it took over" bash -c "[ '${pid:-0}' -gt 1 ] && kill -KILL '$pid'"
if ul_rollout_wait; then pass "s5: kubectl rollout status completed after the kill"; else
	fail "s5: kubectl rollout status completed after the kill"
	grep "daemon" "$R/logs/kcm.log" | tail -20
	kcs get pods -l "app.kubernetes.io/name=$UL_DS" -o wide || true
fi
echo "  s5: $p after the kill, as the API showed it: $(ul_seen "$p" "$tk")"
mark "rollout undo $UL_DS"
kcs rollout undo "ds/$UL_DS" >/dev/null 2>&1
expect "s5: kubectl rollout status completed after undo" ul_rollout_wait
record_stop
read -r n f m < <(load_counts s5)
e=$(create_errors s5)
expect "s5: $n pods created on the node during both rollouts, $f failed, $e CreateContainer calls failed (slowest Ready after ${m}s)" [ "$f" = 0 -a "$e" = 0 -a "$n" -ge 3 ]
read -r c once none twice unrec < <(rlimit_counts s5)
result_rlimits s5 "$n" "$f" "$e" "$c" "$once" "$none" "$twice"
# A CreateContainer in flight at the killed instance when the kill lands
# goes on without it, as upstream's does when a plugin dies mid-call
# (containerd: "failed to handle CreateContainer, proceeding without it"):
# that container goes unadjusted, at most one per such line.
lost=$(log_count s5 "plugin 60-$UL_DS failed to handle CreateContainer, proceeding without it")
expect "s5: $c load containers, each with the plugin's RLIMIT_NOFILE exactly once in its runtime spec, or none if its creation was in flight at the killed instance ($once; $none without, $lost calls in flight at the kill; $twice twice, $unrec unrecorded)" \
	[ "$((once + none))" = "$c" -a "$none" -le "$lost" -a "$c" -ge 3 ]
takes=$(log_count s5 "60-$UL_DS.* takes over from .*of its workload")
again=$(log_count s5 "60-$UL_DS.* is synchronized again")
idle=$(log_count s5 "60-$UL_DS.*(is not newer than|stays connected)")
expect "s5: containerd's log: the newer pod took over $takes times (forward, after its restart, undo), the older one synchronized again after the kill $again times ($idle idle notices)" [ "$takes" -ge 2 -a "$again" -ge 1 ]
expect "s5: one $UL_DS pod left" wait_for 60 bash -c "[ \$(nsenter --net=/run/netns/$NS -- kubectl --kubeconfig $R/admin.kubeconfig -n kube-system get pods -l app.kubernetes.io/name=$UL_DS -o name | wc -l) = 1 ]"
echo "  s5: ran $(awk "BEGIN {printf \"%.0f\", $EPOCHREALTIME - $t5}")s"
SC=setup
kcs delete ds "$UL_DS" --timeout=60s >/dev/null || true
fi

# ---- cu: the same, without the annotation: upstream's behaviour ---------------
if want cu; then
step "control cu: the same ulimit-adjuster rollout without the annotation (both instances get every event)"
SC=setup
wait_for 60 bash -c "[ -z \"\$(nsenter --net=/run/netns/$NS -- kubectl --kubeconfig $R/admin.kubeconfig -n kube-system get pods -l app.kubernetes.io/name=$UL_DS -o name)\" ]" || true
ulimit_manifest no >"$R/manifests/ul-plain.yaml"
kc apply -f "$R/manifests/ul-plain.yaml" >/dev/null
expect "cu: $UL_DS v1 rolled out without the annotation" ul_rollout_wait 120
record_start cu
t5=$EPOCHREALTIME
ul_rollout_to v2
ul_rollout_wait || true
mark "rollout undo $UL_DS"
kcs rollout undo "ds/$UL_DS" >/dev/null 2>&1
ul_rollout_wait || true
record_stop
read -r n f m < <(load_counts cu)
e=$(create_errors cu)
read -r c once none twice unrec < <(rlimit_counts cu 2>/dev/null)
result_rlimits cu "$n" "$f" "$e" "$c" "$once" "$none" "$twice"
expect "cu: without the annotation both instances get every event and creations fail while both are connected ($e CreateContainer calls failed; s5: 0)" [ "$e" -gt 0 ]
echo "  cu: $n pods, $f not Ready within 60 s, slowest Ready after ${m}s (the kubelet retries); $c load containers, $once adjusted once, $none not, $twice twice, $unrec unrecorded; ran $(awk "BEGIN {printf \"%.0f\", $EPOCHREALTIME - $t5}")s"
echo "  cu: what failed: $(grep -ohE 'plugins [^,]*both tried to set [^"]*' "$R/ev/cu.create-errors" | head -1 | tr -d '\\')"
SC=setup
kcs delete ds "$UL_DS" --timeout=60s >/dev/null || true
fi

if want ref; then
# ---- the same surge for a DaemonSet that is no NRI plugin ---------------------
# Kubernetes' own share of the dip after the deletion: a plain busybox
# DaemonSet, same strategy and minReadySeconds, that exits on SIGTERM as
# the plugin does, rolled once.
step "reference: a plain DaemonSet (no NRI) rolled with the same strategy"
cat >"$R/manifests/plain.yaml" <<Y
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: plain, namespace: default}
spec:
  selector: {matchLabels: {app: plain}}
  minReadySeconds: 10
  updateStrategy: {type: RollingUpdate, rollingUpdate: {maxSurge: 1, maxUnavailable: 0}}
  template:
    metadata: {labels: {app: plain}}
    spec:
      terminationGracePeriodSeconds: 15
      automountServiceAccountToken: false
      containers:
      - {name: bb, image: "$BUSYBOX_IMAGE", imagePullPolicy: Never, env: [{name: REV, value: "1"}],
         command: [sh, -c, 'trap "exit 0" TERM; while :; do sleep 1; done']}
Y
kc apply -f "$R/manifests/plain.yaml" >/dev/null
kc rollout status ds/plain --timeout=120s >/dev/null || true
nsenter --net="/run/netns/$NS" -- kubectl --kubeconfig "$R/admin.kubeconfig" get ds plain -w \
	-o go-template='{{or .status.numberAvailable 0}} {{or .status.numberUnavailable 0}}{{"\n"}}' > >(stamp >"$R/ev/plain.ds") 2>&1 &
PLAIN_W=$!
kc set env ds/plain REV=2 >/dev/null
kc rollout status ds/plain --timeout=120s >/dev/null || true
wait_for 30 bash -c "[ \$(nsenter --net=/run/netns/$NS -- kubectl --kubeconfig $R/admin.kubeconfig get pods -l app=plain -o name | wc -l) = 1 ]" || true
stop_pids "$PLAIN_W"
read -r lo s0 < <(available_between plain 0 9e99)
echo "  reference: plain DaemonSet, numberAvailable lowest $lo, 0 for ${s0}s during its surge"
kc delete ds plain --timeout=60s >/dev/null || true

fi

if want c; then
# ---- control: stock containerd v2.4.2 (upstream NRI), what users see today ----
step "control: the same rollout on stock containerd v2.4.2 (upstream NRI)"
kcs delete ds nri-annotator --timeout=60s >/dev/null
wait_for 60 bash -c "[ -z \"\$(nsenter --net=/run/netns/$NS -- kubectl --kubeconfig $R/admin.kubeconfig -n kube-system get pods -o name)\" ]" || true
(R=$R/stock; mkdir -p "$R/bin"; install_stock_containerd)
stop_containerd
for b in containerd containerd-shim-runc-v2 ctr; do ln -sf "$R/stock/bin/$b" "$R/bin/$b"; done
run_containerd
expect "control: containerd $(containerd --version | awk '{print $3}') as released ($(go version -m "$R/stock/bin/containerd" | awk '$2 == "github.com/containerd/nri" {print "nri " $3}'))" \
	bash -c "go version -m '$R/stock/bin/containerd' | grep -q 'dep.*github.com/containerd/nri'"
SC=setup # (marks of the set-up outside any scenario)
kc apply -f "$R/manifests/ds.yaml" >/dev/null
expect "control: v1 rolled out on stock containerd" rollout_wait
record_start c
rollout_to v2
rollout_wait || true
record_stop
read -r n f m < <(load_counts c)
e=$(create_errors c)
read -r c one wrong dbl none win < <(stamp_counts c 2>/dev/null)
result_counts c "$n" "$f" "$e" "$c" "$((one + wrong))" "$win" # upstream names no instance: a stamp counts once
expect "control: upstream NRI fails container creations during the surge ($e CreateContainer calls failed; ours: 0 in s1-s4)" [ "$e" -gt 0 ]
echo "  control: $n pods, $f not Ready within 60 s, slowest Ready after ${m}s (the kubelet retries); $c containers created, $((one + wrong)) stamped once, $dbl twice, $((none + win)) none; rollout ${ROLLOUT_S}s"
echo "  control: what failed: $(grep -ohE 'plugins [^,]*both tried to set [^"]*' "$R/ev/c.create-errors" | head -1 | tr -d '\\')"
fi

# The picture of the run: docs/kubernetes-rollout.svg is one, copied from here.
want s1 && want s2 && want s3 && want c && (cd "$REPO" && go run ./test/realkube/timeline -ev "$R/ev" -containerd-log "$R/containerd.log" -scenarios s1,s2,s3,c \
	-titles 's1=Rollout v1 → v2 under load (containerd on this module),s2=kubectl rollout undo,s3=kill -9 of the active instance; then the new pod deleted while a candidate,c=Control: the same rollout on stock containerd v2.4.2 (upstream NRI)' \
	-o "$R/kubernetes-rollout.svg") && echo "  timeline: $R/kubernetes-rollout.svg"
check_ledger containerd "$R/containerd.log" 1
summary
rc=$?
results_close "$([ $rc = 0 ] && echo passed || echo failed)"
exit $rc
