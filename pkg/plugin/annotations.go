// Package plugin holds what NRI plugins and the runtime share about pod
// annotations addressed to NRI: the annotation domain, the required-plugins
// annotation read by the default validator, and the scoping rule that lets
// one pod annotation target a single container. Its API is that of
// containerd/nri v0.12.5's pkg/plugin, so plugins switch by import path.
package plugin

import "github.com/nri-handover/nri/api"

const (
	// AnnotationDomain is the domain of NRI's own annotation keys.
	AnnotationDomain = "noderesource.dev"

	// RequiredPluginsAnnotation lists (as a YAML list) plugins that must take
	// part in creating a pod's containers; the default validator, when
	// enabled, rejects a container created without them. Like any key read
	// with GetEffectiveAnnotation it may be scoped to the pod or to one
	// container.
	RequiredPluginsAnnotation = "required-plugins." + AnnotationDomain
)

// GetEffectiveAnnotation returns the value of the pod annotation key as it
// applies to the named container, and whether there is one. A key may be
// written for one container ("key/container.NAME"), for the whole pod
// ("key/pod") or bare ("key"); the most specific form present wins, so a
// pod-wide setting can be overridden container by container.
func GetEffectiveAnnotation(pod *api.PodSandbox, key, container string) (string, bool) {
	annotations := pod.GetAnnotations()
	for _, k := range []string{key + "/container." + container, key + "/pod", key} {
		if value, ok := annotations[k]; ok {
			return value, true
		}
	}
	return "", false
}
