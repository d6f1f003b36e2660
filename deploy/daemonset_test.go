// Package deploy_test checks deploy/daemonset.yaml, or the manifest $MANIFEST
// names (make check-deploy MANIFEST=path, for another plugin's DaemonSet): it
// decodes strictly into k8s.io/api types (an unknown or misspelt field
// fails) and checks, one subtest each, every property a surging rollout of a
// handover plugin needs: one built with stub.WithHandover, or one written for
// upstream that the nri.containerd.io/handover pod annotation opts in. The annotator's flags (-readyz-addr, -socket,
// -state-file, -shutdown-timeout, -version) are checked where a manifest
// passes them. TestChecksCatchBrokenManifests proves that each check fails
// on a manifest that lacks its property.
package deploy_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/yaml"

	"github.com/nri-handover/nri/api"
	"github.com/nri-handover/nri/pkg/adaptation"
	"github.com/nri-handover/nri/pkg/stub"
)

// manifestEnv names a manifest to check instead of daemonset.yaml.
const manifestEnv = "MANIFEST"

// manifest is the manifest under test, and whether it is this directory's.
func manifest() (string, bool) {
	if m := os.Getenv(manifestEnv); m != "" {
		return m, false
	}
	return "daemonset.yaml", true
}

// plugin is the DaemonSet, the plugin's container and its command line.
type plugin struct {
	ds   *appsv1.DaemonSet
	pod  *corev1.PodSpec
	ctr  *corev1.Container
	args map[string]string
}

// decode reads a single-document manifest strictly.
func decode(b []byte) (*plugin, error) {
	if docs := bytes.Split(b, []byte("\n---")); len(docs) != 1 {
		return nil, fmt.Errorf("%d YAML documents, want one DaemonSet", len(docs))
	}
	ds := &appsv1.DaemonSet{}
	if err := yaml.UnmarshalStrict(b, ds); err != nil {
		return nil, err
	}
	if ds.APIVersion != "apps/v1" || ds.Kind != "DaemonSet" {
		return nil, fmt.Errorf("%s %s, want apps/v1 DaemonSet", ds.APIVersion, ds.Kind)
	}
	pod := &ds.Spec.Template.Spec
	if len(pod.Containers) != 1 {
		return nil, fmt.Errorf("%d containers, want the plugin's only", len(pod.Containers))
	}
	ctr := &pod.Containers[0]
	if len(ctr.Command) != 0 {
		return nil, fmt.Errorf("command %q overrides the image's entrypoint", ctr.Command)
	}
	args := map[string]string{}
	for _, a := range ctr.Args {
		name, value, ok := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if !strings.HasPrefix(a, "-") || !ok {
			return nil, fmt.Errorf("argument %q: want -name=value", a)
		}
		args[name] = value
	}
	return &plugin{ds: ds, pod: pod, ctr: ctr, args: args}, nil
}

func load(t *testing.T) ([]byte, *plugin) {
	t.Helper()
	file, _ := manifest()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("$%s: %v", manifestEnv, err)
	}
	p, err := decode(b)
	if err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	return b, p
}

