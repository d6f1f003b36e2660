package adaptation

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
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

// The takeover log line names the predecessor by what is known of it, never
// by empty quotes.
func TestTakeoverLineLeavesOutWhatIsUnknown(t *testing.T) {
	g := testRegistry(handoverPolicy{})
	p := g.optedIn("10", "p", "b", 2, "v2")
	for _, tc := range []struct {
		t    *api.Takeover
		want string
	}{
		{&api.Takeover{PredecessorGeneration: 1}, "generation 1"},
		{&api.Takeover{PredecessorInstance: "a"}, "instance a"},
		{&api.Takeover{PredecessorVersion: "v1", PredecessorInstance: "a", PredecessorGeneration: 1}, "version v1 instance a generation 1"},
	} {
		if got := joinOf(g, p).describeTakeover(tc.t); got != tc.want {
			t.Errorf("takeover from %v described as %q, want %q", tc.t, got, tc.want)
		}
	}
}

// repeatedPhrase returns a run of three words line says twice, or "".
func repeatedPhrase(line string) string {
	w := strings.Fields(line)
	seen := map[string]bool{}
	for i := 0; i+3 <= len(w); i++ {
		phrase := strings.Join(w[i:i+3], " ")
		if seen[phrase] {
			return phrase
		}
		seen[phrase] = true
	}
	return ""
}

// The takeover line says where each instance runs once, for every pair of
// places (the author-walk's "outside any pod from no pod the runtime
// verified" said outside twice, the second time unclearly).
func TestTakeoverLineSaysEachPlaceOnce(t *testing.T) {
	podA := func(p *plugin) *plugin { return inPod(p, "kube-system", "p-a", "p", 1) }
	podB := func(p *plugin) *plugin { return inPod(p, "kube-system", "p-b", "p", 2) }
	unplaced := func(p *plugin) *plugin { return p }
	for _, tc := range []struct {
		name       string
		pred, succ func(*plugin) *plugin
		want       string
	}{
		{"both outside", onHost, onHost, "version v1 instance a generation 1, both outside any pod"},
		{"both in pods", podA, podB, "version v1 instance a generation 1, moving from pod kube-system/p-a (template generation 1) to pod kube-system/p-b (template generation 2)"},
		{"same pod", podA, podA, "version v1 instance a generation 1, both in pod kube-system/p-a (template generation 1)"},
		{"into a pod", onHost, podB, "version v1 instance a generation 1, moving from outside any pod to pod kube-system/p-b (template generation 2)"},
		{"out of a pod", podA, onHost, "version v1 instance a generation 1, moving from pod kube-system/p-a (template generation 1) to outside any pod"},
		{"predecessor unplaced", unplaced, onHost, "version v1 instance a generation 1, itself outside any pod"},
		{"successor unplaced", onHost, unplaced, "version v1 instance a generation 1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := testRegistry(handoverPolicy{})
			a := tc.pred(g.optedIn("10", "p", "a", 1, "v1"))
			place(t, g, a)
			g.switchNow(t, a)
			b := tc.succ(g.optedIn("10", "p", "b", 2, "v2"))
			place(t, g, b)
			got := joinOf(g, b).describeTakeover(joinOf(g, b).takeoverFrom())
			if got != tc.want {
				t.Errorf("takeover described as %q, want %q", got, tc.want)
			}
			if r := repeatedPhrase(got); r != "" {
				t.Errorf("%q says %q twice", got, r)
			}
			if strings.Contains(got, "no pod") {
				t.Errorf("%q says outside a second time", got)
			}
		})
	}
}
