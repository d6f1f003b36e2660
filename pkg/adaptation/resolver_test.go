package adaptation

import (
	"errors"
	"strconv"
	"testing"

	"github.com/nri-handover/nri/api"
)

// Issue 39 finding 7: a Helm chart upgrade is the same workload.
//
// The pods below are those of containers/nri-plugins' balloons chart
// (github.com/containers/nri-plugins@v0.14.0, deployment/helm/balloons) as
// the runtime sees them, installed as its documentation says
// (helm install nri-resource-policy-balloons nri-plugins/nri-resource-policy-balloons
// --namespace kube-system) and upgraded from chart v0.13.0 to v0.14.0. Helm
// was not run: the labels are read from the templates. daemonset.yaml names
// the DaemonSet nri-resource-policy-balloons and gives its pod template the
// "nri-plugin.labels" of _helpers.tpl:
//
//	helm.sh/chart: {{ .Chart.Name }}-{{ .Chart.Version }}
//	app.kubernetes.io/managed-by: {{ .Release.Service }}
//	app.kubernetes.io/name: nri-resource-policy-balloons
//	app.kubernetes.io/instance: {{ .Release.Name }}
//
// and the pod annotations of .Values.nri.plugin.annotations (where an
// operator sets HandoverAnnotation); the release workflow
// (.github/workflows/package-helm.yaml) packages each chart with
// --version $GITHUB_REF_NAME, so .Chart.Version is the tag. The DaemonSet
// controller adds controller-revision-hash and pod-template-generation and
// names each pod <DaemonSet>-<5 random characters>; the kubelet adds its
// io.kubernetes.pod.* labels to the sandbox. The plugin registers as
// 90-resource-policy (values.yaml: nri.plugin.index 90).

// chartSandbox is the balloons chart's pod at chartVersion, named pod, at
// pod-template-generation tg, with the handover annotation if annotated,
// as the runtime lists it, and its plugin's container.
func chartSandbox(chart, ds, pod string, chartVersion string, tg int64, annotated bool) (*api.PodSandbox, *api.Container) {
	uid := "uid-" + pod
	sb := &api.PodSandbox{Id: "sb-" + pod, Name: pod, Namespace: "kube-system", Uid: uid,
		Labels: map[string]string{
			"helm.sh/chart":                chart + "-" + chartVersion,
			"app.kubernetes.io/managed-by": "Helm",
			"app.kubernetes.io/name":       ds,
			"app.kubernetes.io/instance":   ds,
			"controller-revision-hash":     "6d9c5b7f" + strconv.FormatInt(tg, 10),
			"pod-template-generation":      strconv.FormatInt(tg, 10),
			"io.kubernetes.pod.name":       pod,
			"io.kubernetes.pod.namespace":  "kube-system",
			"io.kubernetes.pod.uid":        uid,
		},
		Annotations: map[string]string{"prometheus.io/scrape": "true"},
		Linux:       &api.LinuxPodSandbox{CgroupParent: "/kubepods/pod" + uid},
	}
	if annotated {
		sb.Annotations[HandoverAnnotation] = HandoverWorkload
	}
	ctr := &api.Container{Id: "ctr-" + pod, PodSandboxId: sb.Id,
		Linux: &api.LinuxContainer{CgroupsPath: "/kubepods/pod" + uid + "/ctr-" + pod}}
	return sb, ctr
}

// balloons places p as the runtime does (KubernetesResolver.Place) in the
// balloons chart's pod at chartVersion.
func balloons(t *testing.T, p *plugin, pod, chartVersion string, tg int64, annotated bool) *plugin {
	t.Helper()
	return chartPlaced(t, p, "nri-resource-policy-balloons", "nri-resource-policy-balloons", pod, chartVersion, tg, annotated)
}

// chartPlaced places p in the pod of the DaemonSet ds of chart.
func chartPlaced(t *testing.T, p *plugin, chart, ds, pod, chartVersion string, tg int64, annotated bool) *plugin {
	t.Helper()
	sb, ctr := chartSandbox(chart, ds, pod, chartVersion, tg, annotated)
	place, peer := KubernetesResolver{}.Place(ctr.GetLinux().GetCgroupsPath(), []*api.PodSandbox{sb}, []*api.Container{ctr})
	if place != PeerInPod {
		t.Fatalf("pod %s not placed: %v", pod, place)
	}
	p.cgroupErr = nil
	p.ident = &verified{place: place, pod: peer}
	return p
}

