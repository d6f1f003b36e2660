package adaptation

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/nri-handover/nri/api"
	"github.com/nri-handover/nri/pkg/adaptation/internal/ledger"
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

// inPod places p in a pod of namespace ns with the app label app and
// pod-template-generation tg (none if tg < 0).
func inPod(p *plugin, ns, name, app string, tg int64) *plugin {
	labels := map[string]string{"app": app, "controller-revision-hash": name}
	if tg >= 0 {
		labels["pod-template-generation"] = strconv.FormatInt(tg, 10)
	}
	p.cgroupErr = nil
	p.ident = &verified{place: PeerInPod, pod: &PeerPod{Namespace: ns, Name: name, UID: "uid-" + name,
		TemplateGeneration: max(tg, 0), HasTemplateGeneration: tg >= 0, Labels: labels}}
	return p
}

// onHost places p outside any pod.
func onHost(p *plugin) *plugin {
	p.cgroupErr = nil
	p.ident = &verified{place: PeerOutsidePod}
	return p
}

// TestResolveIdentities places peers from the runtime's state as the ledger
// records it (never from a SyncFn call beside runtime operations): the
// container whose cgroup the peer is in, and its pod. With nothing recorded
// (a ledger dropped for its size) the ledger is seeded from SyncFn if the
// sync gate is free at once; if it is not, the peer is unknown (refused),
// never guessed.
func TestResolveIdentities(t *testing.T) {
	pods, ctrs := identFixture("/kubepods/besteffort/pod" + podUID + "/" + ctrID)
	syncs := 0
	r, err := New("test-runtime", "v0", func(ctx context.Context, cb SyncCB) error {
		syncs++
		_, err := cb(ctx, pods, ctrs)
		return err
	}, func(context.Context, []*ContainerUpdate) ([]*ContainerUpdate, error) { return nil, nil }, WithLogger(testLogger()))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Stop()
	g := r.reg
	r.ledger.Seed(0, pods, ctrs)

	p := g.optedIn("10", "p", "a", 1, "1")
	p.cgroupErr, p.cgroup = nil, "/kubepods/besteffort/pod"+podUID+"/"+ctrID
	g.resolveIdentities(context.Background(), p)
	if id := p.identity(); id.Place != PeerInPod || id.Pod.Name != "nri-plugin-x7" || id.Pod.TemplateGeneration != 4 {
		t.Fatalf("placed %v %+v", id.Place, id.Pod)
	}
	pods[0].Labels["app"] = "changed" // the plugin keeps a copy
	if p.identity().Pod.Labels["app"] != "nri-plugin" {
		t.Fatal("the identity refers to the runtime's own labels")
	}

	host := g.optedIn("10", "p", "h", 1, "1")
	host.cgroupErr, host.cgroup = nil, "/user.slice/session-1.scope"
	g.resolveIdentities(context.Background(), host)
	if host.identity().Place != PeerOutsidePod {
		t.Fatalf("host process placed %v", host.identity().Place)
	}

	if syncs != 0 {
		t.Fatalf("placing peers called SyncFn %d times", syncs)
	}
	r.ledger = ledger.Ledger{Kept: true} // nothing recorded
	inFlight := r.BlockPluginSync()      // a runtime operation
	q := g.optedIn("10", "p", "b", 2, "2")
	q.cgroupErr, q.cgroup = nil, "/kubepods/besteffort/pod"+podUID+"/"+ctrID
	g.resolveIdentities(context.Background(), q)
	if q.identity().Place != PeerUnknown || syncs != 0 {
		t.Fatalf("placed without a listing: %v (%d SyncFn calls)", q.identity().Place, syncs)
	}
	if _, err := g.place(q); err == nil {
		t.Fatal("an unplaced peer was admitted")
	}
	inFlight.Unblock()
	q2 := g.optedIn("10", "p", "c", 3, "3")
	q2.cgroupErr, q2.cgroup = nil, "/kubepods/besteffort/pod"+podUID+"/"+ctrID
	g.resolveIdentities(context.Background(), q2)
	if q2.identity().Place != PeerInPod || syncs != 1 {
		t.Fatalf("with the gate free: placed %v after %d SyncFn calls; want in its pod after 1", q2.identity().Place, syncs)
	}
}

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
