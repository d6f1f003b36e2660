package adaptation

import (
	"strings"
	"testing"

	"github.com/nri-handover/nri/api"
)

// TestResolvePeerAnchored places crafted /proc/<pid>/cgroup files, as the
// runtime reads them from the host, against the pod and container the
// runtime reports in each driver's form. Only a peer in the whole cgroup path
// the runtime created for a container, or below it, is in that container's
// pod: a path that merely contains the container's cgroup name, as a
// component, a suffix or a prefix, is not.
func TestResolvePeerAnchored(t *testing.T) {
	uid := strings.ReplaceAll(podUID, "-", "_") // the kubelet escapes '-' in slice names
	fsPod := "/kubepods/besteffort/pod" + podUID
	fsCtr := fsPod + "/" + ctrID
	sdPod := "/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod" + uid + ".slice"
	sdCtr := sdPod + "/cri-containerd-" + ctrID + ".scope"
	layouts := []struct {
		name, cgroupsPath, cgroupParent, ctr, pod string
	}{
		{"cgroupfs", fsCtr, fsPod, fsCtr, fsPod},
		{"systemd", "kubepods-besteffort-pod" + uid + ".slice:cri-containerd:" + ctrID, sdPod, sdCtr, sdPod},
		// test/realcontainerd: a cgroup_parent of its own, no kubelet.
		{"cgroupfs, runtime's own parent", "/nriident-x/" + ctrID, "/nriident-x", "/nriident-x/" + ctrID, "/nriident-x"},
	}
	v1 := func(cg string) string { return "12:pids:" + cg + "\n11:memory:" + cg + "\n1:name=systemd:" + cg + "\n" }
	v2 := func(cg string) string { return "0::" + cg + "\n" }
	hybrid := func(cg string) string { return "12:pids:" + cg + "\n1:name=systemd:" + cg + "\n0::/\n" }
	delegated := "/user.slice/user-1000.slice/user@1000.service"

	for _, l := range layouts {
		for _, tc := range []struct {
			name string
			proc string
			want PeerPlace
		}{
			{"container, v1", v1(l.ctr), PeerInPod},
			{"container, v2", v2(l.ctr), PeerInPod},
			{"container, hybrid", hybrid(l.ctr), PeerInPod},
			{"sub-cgroup of the container, v1", v1(l.ctr + "/plugin"), PeerInPod},
			{"sub-cgroup of the container, v2", v2(l.ctr + "/plugin/worker"), PeerInPod},
			{"pod-level cgroup", v2(l.pod), PeerUnknown},
			{"another container of the pod", v2(l.pod + "/fedcba"), PeerUnknown},
			{"container path with a suffix", v2(l.ctr + "-evil"), PeerUnknown},
			{"user's delegated subtree named after the scope", v2(delegated + "/cri-containerd-" + ctrID + ".scope"), PeerOutsidePod},
			{"user's delegated subtree named after the scope, v1", v1(delegated + "/cri-containerd-" + ctrID + ".scope"), PeerOutsidePod},
			{"user's delegated subtree copying the whole path", v2(delegated + l.ctr), PeerOutsidePod},
			{"user's delegated subtree copying the pod", v2(delegated + l.pod + "/x"), PeerOutsidePod},
			{"container id as a middle component", v2("/system.slice/" + ctrID + "/x"), PeerOutsidePod},
			{"scope name as a middle component", v2("/system.slice/cri-containerd-" + ctrID + ".scope/x"), PeerOutsidePod},
			{"suffix trick", v2("/system.slice/evil-cri-containerd-" + ctrID + ".scope"), PeerOutsidePod},
			{"leaf id alone", v2("/" + ctrID), PeerOutsidePod},
			// Outside the reading runtime's cgroup namespace: never one of
			// its containers, however the rest of the path reads.
			{"outside the runtime's cgroup namespace", v2("/.." + l.ctr), PeerOutsidePod},
			{"host service", v2("/system.slice/nri-plugin.service"), PeerOutsidePod},
		} {
			t.Run(l.name+"/"+tc.name, func(t *testing.T) {
				cg, err := parseProcCgroup(tc.proc)
				if err != nil {
					t.Fatal(err)
				}
				pods, ctrs := identFixture(l.cgroupsPath)
				pods[0].Linux = &api.LinuxPodSandbox{CgroupParent: l.cgroupParent}
				place, pod := resolvePeer(cg, pods, ctrs)
				if place != tc.want {
					t.Fatalf("cgroup %q: placed %v %+v, want %v", cg, place, pod, tc.want)
				}
				if place == PeerInPod && (pod.ContainerID != ctrID || pod.Name != "nri-plugin-x7") {
					t.Fatalf("cgroup %q: placed in %+v", cg, pod)
				}
			})
		}
	}
}

