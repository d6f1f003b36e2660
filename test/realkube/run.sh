#!/usr/bin/env bash
# run.sh: a real single-node Kubernetes cluster (etcd, kube-apiserver,
# kube-controller-manager, kube-scheduler, kubelet; k8s.io/kubernetes v1.37.2,
# build-kube.sh) over containerd v2.4.2 built unchanged on our NRI
# (test/realcontainerd/build-containerd.sh), all inside a network namespace of
# the run's own, with deploy/daemonset.yaml applied, only its image replaced.
# This step: the node turns Ready and the DaemonSet's v1 pod is Ready (= the
# active plugin instance in the runtime).
#
# Usage (root): [R=/tmp/nrk] [NS=nrk] [NODE_IP=10.213.0.2] test/realkube/run.sh
# Bounded by its waits; the EXIT trap stops every process it started, unmounts
# what the kubelet mounted, removes the netns and cgroups and restores the
# sysctls the kubelet rewrites, also on failure.
set -euo pipefail
R=${R:-/tmp/nrk}
NS=${NS:-nrk$(printf %s "$R" | cksum | cut -c1-5)}
NODE_IP=${NODE_IP:-10.213.0.2}
NODE=nrk-node
CGROUP_PARENT=/nrk-pods # lib.sh's clean-up removes it; the kubelet's cgroupRoot
REPO=$(cd "$(dirname "$0")/../.." && pwd)
DIR=$REPO/test/realkube
if [ "$(id -u)" != 0 ]; then
	echo "e2e-kubernetes: SKIPPED: needs root (it runs a kubelet, containerd, runc and CNI); run it as root"
	exit 0
fi
# shellcheck source=../realcontainerd/lib.sh
. "$REPO/test/realcontainerd/lib.sh"
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
rm -f "$R/containerd.sock" /var/run/nri/nri.sock
nsenter --net="/run/netns/$NS" -- containerd --config "$R/containerd.toml" >>"$R/containerd.log" 2>&1 &
CTRD_PID=$!
wait_for 30 test -S "$R/containerd.sock" -a -S /var/run/nri/nri.sock || { tail -30 "$R/containerd.log"; exit 1; }
for t in pause busybox ann-v1 ann-v2; do
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

step "apply deploy/daemonset.yaml, image replaced by $ANN_IMAGE:v1"
sed "s#image: registry.example.com/nri-annotator:v0.1.0#image: $ANN_IMAGE:v1#" "$REPO/deploy/daemonset.yaml" >"$R/manifests/ds.yaml"
kc apply -f "$R/manifests/ds.yaml"
expect "v1: DaemonSet rolled out (rollout status)" kc -n kube-system rollout status ds/nri-annotator --timeout=120s
expect "v1: one pod Ready" bash -c "[ \"\$(nsenter --net=/run/netns/$NS -- kubectl --kubeconfig $R/admin.kubeconfig -n kube-system get pods -o jsonpath='{range .items[*]}{.status.containerStatuses[0].ready}{\"\\n\"}{end}' | grep -c true)\" = 1 ]"
summary
