// Command runtime is the test runtime of the third-party differential
// (test/thirdparty): it starts an NRI adaptation on a socket with the
// plugins pre-installed in -plugin-dir (launched by the adaptation, as a
// runtime launches /opt/nri/plugins), takes every pod and container of the
// -scenario file through its whole lifecycle, and writes what the plugins
// answered, as JSON, to -out.
//
// It is written against upstream containerd/nri's Go API only. Built in this
// module it links upstream v0.12.5 (go.mod's pin); built in a workspace with
// containerd-nri (the stand-in) it links this repository's NRI: the same
// source, two implementations.
//
// The scenario is {"pods": [PodSandbox...], "containers": [Container...]},
// each object in the protobuf JSON mapping of NRI's api. For each pod in
// order: RunPodSandbox, UpdatePodSandbox (when "podUpdate" gives resources),
// PostUpdatePodSandbox, then for each of its containers CreateContainer,
// PostCreateContainer, StartContainer, PostStartContainer, UpdateContainer
// (with the container's own resources, or "update"'s), PostUpdateContainer,
// StopContainer, RemoveContainer; then StopPodSandbox, RemovePodSandbox.
// Each step is one record: the operation, its subject, the reply (protobuf
// JSON, re-encoded with sorted keys) or the error's text.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"sync"

	nri "github.com/containerd/nri/pkg/adaptation"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
)

type scenario struct {
	Pods       []json.RawMessage `json:"pods"`
	Containers []json.RawMessage `json:"containers"`
	// Update, when set, is the LinuxResources UpdateContainer asks for.
	Update json.RawMessage `json:"update,omitempty"`
	// PodUpdate, when set, is the LinuxResources UpdatePodSandbox asks for.
	PodUpdate json.RawMessage `json:"podUpdate,omitempty"`
}

// Record is one step's outcome.
type Record struct {
	Op    string          `json:"op"`
	Of    string          `json:"of,omitempty"`
	Reply json.RawMessage `json:"reply,omitempty"`
	Err   string          `json:"err,omitempty"`
}

type runtime struct {
	started bool          // Start returned: later syncs are external plugins'
	syncs   int           // SyncFn calls, for the record of Start's
	synced  chan struct{} // one value per external plugin synchronized
	mu      sync.Mutex
	pods    []*nri.PodSandbox
	ctrs    []*nri.Container
	records []Record
}

func (r *runtime) add(op, of string, reply proto.Message, err error) {
	rec := Record{Op: op, Of: of}
	if err != nil {
		rec.Err = err.Error()
	}
	if reply != nil {
		rec.Reply = normal(reply)
	}
	r.mu.Lock()
	r.records = append(r.records, rec)
	r.mu.Unlock()
}

// normal is m's protobuf JSON with sorted keys and no random spacing.
func normal(m proto.Message) json.RawMessage {
	buf, err := protojson.Marshal(m)
	if err != nil {
		return json.RawMessage(fmt.Sprintf("%q", "marshal: "+err.Error()))
	}
	var v any
	if err := json.Unmarshal(buf, &v); err != nil {
		return json.RawMessage(fmt.Sprintf("%q", "unmarshal: "+err.Error()))
	}
	out, _ := json.Marshal(v)
	return out
}

func (r *runtime) sync(ctx context.Context, cb nri.SyncCB) error {
	r.mu.Lock()
	pods, ctrs, started := r.pods, r.ctrs, r.started
	r.syncs++
	r.mu.Unlock()
	updates, err := cb(ctx, pods, ctrs)
	for _, u := range updates {
		r.add("Synchronize.update", u.GetContainerId(), u, nil)
	}
	if err != nil {
		r.add("Synchronize", "", nil, err)
	}
	if started {
		r.synced <- struct{}{}
	}
	return nil
}

func (r *runtime) update(_ context.Context, updates []*nri.ContainerUpdate) ([]*nri.ContainerUpdate, error) {
	for _, u := range updates {
		r.add("UpdateContainers", u.GetContainerId(), u, nil)
	}
	return nil, nil
}

func fail(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "runtime: "+format+"\n", args...)
	os.Exit(1)
}

