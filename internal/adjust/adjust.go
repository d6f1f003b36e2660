// Package adjust applies a merged container adjustment to the NRI view of a
// container, as a runtime that honours it would report the container
// afterwards. The adaptation uses it to know what a container it saw created
// looks like without asking the runtime; the test runtime uses it to create
// containers.
package adjust

import (
	"strings"

	"google.golang.org/protobuf/proto"

	"github.com/nri-handover/nri/api"
)

// Apply applies a merged adjustment to a container being created. Keys
// prefixed with '-' mark removals, as on the wire.
func Apply(c *api.Container, a *api.ContainerAdjustment) {
	if a == nil {
		return
	}
	if c.Annotations == nil {
		c.Annotations = map[string]string{}
	}
	for k, v := range a.Annotations {
		if name, ok := strings.CutPrefix(k, "-"); ok {
			delete(c.Annotations, name)
			continue
		}
		c.Annotations[k] = v
	}
	for _, kv := range a.Env {
		if name, ok := strings.CutPrefix(kv.Key, "-"); ok {
			c.Env = removeEnv(c.Env, name)
			continue
		}
		c.Env = append(removeEnv(c.Env, kv.Key), kv.Key+"="+kv.Value)
	}
	if len(a.Args) > 0 {
		if a.Args[0] == "" {
			c.Args = append([]string(nil), a.Args[1:]...)
		} else {
			c.Args = append([]string(nil), a.Args...)
		}
	}
	c.Mounts = append(c.Mounts, a.Mounts...)
	if l := a.GetLinux(); l != nil {
		MergeResources(c, l.GetResources())
		if l.CgroupsPath != "" {
			if c.Linux == nil {
				c.Linux = &api.LinuxContainer{}
			}
			c.Linux.CgroupsPath = l.CgroupsPath
		}
	}
}

// MergeResources merges res into the container's Linux resources.
func MergeResources(c *api.Container, res *api.LinuxResources) {
	if res == nil || proto.Size(res) == 0 {
		return
	}
	if c.Linux == nil {
		c.Linux = &api.LinuxContainer{}
	}
	if c.Linux.Resources == nil {
		c.Linux.Resources = &api.LinuxResources{}
	}
	proto.Merge(c.Linux.Resources, res)
}

func removeEnv(env []string, name string) []string {
	out := env[:0:0]
	for _, e := range env {
		if k, _, _ := strings.Cut(e, "="); k != name {
			out = append(out, e)
		}
	}
	return out
}