// checks are the properties of the manifest, each one subtest. Those in
// stubOnly hold for a plugin that opted in with stub.WithHandover; a plugin
// written for upstream, opted in by the pod annotation, has
// annotationChecks instead.
var checks = []struct {
	name  string
	check func(*plugin) error
}{
	{"selector matches the pod template", func(p *plugin) error {
		sel := p.ds.Spec.Selector
		if sel == nil || len(sel.MatchLabels) == 0 {
			return errors.New("no selector")
		}
		for k, v := range sel.MatchLabels {
			if p.ds.Spec.Template.Labels[k] != v {
				return fmt.Errorf("selector %s=%s not in the template's labels", k, v)
			}
		}
		return nil
	}},

	{"rolling update with maxSurge 1 and maxUnavailable 0", func(p *plugin) error {
		s := p.ds.Spec.UpdateStrategy
		if s.Type != appsv1.RollingUpdateDaemonSetStrategyType || s.RollingUpdate == nil {
			return fmt.Errorf("update strategy %+v, want RollingUpdate", s)
		}
		if ru := s.RollingUpdate; !isInt(ru.MaxSurge, 1) || !isInt(ru.MaxUnavailable, 0) {
			return fmt.Errorf("maxSurge %v, maxUnavailable %v; want 1 and 0", ru.MaxSurge, ru.MaxUnavailable)
		}
		return nil
	}},

	{"minReadySeconds outlasts a failing readiness probe", func(p *plugin) error {
		pr := p.ctr.ReadinessProbe
		if pr == nil {
			return errors.New("no readinessProbe")
		}
		// A successor that loses the active role right after taking over
		// must turn not ready before the old pod is deleted.
		notice := probePeriod(pr) * max(pr.FailureThreshold, 1)
		if p.ds.Spec.MinReadySeconds <= notice {
			return fmt.Errorf("minReadySeconds %d, want more than the %ds the probe takes to notice a failure",
				p.ds.Spec.MinReadySeconds, notice)
		}
		return nil
	}},

	{"readinessProbe asks the stub's /readyz on the pod network", func(p *plugin) error {
		pr := p.ctr.ReadinessProbe
		if pr == nil || pr.HTTPGet == nil {
			return fmt.Errorf("readinessProbe %+v, want an httpGet probe", pr)
		}
		if pr.HTTPGet.Path != "/readyz" || pr.HTTPGet.Host != "" {
			return fmt.Errorf("probe of %s%s, want /readyz on the pod's IP", pr.HTTPGet.Host, pr.HTTPGet.Path)
		}
		port, err := p.containerPort(pr.HTTPGet.Port)
		if err != nil {
			return err
		}
		served, err := p.readyzServed()
		if err != nil {
			return err
		}
		if strconv.Itoa(int(port)) != served {
			return fmt.Errorf("probe port %d, the plugin serves /readyz on port %s", port, served)
		}
		if lp := p.ctr.LivenessProbe; lp != nil && lp.HTTPGet != nil && lp.HTTPGet.Path == "/readyz" {
			return errors.New("a livenessProbe on /readyz would kill superseded and standby instances")
		}
		return nil
	}},

	{"no host network and no host ports, so two pods run side by side", func(p *plugin) error {
		if p.pod.HostNetwork {
			return errors.New("hostNetwork: the surge pod could not bind the old pod's ports")
		}
		for _, c := range append(p.pod.InitContainers, p.pod.Containers...) {
			for _, cp := range c.Ports {
				if cp.HostPort != 0 {
					return fmt.Errorf("container %s: hostPort %d prevents surging", c.Name, cp.HostPort)
				}
			}
		}
		return nil
	}},

	{"instance id and generation from the downward API", func(p *plugin) error {
		for _, want := range []struct{ env, field, flag string }{
			{stub.InstanceIDEnvVar, "metadata.uid", "instance"},
			{stub.GenerationEnvVar, "metadata.labels['pod-template-generation']", "generation"},
		} {
			e := p.env(want.env)
			if e == nil || e.ValueFrom == nil || e.ValueFrom.FieldRef == nil {
				return fmt.Errorf("%s not set from the downward API", want.env)
			}
			if got := e.ValueFrom.FieldRef.FieldPath; got != want.field {
				return fmt.Errorf("%s from %s, want %s", want.env, got, want.field)
			}
			if _, ok := p.args[want.flag]; ok {
				return fmt.Errorf("-%s overrides %s", want.flag, want.env)
			}
		}
		return nil
	}},

	// The operator's kill switch, where the manifest sets it, must be a value
	// the stub accepts: any other stops the plugin at start, every pod of the
	// rollout crash-looping. The stub itself is asked, so the spellings live
	// in one place.
	{"the kill switch, where set, is a value the stub accepts", func(p *plugin) error {
		e := p.env(stub.HandoverEnvVar)
		if e == nil || e.ValueFrom != nil {
			return nil
		}
		return withEnv(stub.HandoverEnvVar, e.Value, func() error {
			_, err := stub.New(optionsProbe{}, stub.WithPluginName("check"), stub.WithPluginIdx("00"), stub.WithHandover())
			return err
		})
	}},

	{"the NRI socket directory is mounted from the host", func(p *plugin) error {
		sock, ok := p.args["socket"]
		if !ok {
			sock = api.DefaultSocketPath
		}
		hp := p.hostPathAt(path.Dir(sock))
		if hp == nil {
			return fmt.Errorf("no writable hostPath volume at %s", path.Dir(sock))
		}
		if want := path.Dir(api.DefaultSocketPath); path.Clean(hp.Path) != want {
			return fmt.Errorf("hostPath %s, want the runtime's %s", hp.Path, want)
		}
		return nil
	}},

	{"the state file lives on the host", func(p *plugin) error {
		file, ok := p.args["state-file"]
		if !ok {
			return nil // no state on the host
		}
		if p.hostPathAt(path.Dir(file)) == nil {
			return fmt.Errorf("no writable hostPath volume at %s: the state would die with the pod", path.Dir(file))
		}
		return nil
	}},

	{"resources are requested and memory is limited", func(p *plugin) error {
		r := p.ctr.Resources
		for _, name := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
			if q, ok := r.Requests[name]; !ok || q.IsZero() {
				return fmt.Errorf("no %s request", name)
			}
		}
		if lim, ok := r.Limits[corev1.ResourceMemory]; !ok || lim.Cmp(r.Requests[corev1.ResourceMemory]) < 0 {
			return fmt.Errorf("memory limit %s, want one at or above the request", lim.String())
		}
		return nil
	}},

	{"terminationGracePeriodSeconds fits the shutdown timeout", func(p *plugin) error {
		grace := p.pod.TerminationGracePeriodSeconds
		if grace == nil {
			return errors.New("no terminationGracePeriodSeconds")
		}
		arg, ok := p.args["shutdown-timeout"]
		if !ok {
			return nil // the plugin's own bound, if any, is not on its command line
		}
		timeout, err := time.ParseDuration(arg)
		if err != nil {
			return err
		}
		// The plugin's own bound fires before the kubelet's SIGKILL, with a
		// second to spare for the process to exit.
		if time.Duration(*grace)*time.Second < timeout+time.Second {
			return fmt.Errorf("terminationGracePeriodSeconds %d, want at least -shutdown-timeout %s + 1s", *grace, timeout)
		}
		return nil
	}},

	{"the plugin version is the image's tag", func(p *plugin) error {
		img := p.ctr.Image
		i := strings.LastIndex(img, ":")
		if i < 0 || strings.Contains(img[i:], "/") {
			return fmt.Errorf("image %q has no tag", img)
		}
		v, ok := p.args["version"]
		if !ok {
			return nil // the stub reports the module version the image was built from
		}
		if tag := img[i+1:]; tag != v {
			return fmt.Errorf("image tag %s, -version %s: the runtime would log and compare the wrong version", tag, v)
		}
		return nil
	}},
}

