// Command runtime is a tiny in-memory container runtime on upstream
// containerd/nri v0.12.5's adaptation, for the compatibility matrix: our
// stub's plugins must register, synchronize and adjust containers against it.
//
// It is driven over stdin/stdout, one command per line and one JSON reply per
// line (see reply). Commands:
//
//	run-pod POD
//	create POD CTR     reply carries the merged adjustment (protojson)
//	start CTR
//	quit               stops the adaptation and exits
//
// Flags seed the state (-pods, -containers-per-pod, -pad), point the
// adaptation at pre-installed plugins (-plugin-dir, -plugin-config-dir) and
// set its request timeout (-request-timeout).
//
// It imports only upstream's NRI packages, never ours.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"strings"
	"sync"

	nri "github.com/containerd/nri/pkg/adaptation"
	"google.golang.org/protobuf/encoding/protojson"
)

// reply is one line of output.
type reply struct {
	OK     bool            `json:"ok"`
	Err    string          `json:"err,omitempty"`
	Ready  string          `json:"ready,omitempty"`
	Adjust json.RawMessage `json:"adjust,omitempty"`
}

type runtime struct {
	mu   sync.Mutex
	nri  *nri.Adaptation
	pods map[string]*nri.PodSandbox
	ctrs map[string]*nri.Container
}

func (r *runtime) snapshot() ([]*nri.PodSandbox, []*nri.Container) {
	r.mu.Lock()
	defer r.mu.Unlock()
	var pods []*nri.PodSandbox
	var ctrs []*nri.Container
	for _, p := range r.pods {
		pods = append(pods, p)
	}
	for _, c := range r.ctrs {
		ctrs = append(ctrs, c)
	}
	return pods, ctrs
}

func (r *runtime) sync(ctx context.Context, cb nri.SyncCB) error {
	pods, ctrs := r.snapshot()
	_, err := cb(ctx, pods, ctrs)
	return err
}

func (r *runtime) update(_ context.Context, _ []*nri.ContainerUpdate) ([]*nri.ContainerUpdate, error) {
	return nil, nil
}

func (r *runtime) do(ctx context.Context, fields []string) reply {
	blk := r.nri.BlockPluginSync()
	defer blk.Unblock()
	switch {
	case fields[0] == "run-pod" && len(fields) == 2:
		pod := &nri.PodSandbox{Id: fields[1], Name: fields[1], Uid: "uid-" + fields[1], Namespace: "default"}
		r.mu.Lock()
		r.pods[pod.Id] = pod
		r.mu.Unlock()
		if err := r.nri.RunPodSandbox(ctx, &nri.RunPodSandboxRequest{Pod: pod}); err != nil {
			return reply{Err: err.Error()}
		}
		return reply{OK: true}
	case fields[0] == "create" && len(fields) == 3:
		r.mu.Lock()
		pod, ok := r.pods[fields[1]]
		r.mu.Unlock()
		if !ok {
			return reply{Err: "unknown pod " + fields[1]}
		}
		ctr := &nri.Container{Id: fields[2], PodSandboxId: pod.Id, Name: fields[2], State: nri.ContainerState_CONTAINER_CREATED}
		rpl, err := r.nri.CreateContainer(ctx, &nri.CreateContainerRequest{Pod: pod, Container: ctr})
		if err != nil {
			return reply{Err: err.Error()}
		}
		r.mu.Lock()
		r.ctrs[ctr.Id] = ctr
		r.mu.Unlock()
		buf, err := protojson.Marshal(rpl.GetAdjust())
		if err != nil {
			return reply{Err: err.Error()}
		}
		return reply{OK: true, Adjust: buf}
	case fields[0] == "start" && len(fields) == 2:
		r.mu.Lock()
		ctr, ok := r.ctrs[fields[1]]
		pod := r.pods[ctr.GetPodSandboxId()]
		r.mu.Unlock()
		if !ok {
			return reply{Err: "unknown container " + fields[1]}
		}
		if err := r.nri.StartContainer(ctx, &nri.StartContainerRequest{Pod: pod, Container: ctr}); err != nil {
			return reply{Err: err.Error()}
		}
		return reply{OK: true}
	}
	return reply{Err: fmt.Sprintf("bad command %q", strings.Join(fields, " "))}
}

func main() {
	var (
		socket     = flag.String("socket", "", "NRI socket path")
		pods       = flag.Int("pods", 0, "pods to hold before any plugin connects")
		ctrsPerPod = flag.Int("containers-per-pod", 0, "containers per seeded pod")
		pad        = flag.Int("pad", 0, "bytes of annotation per seeded container (to grow the snapshot)")
		pluginDir  = flag.String("plugin-dir", "", "directory of pre-installed plugins")
		confDir    = flag.String("plugin-config-dir", "", "directory of pre-installed plugins' configuration")
		reqTimeout = flag.Duration("request-timeout", 0, "plugin request timeout (0: upstream's default)")
	)
	flag.Parse()
	if *reqTimeout != 0 {
		nri.SetPluginRequestTimeout(*reqTimeout)
	}

	out := json.NewEncoder(os.Stdout)
	fail := func(err error) {
		_ = out.Encode(reply{Err: err.Error()})
		os.Exit(1)
	}

	r := &runtime{pods: map[string]*nri.PodSandbox{}, ctrs: map[string]*nri.Container{}}
	for i := 0; i < *pods; i++ {
		pod := &nri.PodSandbox{Id: fmt.Sprintf("seed-pod-%d", i), Name: fmt.Sprintf("seed-pod-%d", i), Namespace: "default"}
		r.pods[pod.Id] = pod
		for j := 0; j < *ctrsPerPod; j++ {
			id := fmt.Sprintf("seed-ctr-%d-%d", i, j)
			c := &nri.Container{Id: id, PodSandboxId: pod.Id, Name: id, State: nri.ContainerState_CONTAINER_RUNNING}
			if *pad > 0 {
				c.Annotations = map[string]string{"pad.example/filler": strings.Repeat("x", *pad)}
			}
			r.ctrs[id] = c
		}
	}

	dir, err := os.MkdirTemp("/tmp", "nriup")
	if err != nil {
		fail(err)
	}
	defer os.RemoveAll(dir)
	if *pluginDir == "" {
		*pluginDir = dir + "/plugins"
	}
	if *confDir == "" {
		*confDir = dir + "/conf"
	}
	r.nri, err = nri.New("upstream-runtime", "v0.12.5", r.sync, r.update,
		nri.WithSocketPath(*socket),
		nri.WithPluginPath(*pluginDir),
		nri.WithPluginConfigPath(*confDir),
	)
	if err != nil {
		fail(err)
	}
	if err := r.nri.Start(); err != nil {
		fail(err)
	}
	_ = out.Encode(reply{OK: true, Ready: *socket})

	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		fields := strings.Fields(in.Text())
		if len(fields) == 0 {
			continue
		}
		if fields[0] == "quit" {
			break
		}
		_ = out.Encode(r.do(context.Background(), fields))
	}
	r.nri.Stop()
	_ = out.Encode(reply{OK: true})
}
