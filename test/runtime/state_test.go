package testruntime

import (
	"slices"
	"testing"

	"github.com/nri-handover/nri/api"
	"github.com/nri-handover/nri/internal/adjust"
)

func TestApplyAdjustment(t *testing.T) {
	c := NewContainer("pod", "ctr")
	c.Annotations["keep"] = "1"
	c.Annotations["drop"] = "1"
	c.Env = []string{"A=1", "B=1"}

	// A merged adjustment, as the runtime gets it (the adaptation strips
	// UpdateArgs' leading "" marker).
	err := adjust.Apply(c, &api.ContainerAdjustment{
		Annotations: map[string]string{"-drop": "", "new": "2"},
		Env:         []*api.KeyValue{{Key: "-B"}, {Key: "A", Value: "2"}, {Key: "C", Value: "3"}},
		Args:        []string{"/bin/true"},
		Linux:       &api.LinuxContainerAdjustment{Resources: MemoryResources(42)},
	})
	if err != nil {
		t.Fatal(err)
	}

	for _, tc := range []struct {
		what      string
		got, want any
	}{
		{"kept annotation", c.Annotations["keep"], "1"},
		{"added annotation", c.Annotations["new"], "2"},
		{"removed annotation present", c.Annotations["drop"] != "", false},
		{"env", c.Env, []string{"A=2", "C=3"}},
		{"args", c.Args, []string{"/bin/true"}},
		{"memory", c.GetLinux().GetResources().GetMemory().GetLimit().GetValue(), int64(42)},
	} {
		if !equal(tc.got, tc.want) {
			t.Errorf("%s: got %v, want %v", tc.what, tc.got, tc.want)
		}
	}
}

func TestApplyUpdates(t *testing.T) {
	r := &Runtime{ctrs: map[string]*api.Container{}}
	running := NewContainer("pod", "running")
	stopped := NewContainer("pod", "stopped")
	stopped.State = api.ContainerState_CONTAINER_STOPPED
	r.ctrs[running.Id], r.ctrs[stopped.Id] = running, stopped

	update := func(id string, ignore bool) *api.ContainerUpdate {
		return &api.ContainerUpdate{ContainerId: id, IgnoreFailure: ignore,
			Linux: &api.LinuxContainerUpdate{Resources: MemoryResources(7)}}
	}
	failed := r.applyUpdatesLocked([]*api.ContainerUpdate{
		update("running", false), update("stopped", false), update("missing", false), update("gone", true),
	})

	var ids []string
	for _, f := range failed {
		ids = append(ids, f.ContainerId)
	}
	if !slices.Equal(ids, []string{"stopped", "missing"}) {
		t.Errorf("failed updates: got %v, want [stopped missing]", ids)
	}
	if got := running.GetLinux().GetResources().GetMemory().GetLimit().GetValue(); got != 7 {
		t.Errorf("running container's memory limit: got %d, want 7", got)
	}
}

func TestStampedLeavesStateAlone(t *testing.T) {
	pod, ctr := NewPod("pod"), NewContainer("pod", "ctr")
	p, c := stamped(12, pod, ctr)
	if SeqOf(p.Annotations) != 12 || SeqOf(c.Annotations) != 12 {
		t.Fatalf("stamped copies: pod %v, container %v", p.Annotations, c.Annotations)
	}
	if _, ok := pod.Annotations[SeqAnnotation]; ok {
		t.Error("pod state was stamped")
	}
	if _, ok := ctr.Annotations[SeqAnnotation]; ok {
		t.Error("container state was stamped")
	}
}

func equal(a, b any) bool {
	as, aok := a.([]string)
	bs, bok := b.([]string)
	if aok && bok {
		return slices.Equal(as, bs)
	}
	return a == b
}