// stubOnly are the checks of properties only a plugin that opted in with
// stub.WithHandover can have: its stub reads the environment and serves
// /readyz, and readiness follows the runtime's switch.
var stubOnly = map[string]bool{
	"minReadySeconds outlasts a failing readiness probe":        true,
	"readinessProbe asks the stub's /readyz on the pod network": true,
	"instance id and generation from the downward API":          true,
	"the kill switch, where set, is a value the stub accepts":   true,
}

// annotated tells whether the manifest opts its plugin in with the handover
// annotation (on the pod template or, misplaced, on the DaemonSet).
func (p *plugin) annotated() bool {
	_, onTemplate := p.ds.Spec.Template.Annotations[adaptation.HandoverAnnotation]
	_, onDaemonSet := p.ds.Annotations[adaptation.HandoverAnnotation]
	return onTemplate || onDaemonSet
}

// applicable are the checks for p's path: the stub's, or the annotation's.
func applicable(p *plugin) []check {
	var out []check
	for _, c := range checks {
		if !p.annotated() || !stubOnly[c.name] {
			out = append(out, c)
		}
	}
	if p.annotated() {
		out = append(out, annotationChecks...)
	}
	return out
}

type check = struct {
	name  string
	check func(*plugin) error
}

// annotationSettle is how long an annotated plugin's new pod must wait
// before it counts as available: the plugin has no readiness that follows
// the runtime's switch, so the DaemonSet controller would delete the old
// pod as soon as the new one runs. The switch waits for runtime
// operations in flight, which containerd holds up to a graceful stop (10 s
// by default); make e2e-kubernetes' annotated rollouts used 30 s.
const annotationSettle = 10

