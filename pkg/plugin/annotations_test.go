package plugin_test

import (
	"testing"

	"github.com/nri-handover/nri/api"
	"github.com/nri-handover/nri/pkg/plugin"
)

func TestRequiredPluginsAnnotationKey(t *testing.T) {
	// Pods in the field carry this exact key: it is part of the API.
	if got, want := plugin.RequiredPluginsAnnotation, "required-plugins.noderesource.dev"; got != want {
		t.Fatalf("RequiredPluginsAnnotation = %q, want %q", got, want)
	}
}

func TestGetEffectiveAnnotation(t *testing.T) {
	const key = "example." + plugin.AnnotationDomain
	for _, tc := range []struct {
		name        string
		annotations map[string]string
		container   string
		want        string
		found       bool
	}{
		{name: "no annotations", container: "c0"},
		{name: "unrelated key", annotations: map[string]string{"other": "x"}, container: "c0"},
		{name: "bare key", annotations: map[string]string{key: "bare"}, container: "c0", want: "bare", found: true},
		{name: "pod scope beats bare key",
			annotations: map[string]string{key: "bare", key + "/pod": "pod"},
			container:   "c0", want: "pod", found: true},
		{name: "container scope beats pod scope",
			annotations: map[string]string{key: "bare", key + "/pod": "pod", key + "/container.c0": "c0"},
			container:   "c0", want: "c0", found: true},
		{name: "another container's scope does not apply",
			annotations: map[string]string{key + "/container.c1": "c1", key + "/pod": "pod"},
			container:   "c0", want: "pod", found: true},
		{name: "only another container's scope",
			annotations: map[string]string{key + "/container.c1": "c1"}, container: "c0"},
		{name: "an empty value is a value",
			annotations: map[string]string{key + "/container.c0": ""}, container: "c0", found: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pod := &api.PodSandbox{Annotations: tc.annotations}
			got, found := plugin.GetEffectiveAnnotation(pod, key, tc.container)
			if got != tc.want || found != tc.found {
				t.Fatalf("GetEffectiveAnnotation = (%q, %v), want (%q, %v)", got, found, tc.want, tc.found)
			}
		})
	}
}

func TestGetEffectiveAnnotationNilPod(t *testing.T) {
	if v, ok := plugin.GetEffectiveAnnotation(nil, "k", "c"); ok || v != "" {
		t.Fatalf("nil pod: got (%q, %v)", v, ok)
	}
}
