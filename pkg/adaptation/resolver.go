package adaptation

// The workload resolver: what the workload rule knows of Kubernetes, behind
// an interface the runtime may replace. The rule itself (identity,
// admission, groupKey) knows only places, pods, workloads and generations.

import (
	"slices"
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
// pod-template-generation label, and a workload named by its controller's
// name, read from its pods' names (controllerName).
type KubernetesResolver struct{}

// Place implements WorkloadResolver (resolvePeer).
func (KubernetesResolver) Place(cgroup string, pods []*api.PodSandbox, ctrs []*api.Container) (PeerPlace, *PeerPod) {
	return resolvePeer(cgroup, pods, ctrs)
}

// Workload implements WorkloadResolver: controllerName.
func (KubernetesResolver) Workload(pod *PeerPod) string {
	if bugWorkloadByLabels { // the pod's labels but the controller's per-revision ones
		var kv []string
		for k, v := range pod.Labels {
			if k != "pod-template-generation" && k != "controller-revision-hash" && k != "pod-template-hash" {
				kv = append(kv, k+"="+v)
			}
		}
		slices.Sort(kv)
		return strings.Join(kv, ",")
	}
	return controllerName(pod.Name, pod.Labels["pod-template-hash"])
}

// controllerName is the name of the controller that created a pod, read
// from the pod's name: the pod's name without its last "-" part and, for a
// ReplicaSet's pod, without "-<pod-template-hash>" before it. The API server
// names a DaemonSet's pods "<DaemonSet>-<5 random characters>" (so a
// ReplicaSet's, "<Deployment>-<pod-template-hash>-<5>"), and a StatefulSet
// names its pods "<StatefulSet>-<ordinal>". So two pods of one namespace
// have one controller name iff one controller made both: over every
// rollout and rollback of it, a chart upgrade included, and never two
// controllers of the namespace, whose names differ ("p" and "p-canary"
// included: the random part has no "-"). Not the pods' labels: charts stamp
// their version into them (helm.sh/chart: <chart>-<version>,
// app.kubernetes.io/version), so every upgrade would be another workload,
// and two DaemonSets may carry the same ones; the runtime does not see a
// pod's owner. A pod named by hand is taken by its name the same way: only
// who may create pods in the namespace can name one, who could as well
// copy any labels. (The API server cuts a controller name longer than 57
// characters before adding the random part: two controllers alike in those
// are one workload.)
func controllerName(pod, templateHash string) string {
	name := pod
	if i := strings.LastIndexByte(name, '-'); i > 0 {
		name = name[:i]
	}
	if templateHash != "" {
		name = strings.TrimSuffix(name, "-"+templateHash)
	}
	return name
}
