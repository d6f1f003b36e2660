package adaptation

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"testing"

	"github.com/nri-handover/nri/api"
)

// Plugins joining while the runtime keeps creating pods must see every pod
// exactly once: in their synchronization snapshot or as an event, never both
// and never neither.
func TestJoiningPluginsSeeEveryPodExactlyOnce(t *testing.T) {
	rt := newFakeRuntime()
	r, sock := startRuntime(t, rt)
	defer r.Stop()

	const (
		nPlugins = 6
		nPods    = 300
	)

	type seen struct {
		mu   sync.Mutex
		pods map[string]int
	}
	plugins := make([]*fakePlugin, nPlugins)
	views := make([]*seen, nPlugins)
	for i := range plugins {
		v := &seen{pods: map[string]int{}}
		f := newFakePlugin(fmt.Sprintf("%02d", i), fmt.Sprintf("joiner%d", i), nil)
		f.handle = func(_ context.Context, e api.Event, req any) (any, error) {
			if rr, ok := req.(*api.RunPodSandboxRequest); ok {
				v.mu.Lock()
				v.pods[rr.GetPod().GetId()]++
				v.mu.Unlock()
			}
			return nil, nil
		}
		plugins[i], views[i] = f, v
	}

	var wg sync.WaitGroup
	spawn(&wg, func() {
		for i := range nPods {
			block := r.BlockPluginSync()
			pod := &api.PodSandbox{Id: "pod-" + strconv.Itoa(i)}
			rt.mu.Lock()
			rt.pods = append(rt.pods, pod)
			rt.mu.Unlock()
			if err := r.RunPodSandbox(context.Background(), &RunPodSandboxRequest{Pod: pod}); err != nil {
				t.Errorf("RunPodSandbox: %v", err)
			}
			block.Unblock()
		}
	})
	for _, f := range plugins {
		spawn(&wg, func() { f.connect(t, sock) })
	}
	wg.Wait()
	for _, f := range plugins {
		defer f.close()
		receive(t, f.synced, "synchronization of "+f.id())
	}

	for i, f := range plugins {
		f.mu.Lock()
		for _, s := range f.syncs {
			for _, pod := range s.Pods {
				views[i].pods[pod.GetId()]++
			}
		}
		f.mu.Unlock()
		for n := range nPods {
			id := "pod-" + strconv.Itoa(n)
			if c := views[i].pods[id]; c != 1 {
				t.Errorf("plugin %s saw %s %d times", f.id(), id, c)
			}
		}
	}
}