// annotationChecks are the properties of a manifest that opts a plugin
// written for upstream in with the pod annotation
// (deploy/README.md, "Third-party plugins, unchanged").
var annotationChecks = []check{
	{"the handover annotation is on the pod template, with a value the runtime knows", func(p *plugin) error {
		v, ok := p.ds.Spec.Template.Annotations[adaptation.HandoverAnnotation]
		if !ok {
			return fmt.Errorf("%s on the DaemonSet, not on its pod template: the runtime sees pods only", adaptation.HandoverAnnotation)
		}
		if v != adaptation.HandoverWorkload {
			return fmt.Errorf("%s: %q, want %q (the only value the runtime accepts; any other runs the plugin as upstream runs it, "+
				"every instance receiving every event)", adaptation.HandoverAnnotation, v, adaptation.HandoverWorkload)
		}
		return nil
	}},

	// Who is newer is the pods' pod-template-generation, which the DaemonSet
	// controller sets; the workload is the pods' other labels, which must
	// stay the same from one rollout to the next.
	{"pod-template-generation is the controller's, and the workload's labels stay across rollouts", func(p *plugin) error {
		for _, l := range []string{"pod-template-generation", "controller-revision-hash"} {
			if _, ok := p.ds.Spec.Template.Labels[l]; ok {
				return fmt.Errorf("the pod template sets %s: the DaemonSet controller sets it on each pod, and the runtime orders instances by it", l)
			}
			if _, ok := p.ds.Spec.Selector.MatchLabels[l]; ok {
				return fmt.Errorf("the selector matches %s, which changes with every rollout", l)
			}
		}
		for _, l := range []string{"app.kubernetes.io/version", "helm.sh/chart"} {
			if _, ok := p.ds.Spec.Template.Labels[l]; ok {
				return fmt.Errorf("the pod template's label %s changes with releases: the runtime names the workload by the pods' labels, "+
					"so the new pods would be another workload and not take over", l)
			}
		}
		return nil
	}},

	{"readiness is what a plugin without a stub of ours can have", func(p *plugin) error {
		for what, pr := range map[string]*corev1.Probe{"readinessProbe": p.ctr.ReadinessProbe, "startupProbe": p.ctr.StartupProbe} {
			if pr != nil && (pr.HTTPGet != nil || pr.TCPSocket != nil || pr.GRPC != nil) {
				return fmt.Errorf("%s asks the network: a plugin written for upstream serves nothing there (%s is read by "+
					"this module's stub under stub.WithHandover only; such a plugin needs no annotation)", what, stub.ReadyzAddrEnvVar)
			}
		}
		return nil
	}},

	{"the new pod waits before it counts as available (minReadySeconds or a startupProbe)", func(p *plugin) error {
		if p.ds.Spec.MinReadySeconds >= annotationSettle {
			return nil
		}
		if pr := p.ctr.StartupProbe; pr != nil && pr.InitialDelaySeconds >= annotationSettle {
			return nil
		}
		return fmt.Errorf("minReadySeconds %d and no startupProbe with initialDelaySeconds of %d or more: "+
			"the plugin has no readiness that follows the runtime's switch, so the old pod would be deleted as soon as the new one runs",
			p.ds.Spec.MinReadySeconds, annotationSettle)
	}},
}

