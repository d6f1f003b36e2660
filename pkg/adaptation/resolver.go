package adaptation

// The workload resolver: what the workload rule knows of Kubernetes, behind
// an interface the runtime may replace. The rule itself (identity.go,
// admission.go, workloadgroup.go) knows only places, pods, workloads and
// generations.

import (
	"slices"
	"sort"
	"strings"

	"github.com/nri-handover/nri/api"
)

// WorkloadResolver tells the adaptation where a plugin's process runs and
// which workload that is. The runtime may provide its own
// (WithWorkloadResolver); KubernetesResolver is the default.
type WorkloadResolver interface {
	// Place finds the pod a peer's process runs in from its cgroup (as
	// the runtime reads it, relative to its own cgroup namespace) and the
	// pods and containers the runtime lists. The pod's TemplateGeneration
	// orders instances of one workload (a rollout's, a rollback's
	// included); its Handover opts plugins written for upstream in.
	Place(cgroup string, pods []*api.PodSandbox, ctrs []*api.Container) (PeerPlace, *PeerPod)
	// Workload names the workload of a pod Place returned: two pods of
	// one namespace run instances of one plugin's workload iff their
	// names are equal.
	Workload(pod *PeerPod) string
}

// KubernetesResolver is the default WorkloadResolver, for runtimes whose
// pods the kubelet creates: the cgroup layouts of the kubelet's cgroupfs and
// systemd drivers (containerCgroup, podCgroup), the DaemonSet controller's
// pod-template-generation label, and a workload named by its pods' labels
// without the per-revision and per-pod ones (podLabels).
type KubernetesResolver struct{}

// Place implements WorkloadResolver (resolvePeer).
func (KubernetesResolver) Place(cgroup string, pods []*api.PodSandbox, ctrs []*api.Container) (PeerPlace, *PeerPod) {
	return resolvePeer(cgroup, pods, ctrs)
}

// Workload implements WorkloadResolver: the pod's labels but podLabels,
// sorted.
func (KubernetesResolver) Workload(pod *PeerPod) string {
	var labels []string
	for k, v := range pod.Labels {
		if !slices.Contains(podLabels, k) {
			labels = append(labels, k+"="+v)
		}
	}
	sort.Strings(labels)
	return strings.Join(labels, "\x00")
}

// podLabels differ between two pods of one workload and are ignored when
// deciding whether two pods belong to the same workload: the revision labels
// (pod-template-hash is the Deployment's equivalent of the DaemonSet's two)
// and the labels the kubelet adds to every pod sandbox it asks the runtime
// for, naming that one pod (kuberuntime's newPodLabels; the namespace label
// is left in, it is the same for both). Found on a real node: without the
// kubelet's labels no rollout was the same workload.
var podLabels = []string{"pod-template-generation", "controller-revision-hash", "pod-template-hash",
	"io.kubernetes.pod.name", "io.kubernetes.pod.uid"}
