package plugin_test

import (
	"context"
	"testing"

	"github.com/containerd/nri/pkg/api"
	"github.com/containerd/nri/pkg/plugin"
	"github.com/containerd/nri/pkg/stub"
)

// annotated is a plugin in the shape of upstream's own plugins that import
// pkg/plugin (writable-cgroups, the default validator): it reads a pod- or
// container-scoped annotation and adjusts the container. It must build on
// the stand-in with upstream's import paths.
type annotated struct{ stub stub.Stub }

const key = "cgroups." + plugin.AnnotationDomain + "/writable"

func (p *annotated) CreateContainer(_ context.Context, pod *api.PodSandbox, ctr *api.Container) (*api.ContainerAdjustment, []*api.ContainerUpdate, error) {
	if v, ok := plugin.GetEffectiveAnnotation(pod, key, ctr.GetName()); !ok || v != "true" {
		return nil, nil, nil
	}
	adjust := &api.ContainerAdjustment{}
	adjust.RemoveMount("/sys/fs/cgroup")
	adjust.AddMount(&api.Mount{Destination: "/sys/fs/cgroup", Type: "cgroup2", Source: "cgroup", Options: []string{"rw"}})
	return adjust, nil, nil
}

var _ stub.CreateContainerInterface = (*annotated)(nil)

func TestGetEffectiveAnnotationThroughTheStandIn(t *testing.T) {
	pod := &api.PodSandbox{Annotations: map[string]string{
		key:                   "false",
		key + "/container.c1": "true",
	}}
	p := &annotated{}
	for ctr, want := range map[string]bool{"c1": true, "c2": false} {
		adjust, _, err := p.CreateContainer(context.Background(), pod, &api.Container{Name: ctr})
		if err != nil || (adjust != nil) != want {
			t.Errorf("container %s: adjustment %v, error %v; want an adjustment: %v", ctr, adjust, err, want)
		}
	}
	if plugin.RequiredPluginsAnnotation != "required-plugins.noderesource.dev" {
		t.Errorf("RequiredPluginsAnnotation = %q", plugin.RequiredPluginsAnnotation)
	}
}
