package adaptation

import (
	"errors"
	"strings"
	"testing"

	"github.com/nri-handover/nri/api"
)

const (
	ctrID  = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	podUID = "11111111-2222-3333-4444-555555555555"
)

func identFixture(cgroupsPath string) ([]*api.PodSandbox, []*api.Container) {
	pods := []*api.PodSandbox{{Id: "sb1", Name: "nri-plugin-x7", Namespace: "kube-system", Uid: podUID,
		Labels: map[string]string{"app": "nri-plugin", "pod-template-generation": "4", "controller-revision-hash": "abc"}}}
	ctrs := []*api.Container{{Id: ctrID, PodSandboxId: "sb1", Linux: &api.LinuxContainer{CgroupsPath: cgroupsPath}}}
	return pods, ctrs
}

// TestResolvePeerCgroupLayouts covers cgroupfs and systemd drivers on
// cgroup v1 and v2 /proc/<pid>/cgroup layouts.
func TestResolvePeerCgroupLayouts(t *testing.T) {
	const fsPath = "/kubepods/besteffort/pod" + podUID + "/" + ctrID
	// The kubelet escapes the uid's '-' in slice names: each '-' nests a slice.
	uid := strings.ReplaceAll(podUID, "-", "_")
	sdPath := "kubepods-besteffort-pod" + uid + ".slice:cri-containerd:" + ctrID
	sdCg := "/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod" + uid + ".slice/cri-containerd-" + ctrID + ".scope"
	for _, tc := range []struct{ name, cgroupsPath, proc string }{
		{"cgroupfs v1", fsPath, "12:pids:" + fsPath + "\n11:memory:" + fsPath + "\n1:name=systemd:" + fsPath + "\n"},
		{"cgroupfs v2", fsPath, "0::" + fsPath + "\n"},
		{"systemd v1", sdPath, "12:pids:" + sdCg + "\n4:cpu,cpuacct:" + sdCg + "\n0::/\n"},
		{"systemd v2", sdPath, "0::" + sdCg + "\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cg, err := parseProcCgroup(tc.proc)
			if err != nil {
				t.Fatal(err)
			}
			pods, ctrs := identFixture(tc.cgroupsPath)
			place, pod := resolvePeer(cg, pods, ctrs)
			if place != PeerInPod || pod.Name != "nri-plugin-x7" || pod.TemplateGeneration != 4 {
				t.Fatalf("cgroup %q: got %v %+v", cg, place, pod)
			}
		})
	}
}

func TestResolvePeerOutsideAndUnknown(t *testing.T) {
	pods, ctrs := identFixture("/kubepods/besteffort/pod" + podUID + "/" + ctrID)
	if p, _ := resolvePeer("/system.slice/nri-plugin.service", pods, ctrs); p != PeerOutsidePod {
		t.Fatalf("systemd service: got %v", p)
	}
	// A plugin container that connects before its CreateContainer reached
	// the adaptation: a pod cgroup nobody knows yet is unknown, not outside.
	if p, _ := resolvePeer("/kubepods/besteffort/pod"+podUID+"/fedcba", pods, ctrs); p != PeerUnknown {
		t.Fatalf("early container: got %v", p)
	}
	uid := strings.ReplaceAll(podUID, "-", "_")
	sdPods, sdCtrs := identFixture("kubepods-besteffort-pod" + uid + ".slice:cri-containerd:" + ctrID)
	if p, _ := resolvePeer("/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod"+
		uid+".slice/cri-containerd-fedcba.scope", sdPods, sdCtrs); p != PeerUnknown {
		t.Fatalf("early container, systemd driver: got %v", p)
	}
	// A pod cgroup of a pod this runtime does not run (the runtime itself
	// in a pod, another runtime's pods) is no pod of this runtime's.
	if p, _ := resolvePeer("/kubepods/besteffort/pod99999999-2222-3333-4444-555555555555/abc", pods, ctrs); p != PeerOutsidePod {
		t.Fatalf("another runtime's pod: got %v", p)
	}
	pods[0].Linux = &api.LinuxPodSandbox{CgroupParent: "/nri-test-pods"}
	if p, _ := resolvePeer("/nri-test-pods/fedcba", pods, ctrs); p != PeerUnknown {
		t.Fatalf("early container under the pod's cgroup parent: got %v", p)
	}
	if p, _ := resolvePeer("", pods, ctrs); p != PeerUnknown {
		t.Fatalf("no cgroup: got %v", p)
	}
	if _, err := parseProcCgroup("garbage"); err == nil {
		t.Fatal("malformed cgroup file accepted")
	}
}

// TestSupersedeSameWorkloadTable has one case per row of the proposal's
// identity decision table.
func TestSupersedeSameWorkloadTable(t *testing.T) {
	pod := func(ns string, labels map[string]string) PeerIdentity {
		return PeerIdentity{UID: 0, Place: PeerInPod, Pod: &PeerPod{Namespace: ns, Name: labels["io.kubernetes.pod.name"], Labels: labels}}
	}
	// A DaemonSet pod's sandbox labels as the kubelet sends them: the pod's
	// own labels and the kubelet's io.kubernetes.pod.* naming this pod.
	ds := func(gen string) map[string]string {
		return map[string]string{"app": "x", "pod-template-generation": gen, "controller-revision-hash": "h" + gen,
			"io.kubernetes.pod.name": "x-" + gen, "io.kubernetes.pod.namespace": "ns", "io.kubernetes.pod.uid": "uid-" + gen}
	}
	host := func(uid int) PeerIdentity { return PeerIdentity{UID: uid, Place: PeerOutsidePod} }
	unknown := PeerIdentity{UID: 0, Place: PeerUnknown}
	for _, tc := range []struct {
		name       string
		pred, succ PeerIdentity
		reason     string
	}{
		{"same workload, next revision", pod("ns", ds("1")), pod("ns", ds("2")), ""},
		{"other namespace", pod("ns", ds("1")), pod("other", ds("2")), "other-namespace"},
		{"other workload", pod("ns", ds("1")), pod("ns", map[string]string{"app": "x", "io.kubernetes.pod.name": "y-1"}), "other-workload"},
		{"host root over pod", pod("ns", ds("1")), host(0), "pod-vs-host"},
		{"pod over host", host(0), pod("ns", ds("1")), "pod-vs-host"},
		{"host same uid", host(0), host(0), ""},
		{"host other uid", host(0), host(1000), "other-uid"},
		{"unknown successor", pod("ns", ds("1")), unknown, "unknown-peer"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := SupersedeSameWorkload(tc.pred, tc.succ)
			var ref *IdentityRefusal
			switch {
			case tc.reason == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.reason != "" && (!errors.As(err, &ref) || ref.Reason != tc.reason):
				t.Fatalf("want refusal %s, got %v", tc.reason, err)
			}
		})
	}
}
