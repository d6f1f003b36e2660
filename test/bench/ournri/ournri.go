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
	// notified is the container Notify relays StartContainer for.
	notified *adaptation.Container

	hmu      sync.Mutex
	handover map[string]float64
}

var _ loadgen.Factory = New

// New seeds containers (ten per pod) and creates the adaptation on socket.
func New(cfg loadgen.Config) (loadgen.Harness, error) {
	r := &Runtime{
		pods:     map[string]*adaptation.PodSandbox{},
		ctrs:     map[string]*adaptation.Container{},
		handover: map[string]float64{},
	}
	seed(cfg.Containers, func(p *adaptation.PodSandbox) { r.pods[p.Id] = p }, func(c *adaptation.Container) { r.ctrs[c.Id] = c })
	r.pod = NewPod("bench-ops")
	r.pods[r.pod.Id] = r.pod
	r.notified = NewContainer(r.pod.Id, "notified", adaptation.ContainerState_CONTAINER_RUNNING)
	r.ctrs[r.notified.Id] = r.notified

	// Generous timeouts on both sides: a plugin synchronizing 50 000
	// containers on a busy 2-core machine can take longer than the default
	// 2 s request timeout, and a benchmark measures, it does not time out.
	adaptation.SetPluginRegistrationTimeout(loadgen.PluginTimeout)
	adaptation.SetPluginRequestTimeout(loadgen.PluginTimeout)

	dir, err := os.MkdirTemp("", "nribench-ours")
	if err != nil {
		return nil, err
	}
	r.dir = dir
	opts := []adaptation.Option{
		adaptation.WithSocketPath(cfg.Socket),
		adaptation.WithPluginPath(filepath.Join(dir, "plugins")),
		adaptation.WithPluginConfigPath(filepath.Join(dir, "conf")),
		adaptation.WithMetrics(r),
		adaptation.WithLogger(quietLogger{}),
	}
	if cfg.FanOut {
		opts = append(opts, adaptation.WithNotificationFanOut())
	}
	// NRI_BENCH_HANDOVER=off: the runtime offers no handover, so it keeps
	// no ledger (what the ledger costs the event path, by hand).
	if os.Getenv("NRI_BENCH_HANDOVER") == "off" {
		opts = append(opts, adaptation.WithPluginHandover(false))
	}
	r.nri, err = adaptation.New("bench-runtime", "v0.0.0", r.sync, r.update, opts...)
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

// Op relays CreateContainer for a new container with plugin sync blocked,
// then StartContainer.
func (r *Runtime) Op(ctx context.Context, i int) (map[string]string, error) {
	blk := r.nri.BlockPluginSync()
	defer blk.Unblock()
	ctr := NewContainer(r.pod.Id, fmt.Sprintf("op-%d", i), adaptation.ContainerState_CONTAINER_CREATED)
	rpl, err := r.nri.CreateContainer(ctx, &adaptation.CreateContainerRequest{Pod: r.pod, Container: ctr})
	if err != nil {
		return nil, err
	}
	r.mu.Lock()
	r.ctrs[ctr.Id] = ctr
	r.mu.Unlock()
	blk.Unblock()
	// Started: the runtime reports the container running from here on, as
	// containerd stores a started container's status before relaying its
	// start, so that SyncFn lists what was relayed.
	r.mu.Lock()
	ctr.State = adaptation.ContainerState_CONTAINER_RUNNING
	r.mu.Unlock()
	if err := r.nri.StartContainer(ctx, &adaptation.StartContainerRequest{Pod: r.pod, Container: ctr}); err != nil {
		return nil, err
	}
	return rpl.GetAdjust().GetAnnotations(), nil
}

// Notify relays StartContainer for a container the runtime holds, with
// plugin sync blocked.
func (r *Runtime) Notify(ctx context.Context, _ int) error {
	blk := r.nri.BlockPluginSync()
	defer blk.Unblock()
	return r.nri.StartContainer(ctx, &adaptation.StartContainerRequest{Pod: r.pod, Container: r.notified})
}

// BlockUnblock takes and releases a BlockPluginSync hold.
func (r *Runtime) BlockUnblock() { r.nri.BlockPluginSync().Unblock() }

// Hold takes a BlockPluginSync hold until release, as a graceful stop does.
func (r *Runtime) Hold() (release func()) { return r.nri.BlockPluginSync().Unblock }

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
	// The objects are the runtime's own: it holds its lock while the
	// adaptation reads them, as containerd holds its own inside SyncFn.
	_, err := cb(ctx, pods, ctrs)
	r.mu.Unlock()
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
			pod = NewPod(fmt.Sprintf("pod-%d", i/10))
			addPod(pod)
		}
		addCtr(NewContainer(pod.Id, fmt.Sprintf("ctr-%d", i), adaptation.ContainerState_CONTAINER_RUNNING))
	}
}

// NewPod is a pod as the benchmark runtimes hold them.
func NewPod(id string) *adaptation.PodSandbox {
	return &adaptation.PodSandbox{
		Id: id, Name: id, Uid: "uid-" + id, Namespace: "bench",
		Labels:      map[string]string{"app": "bench", "pod": id},
		Annotations: map[string]string{"kubernetes.io/config.source": "api"},
	}
}

// NewContainer is a container as the benchmark runtimes hold them.
func NewContainer(pod, id string, state adaptation.ContainerState) *adaptation.Container {
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