func TestDaemonSet(t *testing.T) {
	_, p := load(t)
	for _, c := range applicable(p) {
		t.Run(c.name, func(t *testing.T) {
			if err := c.check(p); err != nil {
				t.Error(err)
			}
		})
	}

	if _, annotatorManifest := manifest(); !annotatorManifest {
		return // another plugin: its flags are its own
	}
	t.Run("the plugin accepts its arguments", func(t *testing.T) {
		// An unknown flag or a bad value makes the annotator exit non-zero before
		// it reaches -h, which exits 0.
		out, err := exec.Command(annotator(t), append(p.ctr.Args, "-h")...).CombinedOutput()
		if err != nil {
			t.Errorf("examples/annotator %s: %v\n%s", strings.Join(p.ctr.Args, " "), err, out)
		}
	})
}

// TestChecksCatchBrokenManifests breaks the manifest in one place per check
// and expects decoding or that check to fail.
func TestChecksCatchBrokenManifests(t *testing.T) {
	file, annotatorManifest := manifest()
	if !annotatorManifest {
		t.Skipf("$%s=%s: the broken variants are daemonset.yaml's", manifestEnv, file)
	}
	good, _ := load(t)
	for _, tc := range []struct {
		check    string // "" for decoding
		old, new string
	}{
		{"", "minReadySeconds:", "minReadySecond:"}, // strict: unknown field
		{"", "- -shutdown-timeout=5s", "- shutdown-timeout=5s"},
		{"selector matches the pod template", "    metadata:\n      labels:\n        app.kubernetes.io/name: nri-annotator", "    metadata:\n      labels:\n        app.kubernetes.io/name: other"},
		{"rolling update with maxSurge 1 and maxUnavailable 0", "maxUnavailable: 0", "maxUnavailable: 1"},
		{"rolling update with maxSurge 1 and maxUnavailable 0", "maxSurge: 1", "maxSurge: 25%"},
		{"minReadySeconds outlasts a failing readiness probe", "minReadySeconds: 10", "minReadySeconds: 2"},
		{"readinessProbe asks the stub's /readyz on the pod network", "path: /readyz", "path: /healthz"},
		{"readinessProbe asks the stub's /readyz on the pod network", `value: ":8080"`, `value: ":9090"`},
		{"readinessProbe asks the stub's /readyz on the pod network", `value: ":8080"`, `value: "8080"`},
		{"readinessProbe asks the stub's /readyz on the pod network", "- name: NRI_PLUGIN_READYZ_ADDR", "- name: READYZ_ADDR"},
		{"readinessProbe asks the stub's /readyz on the pod network", "- -shutdown-timeout=5s", "- -shutdown-timeout=5s\n        - -readyz-addr=:8080"},
		{"no host network and no host ports, so two pods run side by side", "hostNetwork: false", "hostNetwork: true"},
		{"no host network and no host ports, so two pods run side by side", "containerPort: 8080", "containerPort: 8080\n          hostPort: 8080"},
		{"instance id and generation from the downward API", "fieldPath: metadata.uid", "fieldPath: metadata.name"},
		{"instance id and generation from the downward API", "name: NRI_PLUGIN_GENERATION", "name: GENERATION"},
		{"the kill switch, where set, is a value the stub accepts", "        - name: NRI_PLUGIN_INSTANCE_ID\n", "        - name: NRI_PLUGIN_HANDOVER\n          value: maybe\n        - name: NRI_PLUGIN_INSTANCE_ID\n"},
		{"the NRI socket directory is mounted from the host", "path: /var/run/nri\n", "path: /run/containerd\n"},
		{"the NRI socket directory is mounted from the host", "mountPath: /var/run/nri", "mountPath: /nri"},
		{"the state file lives on the host", "-state-file=/var/lib/nri-annotator/state.json", "-state-file=/tmp/state.json"},
		{"resources are requested and memory is limited", "            memory: 64Mi", "            memory: 16Mi"},
		{"resources are requested and memory is limited", "cpu: 10m", "cpu: 0m"},
		{"terminationGracePeriodSeconds fits the shutdown timeout", "terminationGracePeriodSeconds: 15", "terminationGracePeriodSeconds: 5"},
		{"the plugin version is the image's tag", "-version=v0.1.0", "-version=v0.2.0"},
	} {
		t.Run(tc.check+": "+tc.new, func(t *testing.T) {
			bad := bytes.Replace(good, []byte(tc.old), []byte(tc.new), 1)
			if bytes.Equal(bad, good) {
				t.Fatalf("%q not in %s", tc.old, file)
			}
			p, err := decode(bad)
			if tc.check == "" {
				if err == nil {
					t.Error("decoded without error")
				}
				return
			}
			if err != nil {
				t.Fatalf("decoding: %v", err)
			}
			for _, c := range applicable(p) {
				if c.name == tc.check {
					if err := c.check(p); err == nil {
						t.Error("check passed")
					}
					return
				}
			}
			t.Fatalf("no check %q", tc.check)
		})
	}
}

