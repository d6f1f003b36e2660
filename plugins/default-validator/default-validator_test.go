package validator

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/nri-handover/nri/api"
)

// request builds a validation request for container "ctr" of pod "pod" with
// the given plugins taking part ("index-name") and owners recorded by claim.
func request(annotations map[string]string, plugins []string, claim func(o *api.OwningPlugins)) *api.ValidateContainerAdjustmentRequest {
	req := &api.ValidateContainerAdjustmentRequest{
		Pod:       &api.PodSandbox{Id: "pod-id", Name: "pod", Namespace: "ns", Annotations: annotations},
		Container: &api.Container{Id: "ctr-id", Name: "ctr", Linux: &api.LinuxContainer{}},
		Adjust:    &api.ContainerAdjustment{Linux: &api.LinuxContainerAdjustment{}},
		Owners:    api.NewOwningPlugins(),
	}
	for _, p := range plugins {
		idx, name, _ := strings.Cut(p, "-")
		req.AddPlugin(name, idx)
	}
	if claim != nil {
		claim(req.Owners)
	}
	return req
}

func TestRequiredPlugins(t *testing.T) {
	for _, tc := range []struct {
		name        string
		cfg         DefaultValidatorConfig
		annotations map[string]string
		plugins     []string
		reject      string
	}{
		{name: "nothing required"},
		{
			name:    "globally required and present",
			cfg:     DefaultValidatorConfig{RequiredPlugins: []string{"a"}},
			plugins: []string{"10-a"},
		},
		{
			name:   "globally required and missing",
			cfg:    DefaultValidatorConfig{RequiredPlugins: []string{"a"}},
			reject: `required plugin "a" not present`,
		},
		{
			name:    "a specific instance is required",
			cfg:     DefaultValidatorConfig{RequiredPlugins: []string{"20-a"}},
			plugins: []string{"10-a"},
			reject:  `required plugin "20-a" not present`,
		},
		{
			name:        "annotated for the container",
			annotations: map[string]string{RequiredPlugins + "/container.ctr": "[ a, b ]"},
			plugins:     []string{"10-a"},
			reject:      `required plugin "b" not present`,
		},
		{
			name: "container annotation wins over the pod's",
			annotations: map[string]string{
				RequiredPlugins + "/container.ctr": "[a]",
				RequiredPlugins + "/pod":           "[b]",
			},
			plugins: []string{"10-a"},
		},
		{
			name:        "pod annotation as a YAML block list",
			annotations: map[string]string{RequiredPlugins + "/pod": "- a\n- b\n"},
			reject:      `required plugins "a,b" not present`,
		},
		{
			name:        "annotation of another container does not apply",
			annotations: map[string]string{RequiredPlugins + "/container.other": "[a]"},
		},
		{
			name:        "malformed annotation",
			annotations: map[string]string{RequiredPlugins: "{not a list"},
			reject:      "invalid " + RequiredPlugins,
		},
		{
			name: "missing plugins tolerated by annotation",
			cfg: DefaultValidatorConfig{
				RequiredPlugins:           []string{"a"},
				TolerateMissingAnnotation: "tolerate",
			},
			annotations: map[string]string{"tolerate/pod": "true"},
		},
		{
			name: "toleration annotation set to false",
			cfg: DefaultValidatorConfig{
				RequiredPlugins:           []string{"a"},
				TolerateMissingAnnotation: "tolerate",
			},
			annotations: map[string]string{"tolerate": "false"},
			reject:      `required plugin "a" not present`,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.cfg.Enable = true
			err := NewDefaultValidator(&tc.cfg).ValidateContainerAdjustment(context.Background(),
				request(tc.annotations, tc.plugins, nil))
			checkResult(t, err, tc.reject)
		})
	}
}

