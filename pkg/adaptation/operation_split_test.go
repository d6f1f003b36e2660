package adaptation

import (
	"context"
	"slices"
	"sync"
	"testing"

	"github.com/nri-handover/nri/api"
)

// One runtime operation (between BlockPluginSync and its release) may be
// split by a takeover: the instance active when it began handles its first
// events, the successor the rest. The successor sees the operation whole:
// its takeover round holds what its predecessor was relayed, so a plugin
// that keeps state from RunPodSandbox to CreateContainer finds the pod.
// (The block itself is never waited for: containerd holds it across whole
// graceful stops.)
func TestOperationSplitByTakeoverIsWholeForTheSuccessor(t *testing.T) {
	rt := newFakeRuntime()
	r, sock := startRuntime(t, rt)
	defer r.Stop()
	rec := newRecorder()

	// known is what a plugin learned of pods: from its rounds and its
	// RunPodSandbox events, as a plugin that keeps state would.
	type knowledge struct {
		sync.Mutex
		pods           map[string]bool
		sawPodAtCreate []bool
	}
	plugin := func(id string, gen uint64) (*fakePlugin, *knowledge) {
		k := &knowledge{pods: map[string]bool{}}
		f := handoverPlugin("10", "p", id, gen, rec)
		f.onSync = func(req *api.SynchronizeRequest) {
			k.Lock()
			defer k.Unlock()
			for _, p := range req.Pods {
				k.pods[p.Id] = true
			}
		}
		f.handle = func(_ context.Context, e api.Event, req any) (any, error) {
			k.Lock()
			defer k.Unlock()
			switch e {
			case api.Event_RUN_POD_SANDBOX:
				k.pods[req.(*api.RunPodSandboxRequest).Pod.Id] = true
			case api.Event_CREATE_CONTAINER:
				k.sawPodAtCreate = append(k.sawPodAtCreate, k.pods[req.(*api.CreateContainerRequest).Pod.Id])
			}
			return nil, nil
		}
		return f, k
	}

	a, _ := plugin("a", 1)
	defer a.close()
	a.connect(t, sock)
	waitOnlyActive(t, r, "a", "the first instance")

	ctx := context.Background()
	pod := &api.PodSandbox{Id: "pod0", Name: "pod0", Uid: "uid0", Namespace: "default"}
	ctr := &api.Container{Id: "ctr0", PodSandboxId: "pod0", Name: "c0", State: api.ContainerState_CONTAINER_CREATED}

	blk := r.BlockPluginSync() // one operation: run the pod, create a container in it
	if err := r.RunPodSandbox(ctx, &api.RunPodSandboxRequest{Pod: pod}); err != nil {
		t.Fatal(err)
	}
	b, kb := plugin("b", 2)
	defer b.close()
	b.connect(t, sock) // the gate is held: b takes over from the ledger
	eventually(t, func() bool { return slices.Equal(dispatchedTo(r, "10-p"), []string{"b"}) }, "b active inside the operation")
	if _, err := r.CreateContainer(ctx, &api.CreateContainerRequest{Pod: pod, Container: ctr}); err != nil {
		t.Fatal(err)
	}
	blk.Unblock()

	got := rec.list()
	for _, want := range []string{"10-p:RunPodSandbox", "10-p:CreateContainer"} {
		if n := countOf(got, want); n != 1 {
			t.Errorf("%s handled %d times, want once (events: %v)", want, n, got)
		}
	}
	kb.Lock()
	defer kb.Unlock()
	if !slices.Equal(kb.sawPodAtCreate, []bool{true}) {
		t.Errorf("the successor's CreateContainer: pod known %v, want [true] (its round holds the pod its predecessor was relayed)", kb.sawPodAtCreate)
	}
}

func countOf(list []string, s string) int {
	n := 0
	for _, x := range list {
		if x == s {
			n++
		}
	}
	return n
}