// TestAnnotatedChecksCatchBrokenManifests breaks testdata/ulimit-adjuster.yaml,
// a plugin written for upstream opted in by the pod annotation, in one place
// per check of that path, and expects that check to fail.
func TestAnnotatedChecksCatchBrokenManifests(t *testing.T) {
	const file = "testdata/ulimit-adjuster.yaml"
	good, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	const (
		value     = "the handover annotation is on the pod template, with a value the runtime knows"
		labels    = "pod-template-generation is the controller's, and the workload's labels stay across rollouts"
		readiness = "readiness is what a plugin without a stub of ours can have"
		settle    = "the new pod waits before it counts as available (minReadySeconds or a startupProbe)"
	)
	for _, tc := range []struct {
		check      string
		old, new   string
		old2, new2 string // a second change, if any
	}{
		{value, `handover: "workload"`, `handover: "workloads"`, "", ""},
		{value, `handover: "workload"`, `handover: ""`, "", ""},
		// on the DaemonSet instead of its pod template
		{value, `        nri.containerd.io/handover: "workload"`, `        other: "x"`,
			"  labels:\n    app.kubernetes.io/name: ulimit-adjuster\nspec:", "  labels:\n    app.kubernetes.io/name: ulimit-adjuster\n  annotations:\n    nri.containerd.io/handover: workload\nspec:"},
		{labels, "      labels:\n        app.kubernetes.io/name: ulimit-adjuster\n", "      labels:\n        app.kubernetes.io/name: ulimit-adjuster\n        pod-template-generation: \"1\"\n", "", ""},
		{labels, "      labels:\n        app.kubernetes.io/name: ulimit-adjuster\n", "      labels:\n        app.kubernetes.io/name: ulimit-adjuster\n        app.kubernetes.io/version: v0.12.5\n", "", ""},
		{readiness, "          exec:\n            command: [/ulimit-adjuster, -h]", "          httpGet:\n            path: /readyz\n            port: 8080", "", ""},
		{settle, "initialDelaySeconds: 30", "initialDelaySeconds: 5", "", ""},
	} {
		t.Run(tc.check+": "+tc.new, func(t *testing.T) {
			bad := bytes.Replace(good, []byte(tc.old), []byte(tc.new), 1)
			if tc.old2 != "" {
				bad = bytes.Replace(bad, []byte(tc.old2), []byte(tc.new2), 1)
			}
			if bytes.Equal(bad, good) {
				t.Fatalf("%q not in %s", tc.old, file)
			}
			p, err := decode(bad)
			if err != nil {
				t.Fatalf("decoding: %v", err)
			}
			for _, c := range applicable(p) {
				if c.name == tc.check {
					if err := c.check(p); err == nil {
						t.Error("check passed")
					}
					return
				}
			}
			t.Fatalf("no check %q", tc.check)
		})
	}
}