func TestRestrictedAdjustments(t *testing.T) {
	withProfile := func(typ api.SecurityProfile_ProfileType) func(*api.ValidateContainerAdjustmentRequest) {
		return func(req *api.ValidateContainerAdjustmentRequest) {
			req.Container.Linux.SeccompProfile = &api.SecurityProfile{ProfileType: typ}
		}
	}
	for _, tc := range []struct {
		name   string
		cfg    DefaultValidatorConfig
		claim  func(o *api.OwningPlugins)
		modify func(*api.ValidateContainerAdjustmentRequest)
		reject string
	}{
		{
			name:  "hooks allowed",
			claim: func(o *api.OwningPlugins) { o.ClaimHooks("ctr-id", "a") },
		},
		{
			name:   "hooks rejected",
			cfg:    DefaultValidatorConfig{RejectOCIHookAdjustment: true},
			claim:  func(o *api.OwningPlugins) { o.ClaimHooks("ctr-id", "a"); o.ClaimHooks("ctr-id", "b") },
			reject: `plugins "a,b" injected OCI hooks`,
		},
		{
			name: "no hooks injected",
			cfg:  DefaultValidatorConfig{RejectOCIHookAdjustment: true},
		},
		{
			name:   "seccomp of unconfined container",
			cfg:    DefaultValidatorConfig{RejectUnconfinedSeccompAdjustment: true},
			claim:  func(o *api.OwningPlugins) { o.ClaimSeccompPolicy("ctr-id", "a") },
			reject: `plugin "a" changed the unconfined seccomp policy`,
		},
		{
			name:   "seccomp of runtime default container",
			cfg:    DefaultValidatorConfig{RejectRuntimeDefaultSeccompAdjustment: true},
			claim:  func(o *api.OwningPlugins) { o.ClaimSeccompPolicy("ctr-id", "a") },
			modify: withProfile(api.SecurityProfile_RUNTIME_DEFAULT),
			reject: "runtime default seccomp policy",
		},
		{
			name:   "seccomp of custom profile allowed when only others are rejected",
			cfg:    DefaultValidatorConfig{RejectRuntimeDefaultSeccompAdjustment: true, RejectUnconfinedSeccompAdjustment: true},
			claim:  func(o *api.OwningPlugins) { o.ClaimSeccompPolicy("ctr-id", "a") },
			modify: withProfile(api.SecurityProfile_LOCALHOST),
		},
		{
			name:   "seccomp of custom profile",
			cfg:    DefaultValidatorConfig{RejectCustomSeccompAdjustment: true},
			claim:  func(o *api.OwningPlugins) { o.ClaimSeccompPolicy("ctr-id", "a") },
			modify: withProfile(api.SecurityProfile_LOCALHOST),
			reject: "custom seccomp policy",
		},
		{
			name: "namespaces rejected",
			cfg:  DefaultValidatorConfig{RejectNamespaceAdjustment: true},
			claim: func(o *api.OwningPlugins) {
				o.ClaimNamespace("ctr-id", "network", "a")
				o.ClaimNamespace("ctr-id", "ipc", "b")
			},
			reject: `"ipc" by plugin "b", "network" by plugin "a"`,
		},
		{
			name: "sysctl rejected, removals included",
			cfg:  DefaultValidatorConfig{RejectSysctlAdjustment: true},
			claim: func(o *api.OwningPlugins) {
				o.ClaimSysctl("ctr-id", "net.a", "a")
				o.ClearSysctl("ctr-id", "net.b", "b")
			},
			modify: func(req *api.ValidateContainerAdjustmentRequest) {
				req.Adjust.Linux.Sysctl = map[string]string{"net.a": "1", "-net.b": ""}
			},
			reject: `plugins "b,a" changed sysctls`,
		},
		{
			name:  "sysctl allowed",
			claim: func(o *api.OwningPlugins) { o.ClaimSysctl("ctr-id", "net.a", "a") },
			modify: func(req *api.ValidateContainerAdjustmentRequest) {
				req.Adjust.Linux.Sysctl = map[string]string{"net.a": "1"}
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.cfg.Enable = true
			req := request(nil, nil, tc.claim)
			if tc.modify != nil {
				tc.modify(req)
			}
			err := NewDefaultValidator(&tc.cfg).ValidateContainerAdjustment(context.Background(), req)
			checkResult(t, err, tc.reject)
		})
	}
}

func TestSetConfig(t *testing.T) {
	v := NewDefaultValidator(&DefaultValidatorConfig{Enable: true})
	req := request(nil, nil, nil)
	checkResult(t, v.ValidateContainerAdjustment(context.Background(), req), "")

	v.SetConfig(&DefaultValidatorConfig{Enable: true, RequiredPlugins: []string{"x"}})
	checkResult(t, v.ValidateContainerAdjustment(context.Background(), req), `required plugin "x"`)

	v.SetConfig(nil) // keeps the configuration
	checkResult(t, v.ValidateContainerAdjustment(context.Background(), req), `required plugin "x"`)
}

func checkResult(t *testing.T, err error, reject string) {
	t.Helper()
	if reject == "" {
		if err != nil {
			t.Fatalf("unexpected rejection: %v", err)
		}
		return
	}
	if err == nil {
		t.Fatalf("accepted, want rejection %q", reject)
	}
	if !errors.Is(err, ErrValidation) || !strings.Contains(err.Error(), reject) {
		t.Fatalf("rejection %q, want ErrValidation and %q", err, reject)
	}
}