func TestChartUpgradeIsOneWorkload(t *testing.T) {
	const ds = "nri-resource-policy-balloons"
	v13 := func(g *registry, p *plugin) *plugin { return balloons(t, p, ds+"-x7k2p", "v0.13.0", 1, true) }
	v14 := func(g *registry, p *plugin) *plugin { return balloons(t, p, ds+"-9bq4w", "v0.14.0", 2, true) }

	// WithHandover: the upgraded pod's instance takes over; today it is
	// refused as another workload and a surge rollout stalls.
	t.Run("opted in", func(t *testing.T) {
		g := workloadRegistry()
		a := v13(g, g.optedIn("90", "resource-policy", "a", 0, "v0.13.0"))
		place(t, g, a)
		g.switchNow(t, a)
		b := v14(g, g.optedIn("90", "resource-policy", "b", 0, "v0.14.0"))
		if _, err := g.place(b); err != nil {
			t.Fatalf("the chart upgrade's instance refused: %v", err)
		}
		if b.slot != a.slot {
			t.Fatal("the chart upgrade's instance is in a lineage of its own")
		}
		g.switchNow(t, b)
		wantDispatch(t, g, b)
	})

	// The annotation: one workload group, the upgraded pod's instance
	// alone receives events; today both do.
	t.Run("annotated", func(t *testing.T) {
		g := workloadRegistry()
		a := v13(g, g.legacyOf("90", "resource-policy", 0))
		a.conn = connRegistered
		g.activeMember(t, a)
		b := v14(g, g.legacyOf("90", "resource-policy", 0))
		b.conn = connRegistered
		place(t, g, b)
		if b.slot != a.slot {
			t.Fatal("the chart upgrade's instance is in a workload group of its own")
		}
		if err := g.groupSwitch(b); err != nil {
			t.Fatal(err)
		}
		wantState(t, a, stateIdle)
		wantDispatch(t, g, b)
	})

	// Another DaemonSet of the namespace, of another chart or of this one
	// installed again under another name, is another workload, whatever
	// its labels.
	for _, other := range []struct{ name, chart, ds string }{
		{"another chart", "nri-resource-policy-topology-aware", "nri-resource-policy-topology-aware"},
		{"the chart under another release name", "nri-resource-policy-balloons", "nri-resource-policy-balloons-test"},
	} {
		t.Run(other.name, func(t *testing.T) {
			g := workloadRegistry()
			a := v13(g, g.optedIn("90", "resource-policy", "a", 0, "v0.13.0"))
			place(t, g, a)
			g.switchNow(t, a)
			o := chartPlaced(t, g.optedIn("90", "resource-policy", "o", 0, "v0.14.0"), other.chart, other.ds, other.ds+"-4n8sd", "v0.14.0", 9, true)
			_, err := g.place(o)
			var ir *IdentityRefusal
			if !errors.As(err, &ir) || ir.Reason != "other-workload" {
				t.Fatalf("a pod of DaemonSet %s: %v, want refused as another workload", other.ds, err)
			}

			w := workloadRegistry()
			b := v13(w, w.legacyOf("90", "resource-policy", 0))
			b.conn = connRegistered
			w.activeMember(t, b)
			m := chartPlaced(t, w.legacyOf("90", "resource-policy", 0), other.chart, other.ds, other.ds+"-4n8sd", "v0.14.0", 9, true)
			m.conn = connRegistered
			w.activeMember(t, m)
			if m.slot == b.slot || len(w.plugins) != 2 {
				t.Fatalf("a pod of DaemonSet %s joined the workload group of %s", other.ds, ds)
			}
		})
	}
}

// The rule itself: the pod's namespace and the name of the controller that
// created it, read from the pod's name, whatever its labels.
func TestWorkloadOfPod(t *testing.T) {
	r := KubernetesResolver{}
	for _, tc := range []struct {
		name, a, b string
		labelsA    map[string]string
		labelsB    map[string]string
		same       bool
	}{
		{"DaemonSet rollout", "p-x7k2p", "p-9bq4w", map[string]string{"helm.sh/chart": "p-v1"}, map[string]string{"helm.sh/chart": "p-v2", "app.kubernetes.io/version": "2"}, true},
		{"another DaemonSet", "p-x7k2p", "q-9bq4w", map[string]string{"app": "p"}, map[string]string{"app": "p"}, false},
		{"a DaemonSet named after another one", "p-x7k2p", "p-canary-9bq4w", map[string]string{"app": "p"}, map[string]string{"app": "p"}, false},
		{"Deployment rollout", "p-5d8f7c9b4-x7k2p", "p-79c4d6b8f-9bq4w", map[string]string{"pod-template-hash": "5d8f7c9b4"}, map[string]string{"pod-template-hash": "79c4d6b8f"}, true},
		{"StatefulSet", "p-0", "p-1", nil, nil, true},
		{"pods named by hand", "p", "q", nil, nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := r.Workload(&PeerPod{Namespace: "ns", Name: tc.a, Labels: tc.labelsA})
			b := r.Workload(&PeerPod{Namespace: "ns", Name: tc.b, Labels: tc.labelsB})
			if (a == b) != tc.same {
				t.Fatalf("workloads %q of %s and %q of %s: same %v, want %v", a, tc.a, b, tc.b, a == b, tc.same)
			}
		})
	}
}

// appResolver names a workload by its app label alone: a runtime's own
// notion of a workload, replacing the default's.
type appResolver struct{ KubernetesResolver }

func (appResolver) Workload(pod *PeerPod) string { return pod.Labels["app"] }

// The workload is the resolver's: a pod of another DaemonSet of the
// namespace with the same app label is another workload by default and the
// same one by a resolver that looks at its app label only; with no resolver
// the uid rule decides.
func TestWorkloadIsTheResolversAndNilTurnsTheRuleOff(t *testing.T) {
	for _, tc := range []struct {
		name     string
		resolver WorkloadResolver
		refused  string
	}{
		{"default", KubernetesResolver{}, "other-workload"},
		{"by app label", appResolver{}, ""},
		{"none", nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := testRegistry(handoverPolicy{resolver: tc.resolver})
			a := inPod(as(g.optedIn("10", "p", "a", 1, "1"), 0, 0), "kube-system", "p-h1", "p", 1)
			place(t, g, a)
			g.switchNow(t, a)
			b := inPod(as(g.optedIn("10", "p", "b", 2, "2"), 0, 0), "kube-system", "q-h2", "p", 2)
			g.mu.Lock()
			err := g.maySupersede(a, b)
			g.mu.Unlock()
			var refusal *IdentityRefusal
			switch {
			case tc.refused == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.refused != "" && (!errors.As(err, &refusal) || refusal.Reason != tc.refused):
				t.Fatalf("error %v, want a refusal %q", err, tc.refused)
			}
		})
	}
}