// TestResolvePeerPodWithoutCgroupParent: a runtime that does not report the
// pod's cgroup parent still places an unlisted container of a known pod as
// unknown, from the cgroup of the pod's listed containers, and nothing else.
func TestResolvePeerPodWithoutCgroupParent(t *testing.T) {
	uid := strings.ReplaceAll(podUID, "-", "_")
	for _, tc := range []struct{ name, cgroupsPath, sibling, elsewhere string }{
		{"cgroupfs", "/kubepods/besteffort/pod" + podUID + "/" + ctrID,
			"/kubepods/besteffort/pod" + podUID + "/fedcba", "/user.slice/kubepods/besteffort/pod" + podUID + "/fedcba"},
		{"systemd", "kubepods-besteffort-pod" + uid + ".slice:cri-containerd:" + ctrID,
			"/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod" + uid + ".slice/cri-containerd-fedcba.scope",
			"/user.slice/kubepods-besteffort-pod" + uid + ".slice/cri-containerd-fedcba.scope"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pods, ctrs := identFixture(tc.cgroupsPath)
			if p, _ := resolvePeer(tc.sibling, pods, ctrs); p != PeerUnknown {
				t.Fatalf("unlisted container of the pod %q: got %v", tc.sibling, p)
			}
			if p, _ := resolvePeer(tc.elsewhere, pods, ctrs); p != PeerOutsidePod {
				t.Fatalf("%q: got %v", tc.elsewhere, p)
			}
		})
	}
}

// TestSystemdCgroupPath expands what the runtime reports in the systemd
// driver's form as systemd does: each '-' of a slice name nests a level.
func TestSystemdCgroupPath(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"kubepods-besteffort-podab_cd.slice:cri-containerd:123",
			"/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-podab_cd.slice/cri-containerd-123.scope"},
		{"kubepods.slice:cri-containerd:123", "/kubepods.slice/cri-containerd-123.scope"},
		{"system.slice:docker:123", "/system.slice/docker-123.scope"},
		{"-.slice:cri-containerd:123", "/cri-containerd-123.scope"},
		{":cri-containerd:123", "/system.slice/cri-containerd-123.scope"}, // runc's default slice
		{"a-b.slice::123", "/a.slice/a-b.slice/123.scope"},
		{"a-b.slice:p:c-d.slice", "/a.slice/a-b.slice/c-d.slice"}, // a slice asked for by name
		{"/kubepods/burstable/pod1/123", "/kubepods/burstable/pod1/123"},
		{"/kubepods//burstable/pod1/123/", "/kubepods/burstable/pod1/123"},
		{"a--b.slice:p:1", ""},
		{"-a.slice:p:1", ""},
		{"a-.slice:p:1", ""},
		{"a.service:p:1", ""},
		{"relative/path/123", ""}, // relative to a cgroup of the runtime's choosing
		{"/", ""},
		{"", ""},
	} {
		got, ok := containerCgroup(tc.in)
		if !ok {
			got = ""
		}
		if got != tc.want {
			t.Errorf("containerCgroup(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