// TestReadmeShowsCheckedManifest: the annotated manifest deploy/README.md
// gives is testdata/ulimit-adjuster.yaml, which make check-deploy checks.
func TestReadmeShowsCheckedManifest(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile("testdata/ulimit-adjuster.yaml")
	if err != nil {
		t.Fatal(err)
	}
	_, after, ok := strings.Cut(string(readme), "<!-- testdata/ulimit-adjuster.yaml -->\n```yaml\n")
	block, _, ok2 := strings.Cut(after, "```")
	if !ok || !ok2 {
		t.Fatal("deploy/README.md has no yaml block after <!-- testdata/ulimit-adjuster.yaml -->")
	}
	if block != string(want) {
		t.Error("deploy/README.md's annotated manifest differs from testdata/ulimit-adjuster.yaml: copy the file into it")
	}
}

// TestManifestVariable runs TestDaemonSet, in a process of its own, on the
// manifests of testdata/ through $MANIFEST, as make check-deploy
// MANIFEST=path does: another plugin's manifest passes, and each broken one
// fails the check its name says (testdata/bad-<what>.yaml: want in the output).
func TestManifestVariable(t *testing.T) {
	if _, annotatorManifest := manifest(); !annotatorManifest {
		t.Skip("checking $" + manifestEnv + " itself")
	}
	for _, tc := range []struct {
		file string
		want string // "" to pass, else what the failure says
	}{
		{"testdata/other-plugin.yaml", ""},
		{"testdata/bad-host-network.yaml", "hostNetwork: the surge pod could not bind the old pod's ports"},
		{"testdata/bad-max-unavailable.yaml", "maxSurge 1, maxUnavailable 1; want 1 and 0"},
		{"testdata/bad-readyz-unserved.yaml", "nothing serves /readyz: set NRI_PLUGIN_READYZ_ADDR"},
		{"testdata/bad-readyz-port.yaml", "probe port 9090, the plugin serves /readyz on port 8080"},
		{"testdata/ulimit-adjuster.yaml", ""},
		{"testdata/bad-annotation-value.yaml", `nri.containerd.io/handover: "workloads", want "workload"`},
		{"testdata/missing.yaml", "no such file or directory"},
	} {
		t.Run(tc.file, func(t *testing.T) {
			abs, err := filepath.Abs(tc.file)
			if err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command(os.Args[0], "-test.run=^TestDaemonSet$", "-test.v")
			cmd.Env = append(os.Environ(), manifestEnv+"="+abs)
			out, err := cmd.CombinedOutput()
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("%s fails the check: %v\n%s", tc.file, err, out)
			case tc.want != "" && err == nil:
				t.Errorf("%s passes the check\n%s", tc.file, out)
			case tc.want != "" && !strings.Contains(string(out), tc.want):
				t.Errorf("%s fails without saying %q:\n%s", tc.file, tc.want, out)
			case tc.want == "" && strings.Contains(string(out), "the plugin accepts its arguments"):
				t.Errorf("%s: the annotator's flags checked on another plugin's manifest", tc.file)
			}
		})
	}
}

// hostPathAt returns the hostPath volume mounted writable at dir, if any.
func (p *plugin) hostPathAt(dir string) *corev1.HostPathVolumeSource {
	for _, m := range p.ctr.VolumeMounts {
		if path.Clean(m.MountPath) != path.Clean(dir) || m.ReadOnly {
			continue
		}
		for _, v := range p.pod.Volumes {
			if v.Name == m.Name {
				return v.HostPath
			}
		}
	}
	return nil
}

