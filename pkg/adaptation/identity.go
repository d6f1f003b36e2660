package adaptation

// Peer identity (issue 18): which container, and so which pod, a plugin's
// process runs in, decided from the runtime's own records (the peer's
// cgroup, read when it connected, matched against the containers the
// runtime reported) instead of from what the plugin declares.
//
// Not yet wired into admission (see docs/proposal.md, issue 18): this file
// holds the parsing, the matching and the policy, unit-tested on their own.

import (
	"errors"
	"path"
	"strconv"
	"strings"

	"github.com/nri-handover/nri/api"
)

// PeerPlace is where a peer runs, as far as the runtime can tell.
type PeerPlace int

const (
	// PeerUnknown: no cgroup was read, or it names a pod container the
	// runtime has not been told about yet (it connected before its own
	// CreateContainer reached the adaptation).
	PeerUnknown PeerPlace = iota
	// PeerOutsidePod: a process outside any pod (systemd, by hand).
	PeerOutsidePod
	// PeerInPod: a container the runtime knows, in a known pod.
	PeerInPod
)

// PeerPod is the pod a peer runs in.
type PeerPod struct {
	Namespace, Name, UID, ContainerID string
	TemplateGeneration                int64 // pod-template-generation label, 0 if none
	Labels                            map[string]string
}

// revisionLabels differ between the revisions of one workload and are
// ignored when deciding whether two pods belong to the same workload.
// pod-template-hash is the Deployment's equivalent of the DaemonSet's two.
var revisionLabels = []string{"pod-template-generation", "controller-revision-hash", "pod-template-hash"}

// parseProcCgroup returns the cgroup path of a /proc/<pid>/cgroup file:
// the unified ("0::") line on cgroup v2 or hybrid, else the first v1
// controller line with a path other than the root.
func parseProcCgroup(data string) (string, error) {
	var v1 string
	for _, line := range strings.Split(strings.TrimSpace(data), "\n") {
		parts := strings.SplitN(line, ":", 3)
		if len(parts) != 3 {
			return "", errors.New("malformed cgroup line " + strconv.Quote(line))
		}
		if parts[0] == "0" && parts[1] == "" && parts[2] != "/" {
			return parts[2], nil
		}
		if v1 == "" && parts[1] != "" && parts[2] != "/" {
			v1 = parts[2]
		}
	}
	if v1 == "" {
		return "/", nil
	}
	return v1, nil
}

// cgroupLeaf is the last path component a container's cgroup has, from
// Linux.CgroupsPath in either driver's form: cgroupfs
// "/kubepods/besteffort/pod<uid>/<id>" or systemd
// "kubepods-besteffort-pod<uid>.slice:cri-containerd:<id>".
func cgroupLeaf(cgroupsPath string) string {
	if parts := strings.Split(cgroupsPath, ":"); len(parts) == 3 && !strings.Contains(cgroupsPath, "/") {
		return parts[1] + "-" + parts[2] + ".scope"
	}
	return path.Base(cgroupsPath)
}

// looksLikePod tells whether a cgroup path is under a kubelet pod cgroup.
func looksLikePod(cg string) bool {
	return strings.Contains(cg, "kubepods")
}

// resolvePeer places a peer by its cgroup among the known pods and
// containers. Any component of the peer's cgroup equal to a container's
// leaf matches (a plugin may run in a sub-cgroup of its container).
func resolvePeer(cg string, pods []*api.PodSandbox, ctrs []*api.Container) (PeerPlace, *PeerPod) {
	if cg == "" {
		return PeerUnknown, nil
	}
	comps := strings.Split(cg, "/")
	for _, c := range ctrs {
		leaf := ""
		if c.GetLinux() != nil && c.GetLinux().GetCgroupsPath() != "" {
			leaf = cgroupLeaf(c.GetLinux().GetCgroupsPath())
		}
		for _, comp := range comps {
			if comp == "" || (comp != leaf && comp != c.GetId() && !strings.HasSuffix(comp, "-"+c.GetId()+".scope")) {
				continue
			}
			for _, p := range pods {
				if p.GetId() == c.GetPodSandboxId() {
					gen, _ := strconv.ParseInt(p.GetLabels()["pod-template-generation"], 10, 64)
					return PeerInPod, &PeerPod{Namespace: p.GetNamespace(), Name: p.GetName(), UID: p.GetUid(),
						ContainerID: c.GetId(), TemplateGeneration: gen, Labels: p.GetLabels()}
				}
			}
			return PeerUnknown, nil
		}
	}
	if looksLikePod(cg) {
		return PeerUnknown, nil
	}
	return PeerOutsidePod, nil
}

// IdentityRefusal is SupersedeSameWorkload's typed refusal, naming both sides.
type IdentityRefusal struct {
	Reason                 string // unknown-peer, pod-vs-host, other-namespace, other-workload, other-uid
	Predecessor, Successor PeerIdentity
}

// PeerIdentity is a peer's uid and place, for the workload policy.
type PeerIdentity struct {
	UID   int
	Place PeerPlace
	Pod   *PeerPod
}

// PodString names the pod for logs: "pod ns/name (template generation N)",
// "outside any pod" or "unknown pod".
func (id PeerIdentity) PodString() string {
	switch id.Place {
	case PeerInPod:
		return "pod " + id.Pod.Namespace + "/" + id.Pod.Name + " (template generation " + strconv.FormatInt(id.Pod.TemplateGeneration, 10) + ")"
	case PeerOutsidePod:
		return "outside any pod"
	}
	return "unknown pod"
}

func (e *IdentityRefusal) Error() string {
	return "identity policy refuses (" + e.Reason + "): successor " + e.Successor.PodString() +
		" uid " + strconv.Itoa(e.Successor.UID) + " may not supersede predecessor " +
		e.Predecessor.PodString() + " uid " + strconv.Itoa(e.Predecessor.UID)
}

// SupersedeSameWorkload: a pod instance may supersede only one in a pod of
// the same namespace and workload labels (revision labels removed); a peer
// outside any pod only one outside any pod with the same uid; an unknown
// peer nobody and nobody it.
func SupersedeSameWorkload(pred, succ PeerIdentity) error {
	refuse := func(r string) error { return &IdentityRefusal{Reason: r, Predecessor: pred, Successor: succ} }
	switch {
	case pred.Place == PeerUnknown || succ.Place == PeerUnknown:
		return refuse("unknown-peer")
	case pred.Place != succ.Place:
		return refuse("pod-vs-host")
	case pred.Place == PeerOutsidePod:
		if pred.UID < 0 || pred.UID != succ.UID {
			return refuse("other-uid")
		}
		return nil
	case pred.Pod.Namespace != succ.Pod.Namespace:
		return refuse("other-namespace")
	case !sameWorkload(pred.Pod.Labels, succ.Pod.Labels):
		return refuse("other-workload")
	}
	return nil
}

func sameWorkload(a, b map[string]string) bool {
	strip := func(m map[string]string) map[string]string {
		out := map[string]string{}
		for k, v := range m {
			out[k] = v
		}
		for _, k := range revisionLabels {
			delete(out, k)
		}
		return out
	}
	sa, sb := strip(a), strip(b)
	if len(sa) != len(sb) {
		return false
	}
	for k, v := range sa {
		if w, ok := sb[k]; !ok || w != v {
			return false
		}
	}
	return true
}