func main() {
	socket := flag.String("socket", "", "NRI socket to serve")
	pluginDir := flag.String("plugin-dir", "", "pre-installed plugins")
	configDir := flag.String("plugin-config-dir", "", "their configuration")
	scenarioFile := flag.String("scenario", "", "scenario (JSON)")
	outFile := flag.String("out", "", "where the records go (JSON)")
	launch := flag.String("launch", "", "an executable that connects plugins to -socket, started after the adaptation")
	external := flag.Int("external", 0, "how many plugins -launch connects: the scenario starts once they are synchronized")
	flag.Parse()

	buf, err := os.ReadFile(*scenarioFile)
	if err != nil {
		fail("%v", err)
	}
	sc := scenario{}
	if err := json.Unmarshal(buf, &sc); err != nil {
		fail("scenario: %v", err)
	}
	var pods []*nri.PodSandbox
	for _, raw := range sc.Pods {
		p := &nri.PodSandbox{}
		if err := protojson.Unmarshal(raw, p); err != nil {
			fail("pod: %v", err)
		}
		pods = append(pods, p)
	}
	var ctrs []*nri.Container
	for _, raw := range sc.Containers {
		c := &nri.Container{}
		if err := protojson.Unmarshal(raw, c); err != nil {
			fail("container: %v", err)
		}
		ctrs = append(ctrs, c)
	}
	resources := func(raw json.RawMessage) *nri.LinuxResources {
		if raw == nil {
			return nil
		}
		res := &nri.LinuxResources{}
		if err := protojson.Unmarshal(raw, res); err != nil {
			fail("resources: %v", err)
		}
		return res
	}
	update, podUpdate := resources(sc.Update), resources(sc.PodUpdate)

	r := &runtime{synced: make(chan struct{}, 64)}
	a, err := nri.New("thirdparty-runtime", "v0.0.1", r.sync, r.update,
		nri.WithSocketPath(*socket), nri.WithPluginPath(*pluginDir), nri.WithPluginConfigPath(*configDir))
	if err != nil {
		fail("new: %v", err)
	}
	// Start launches the pre-installed plugins and returns once they are
	// registered and synchronized (with nothing: no pod exists yet).
	if err := a.Start(); err != nil {
		fail("start: %v", err)
	}

	r.mu.Lock()
	r.started = true
	syncs := r.syncs
	r.mu.Unlock()
	// How often Start called SyncFn is part of what the cells compare
	// (upstream: once, whatever the number of pre-installed plugins).
	r.add("Start", fmt.Sprintf("SyncFn called %d times", syncs), nil, nil)
	var launched *exec.Cmd
	var exited chan error
	if *launch != "" {
		launched = exec.Command(*launch)
		launched.Stdout, launched.Stderr = os.Stderr, os.Stderr
		if err := launched.Start(); err != nil {
			fail("launch: %v", err)
		}
		exited = make(chan error, 1)
		go func() { exited <- launched.Wait() }()
		for i := 0; i < *external; i++ {
			select {
			case <-r.synced:
			case err := <-exited:
				fail("launched client exited before %d plugin(s) synchronized (%d did): %v", *external, i, err)
			}
		}
		// A plugin joins the adaptation after its synchronization returns;
		// blocking plugin sync waits for that to finish.
		a.BlockPluginSync().Unblock()
	}

	ctx := context.Background()
	for _, pod := range pods {
		r.mu.Lock()
		r.pods = append(r.pods, pod)
		r.mu.Unlock()
		r.add("RunPodSandbox", pod.Id, nil, a.RunPodSandbox(ctx, &nri.RunPodSandboxRequest{Pod: pod}))
		if podUpdate != nil {
			rep, err := a.UpdatePodSandbox(ctx, &nri.UpdatePodSandboxRequest{Pod: pod, OverheadLinuxResources: podUpdate, LinuxResources: podUpdate})
			r.add("UpdatePodSandbox", pod.Id, rep, err)
			r.add("PostUpdatePodSandbox", pod.Id, nil, a.PostUpdatePodSandbox(ctx, &nri.PostUpdatePodSandboxRequest{Pod: pod}))
		}
		for _, ctr := range ctrs {
			if ctr.PodSandboxId != pod.Id {
				continue
			}
			rep, err := a.CreateContainer(ctx, &nri.CreateContainerRequest{Pod: pod, Container: ctr})
			r.add("CreateContainer", ctr.Id, rep, err)
			if err != nil {
				continue
			}
			r.mu.Lock()
			r.ctrs = append(r.ctrs, ctr)
			r.mu.Unlock()
			ctr.State = nri.ContainerState_CONTAINER_CREATED
			r.add("PostCreateContainer", ctr.Id, nil, a.PostCreateContainer(ctx, &nri.PostCreateContainerRequest{Pod: pod, Container: ctr}))
			ctr.State = nri.ContainerState_CONTAINER_RUNNING
			r.add("StartContainer", ctr.Id, nil, a.StartContainer(ctx, &nri.StartContainerRequest{Pod: pod, Container: ctr}))
			r.add("PostStartContainer", ctr.Id, nil, a.PostStartContainer(ctx, &nri.PostStartContainerRequest{Pod: pod, Container: ctr}))
			res := update
			if res == nil {
				res = ctr.GetLinux().GetResources()
			}
			urep, err := a.UpdateContainer(ctx, &nri.UpdateContainerRequest{Pod: pod, Container: ctr, LinuxResources: res})
			r.add("UpdateContainer", ctr.Id, urep, err)
			r.add("PostUpdateContainer", ctr.Id, nil, a.PostUpdateContainer(ctx, &nri.PostUpdateContainerRequest{Pod: pod, Container: ctr}))
			srep, err := a.StopContainer(ctx, &nri.StopContainerRequest{Pod: pod, Container: ctr})
			r.add("StopContainer", ctr.Id, srep, err)
			ctr.State = nri.ContainerState_CONTAINER_STOPPED
			r.add("RemoveContainer", ctr.Id, nil, a.RemoveContainer(ctx, &nri.RemoveContainerRequest{Pod: pod, Container: ctr}))
		}
		r.add("StopPodSandbox", pod.Id, nil, a.StopPodSandbox(ctx, &nri.StopPodSandboxRequest{Pod: pod}))
		r.add("RemovePodSandbox", pod.Id, nil, a.RemovePodSandbox(ctx, &nri.RemovePodSandboxRequest{Pod: pod}))
	}
	a.Stop()
	if launched != nil {
		// Not every client exits when its connection goes (differ does
		// not): the runtime that started it ends it.
		_ = launched.Process.Kill()
		<-exited
	}

	r.mu.Lock()
	out, err := json.MarshalIndent(r.records, "", "  ")
	r.mu.Unlock()
	if err != nil {
		fail("%v", err)
	}
	if err := os.WriteFile(*outFile, append(out, '\n'), 0o644); err != nil {
		fail("%v", err)
	}
}
