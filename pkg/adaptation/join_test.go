package adaptation

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"testing"

	"github.com/nri-handover/nri/api"
)

// A runtime that stops while it tells a joining plugin it is active tells
// the plugin RUNTIME_SHUTDOWN: the cancelled notice is not the plugin's
// failure.
func TestStopDuringActiveNoticeIsRuntimeShutdown(t *testing.T) {
	rt := newFakeRuntime()
	r, sock := startRuntime(t, rt)

	told := make(chan struct{})
	release := make(chan struct{})
	defer close(release)
	f := newFakePlugin("10", "p", nil)
	f.regReq = func(q *api.RegisterPluginRequest) {
		q.InstanceId, q.Features = "a", []string{api.FeatureHandover, api.FeatureDeltaSync}
	}
	f.roleChange = func(context.Context, *api.RoleChangeRequest) error {
		close(told)
		<-release
		return nil
	}
	f.connect(t, sock)
	defer f.close()
	receive(t, told, "the ACTIVE notice")
	r.Stop()
	req := receive(t, f.shutdowns, "shutdown")
	if req.GetReason() != api.ShutdownReason_SHUTDOWN_REASON_RUNTIME_SHUTDOWN {
		t.Fatalf("shutdown reason %v (%q), want RUNTIME_SHUTDOWN", req.GetReason(), req.GetMessage())
	}
}

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

// Issue 30 finding 6: an opted-in plugin with delta rounds joining with nobody
// serving its name joins as upstream's do: a creation that begins while it
// joins waits for it and reaches it as the event, never only as state.
func TestFreshJoinHoldsCreationsAsUpstream(t *testing.T) {
	rt := newFakeRuntime()
	pod := &api.PodSandbox{Id: "p1"}
	rt.pods = []*api.PodSandbox{pod}
	r, sock := startRuntime(t, rt)
	defer r.Stop()

	inFlight := r.BlockPluginSync()
	rec := newRecorder()
	a := handoverPlugin("10", "p", "a", 1, rec)
	configured := make(chan struct{})
	a.configure = func() { close(configured) }
	a.connect(t, sock)
	defer a.close()
	receive(t, configured, "a configured")
	eventually(t, func() bool { return r.syncGate.queued() == 1 }, "a queued for the gate")

	created := make(chan error, 1)
	go func() {
		b := r.BlockPluginSync() // waits behind a's join, as upstream's
		defer b.Unblock()
		_, err := r.CreateContainer(context.Background(), &CreateContainerRequest{Pod: pod, Container: &api.Container{Id: "c1", PodSandboxId: "p1"}})
		created <- err
	}()
	inFlight.Unblock()
	if err := receive(t, created, "the creation"); err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(rec.list(), "10-p:CreateContainer") {
		t.Fatalf("a creation begun while the plugin joined bypassed it: %v", rec.list())
	}
}