func (p *plugin) env(name string) *corev1.EnvVar {
	for i := range p.ctr.Env {
		if p.ctr.Env[i].Name == name {
			return &p.ctr.Env[i]
		}
	}
	return nil
}

// readyzServed is the port the plugin serves /readyz on: the stub's, from
// $NRI_PLUGIN_READYZ_ADDR (what a plugin that did only stub.WithHandover
// has), or the plugin's own, from a -readyz-addr argument (the
// annotator's flag). A manifest with neither probes a port nobody serves,
// and its rollout stalls on the first node. The stub is asked whether it
// takes the variable's value.
func (p *plugin) readyzServed() (string, error) {
	arg, hasArg := p.args["readyz-addr"]
	e := p.env(stub.ReadyzAddrEnvVar)
	switch {
	case e != nil && e.ValueFrom != nil:
		return "", fmt.Errorf("%s from %v: want a literal host:port such as \":8080\"", stub.ReadyzAddrEnvVar, e.ValueFrom)
	case e != nil && hasArg:
		return "", fmt.Errorf("%s and -readyz-addr both set: the stub and the plugin would both bind it", stub.ReadyzAddrEnvVar)
	case e != nil:
		err := withEnv(stub.ReadyzAddrEnvVar, e.Value, func() error {
			_, err := stub.New(optionsProbe{}, stub.WithPluginName("check"), stub.WithPluginIdx("00"), stub.WithHandover())
			return err
		})
		if err != nil {
			return "", err
		}
		arg = e.Value
	case !hasArg:
		return "", fmt.Errorf("nothing serves /readyz: set %s in the container's env to the probe's port (\":8080\"), "+
			"which the stub of a plugin that called stub.WithHandover serves", stub.ReadyzAddrEnvVar)
	}
	_, port, err := net.SplitHostPort(strings.TrimSpace(arg))
	return port, err
}

// containerPort resolves a probe's port, named or numbered, to a declared
// container port.
// optionsProbe is the smallest plugin the stub accepts: a check creates a stub
// of it to ask whether the stub takes an option, and never runs it.
type optionsProbe struct{}

func (optionsProbe) RemoveContainer(context.Context, *api.PodSandbox, *api.Container) error {
	return nil
}

// withEnv runs f with the variable name set to value, as the pod's
// environment would, and restores it after.
func withEnv(name, value string, f func() error) error {
	old, had := os.LookupEnv(name)
	os.Setenv(name, value)
	defer func() {
		if had {
			os.Setenv(name, old)
		} else {
			os.Unsetenv(name)
		}
	}()
	return f()
}

func (p *plugin) containerPort(port intstr.IntOrString) (int32, error) {
	for _, cp := range p.ctr.Ports {
		if (port.Type == intstr.String && cp.Name == port.StrVal) || (port.Type == intstr.Int && cp.ContainerPort == port.IntVal) {
			return cp.ContainerPort, nil
		}
	}
	return 0, fmt.Errorf("probe port %s is not a declared container port", port.String())
}

func isInt(v *intstr.IntOrString, n int) bool {
	return v != nil && v.Type == intstr.Int && v.IntValue() == n
}

func probePeriod(p *corev1.Probe) int32 {
	if p.PeriodSeconds == 0 {
		return 10 // Kubernetes' default
	}
	return p.PeriodSeconds
}

// annotator builds examples/annotator from this checkout.
func annotator(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "annotator")
	cmd := exec.Command("go", "build", "-o", bin, "github.com/nri-handover/nri/examples/annotator")
	cmd.Env = append(os.Environ(), "GOWORK=off")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building examples/annotator: %v\n%s", err, out)
	}
	return bin
}
