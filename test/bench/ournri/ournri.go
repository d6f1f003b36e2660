// Package ournri is the benchmark runtime on our adaptation: an in-memory
// container runtime that relays one CreateContainer per operation.
package ournri

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/nri-handover/nri/pkg/adaptation"
	"github.com/nri-handover/nri/test/bench/loadgen"
)

// Runtime holds pods and containers and our adaptation.
type Runtime struct {
	nri *adaptation.Adaptation
	dir string

	mu   sync.Mutex
	pods map[string]*adaptation.PodSandbox
	ctrs map[string]*adaptation.Container
	pod  *adaptation.PodSandbox // where operations create containers

	hmu      sync.Mutex
	handover map[string]float64
}

var _ loadgen.Factory = New

// New seeds containers (ten per pod) and creates the adaptation on socket.
func New(socket string, containers int) (loadgen.Harness, error) {
	r := &Runtime{
		pods:     map[string]*adaptation.PodSandbox{},
		ctrs:     map[string]*adaptation.Container{},
		handover: map[string]float64{},
	}
	seed(containers, func(p *adaptation.PodSandbox) { r.pods[p.Id] = p }, func(c *adaptation.Container) { r.ctrs[c.Id] = c })
	r.pod = newPod("bench-ops")
	r.pods[r.pod.Id] = r.pod

	dir, err := os.MkdirTemp("", "nribench-ours")
	if err != nil {
		return nil, err
	}
	r.dir = dir
	r.nri, err = adaptation.New("bench-runtime", "v0.0.0", r.sync, r.update,
		adaptation.WithSocketPath(socket),
		adaptation.WithPluginPath(filepath.Join(dir, "plugins")),
		adaptation.WithPluginConfigPath(filepath.Join(dir, "conf")),
		adaptation.WithMetrics(r),
		adaptation.WithLogger(quietLogger{}),
	)
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	return r, nil
}

// Start starts the adaptation.
func (r *Runtime) Start() error { return r.nri.Start() }

// Stop stops the adaptation.
func (r *Runtime) Stop() {
	r.nri.Stop()
	os.RemoveAll(r.dir)
}

// Op relays CreateContainer for a new container with plugin sync blocked.
func (r *Runtime) Op(ctx context.Context, i int) (map[string]string, error) {
	blk := r.nri.BlockPluginSync()
	defer blk.Unblock()
	ctr := newContainer(r.pod.Id, fmt.Sprintf("op-%d", i), adaptation.ContainerState_CONTAINER_CREATED)
	rpl, err := r.nri.CreateContainer(ctx, &adaptation.CreateContainerRequest{Pod: r.pod, Container: ctr})
	if err != nil {
		return nil, err
	}
	r.mu.Lock()
	r.ctrs[ctr.Id] = ctr
	r.mu.Unlock()
	return rpl.GetAdjust().GetAnnotations(), nil
}

func (r *Runtime) sync(ctx context.Context, cb adaptation.SyncCB) error {
	r.mu.Lock()
	pods := make([]*adaptation.PodSandbox, 0, len(r.pods))
	for _, p := range r.pods {
		pods = append(pods, p)
	}
	ctrs := make([]*adaptation.Container, 0, len(r.ctrs))
	for _, c := range r.ctrs {
		ctrs = append(ctrs, c)
	}
	r.mu.Unlock()
	_, err := cb(ctx, pods, ctrs)
	return err
}

func (r *Runtime) update(context.Context, []*adaptation.ContainerUpdate) ([]*adaptation.ContainerUpdate, error) {
	return nil, nil
}

// Extra reports the adaptation's own measurement of the last handover.
func (r *Runtime) Extra() map[string]float64 {
	r.hmu.Lock()
	defer r.hmu.Unlock()
	out := map[string]float64{}
	for k, v := range r.handover {
		out[k] = v
	}
	return out
}

// RecordHandover implements the adaptation's optional handover metrics.
func (r *Runtime) RecordHandover(_, outcome string, duration, eventWait time.Duration) {
	if outcome != "completed" {
		return
	}
	r.hmu.Lock()
	defer r.hmu.Unlock()
	r.handover["handoverMs"] = float64(duration) / float64(time.Millisecond)
	r.handover["gateHeldMs"] = float64(eventWait) / float64(time.Millisecond)
}

// The rest of the Metrics interface is not measured.
func (r *Runtime) RecordPluginInvocation(string, string, error)      {}
func (r *Runtime) RecordPluginLatency(string, string, time.Duration) {}
func (r *Runtime) RecordPluginAdjustments(string, string, *adaptation.ContainerAdjustment, int, int) {
}
func (r *Runtime) UpdatePluginCount(int) {}

type quietLogger struct{}

func (quietLogger) Debugf(context.Context, string, ...any) {}
func (quietLogger) Infof(context.Context, string, ...any)  {}
func (quietLogger) Warnf(context.Context, string, ...any)  {}
func (quietLogger) Errorf(context.Context, string, ...any) {}

// seed creates n containers in pods of ten, with the same content as the
// upstream benchmark runtime's.
func seed(n int, addPod func(*adaptation.PodSandbox), addCtr func(*adaptation.Container)) {
	var pod *adaptation.PodSandbox
	for i := 0; i < n; i++ {
		if i%10 == 0 {
			pod = newPod(fmt.Sprintf("pod-%d", i/10))
			addPod(pod)
		}
		addCtr(newContainer(pod.Id, fmt.Sprintf("ctr-%d", i), adaptation.ContainerState_CONTAINER_RUNNING))
	}
}

func newPod(id string) *adaptation.PodSandbox {
	return &adaptation.PodSandbox{
		Id: id, Name: id, Uid: "uid-" + id, Namespace: "bench",
		Labels:      map[string]string{"app": "bench", "pod": id},
		Annotations: map[string]string{"kubernetes.io/config.source": "api"},
	}
}

func newContainer(pod, id string, state adaptation.ContainerState) *adaptation.Container {
	return &adaptation.Container{
		Id: id, PodSandboxId: pod, Name: id, State: state,
		Labels:      map[string]string{"io.kubernetes.container.name": id, "app": "bench"},
		Annotations: map[string]string{"io.kubernetes.container.hash": "0123abcd", "bench": "yes"},
		Args:        []string{"/bin/app", "--serve", "--port=8080"},
		Env:         []string{"PATH=/usr/bin:/bin", "HOME=/root", "POD=" + pod},
		Mounts: []*adaptation.Mount{
			{Destination: "/etc/hosts", Type: "bind", Source: "/var/lib/pods/" + pod + "/hosts", Options: []string{"rbind", "ro"}},
		},
	}
}
