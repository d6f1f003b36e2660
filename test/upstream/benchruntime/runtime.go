package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	nri "github.com/containerd/nri/pkg/adaptation"

	"github.com/nri-handover/nri/test/bench/loadgen"
)

// runtime holds pods and containers and upstream's adaptation; it mirrors
// test/bench/ournri line for line.
type runtime struct {
	nri *nri.Adaptation
	dir string

	mu   sync.Mutex
	pods map[string]*nri.PodSandbox
	ctrs map[string]*nri.Container
	pod  *nri.PodSandbox
	// notified is the container Notify relays StartContainer for.
	notified *nri.Container
}

var _ loadgen.Factory = newRuntime

func newRuntime(cfg loadgen.Config) (loadgen.Harness, error) {
	if cfg.FanOut {
		return nil, fmt.Errorf("notification fan-out: %w", loadgen.ErrUnsupported)
	}
	r := &runtime{pods: map[string]*nri.PodSandbox{}, ctrs: map[string]*nri.Container{}}
	seed(cfg.Containers, func(p *nri.PodSandbox) { r.pods[p.Id] = p }, func(c *nri.Container) { r.ctrs[c.Id] = c })
	r.pod = newPod("bench-ops")
	r.pods[r.pod.Id] = r.pod
	r.notified = newContainer(r.pod.Id, "notified", nri.ContainerState_CONTAINER_RUNNING)
	r.ctrs[r.notified.Id] = r.notified

	// Generous timeouts on both sides: a plugin synchronizing 50 000
	// containers on a busy 2-core machine can take longer than the default
	// 2 s request timeout, and a benchmark measures, it does not time out.
	nri.SetPluginRegistrationTimeout(loadgen.PluginTimeout)
	nri.SetPluginRequestTimeout(loadgen.PluginTimeout)

	dir, err := os.MkdirTemp("", "nribench-upstream")
	if err != nil {
		return nil, err
	}
	r.dir = dir
	r.nri, err = nri.New("bench-runtime", "v0.0.0", r.sync, r.update,
		nri.WithSocketPath(cfg.Socket),
		nri.WithPluginPath(filepath.Join(dir, "plugins")),
		nri.WithPluginConfigPath(filepath.Join(dir, "conf")),
	)
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	return r, nil
}

func (r *runtime) Start() error { return r.nri.Start() }

func (r *runtime) Stop() {
	r.nri.Stop()
	os.RemoveAll(r.dir)
}

func (r *runtime) Op(ctx context.Context, i int) (map[string]string, error) {
	blk := r.nri.BlockPluginSync()
	defer blk.Unblock()
	ctr := newContainer(r.pod.Id, fmt.Sprintf("op-%d", i), nri.ContainerState_CONTAINER_CREATED)
	rpl, err := r.nri.CreateContainer(ctx, &nri.CreateContainerRequest{Pod: r.pod, Container: ctr})
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
	ctr.State = nri.ContainerState_CONTAINER_RUNNING
	r.mu.Unlock()
	if err := r.nri.StartContainer(ctx, &nri.StartContainerRequest{Pod: r.pod, Container: ctr}); err != nil {
		return nil, err
	}
	return rpl.GetAdjust().GetAnnotations(), nil
}

// Notify relays StartContainer for a container the runtime holds, with
// plugin sync blocked.
func (r *runtime) Notify(ctx context.Context, _ int) error {
	blk := r.nri.BlockPluginSync()
	defer blk.Unblock()
	return r.nri.StartContainer(ctx, &nri.StartContainerRequest{Pod: r.pod, Container: r.notified})
}

// BlockUnblock takes and releases a BlockPluginSync hold.
func (r *runtime) BlockUnblock() { r.nri.BlockPluginSync().Unblock() }

// Hold takes a BlockPluginSync hold until release, as a graceful stop does.
func (r *runtime) Hold() (release func()) { return r.nri.BlockPluginSync().Unblock }

func (r *runtime) sync(ctx context.Context, cb nri.SyncCB) error {
	r.mu.Lock()
	pods := make([]*nri.PodSandbox, 0, len(r.pods))
	for _, p := range r.pods {
		pods = append(pods, p)
	}
	ctrs := make([]*nri.Container, 0, len(r.ctrs))
	for _, c := range r.ctrs {
		ctrs = append(ctrs, c)
	}
	// The objects are the runtime's own: it holds its lock while the
	// adaptation reads them, as containerd holds its own inside SyncFn.
	_, err := cb(ctx, pods, ctrs)
	r.mu.Unlock()
	return err
}

func (r *runtime) update(context.Context, []*nri.ContainerUpdate) ([]*nri.ContainerUpdate, error) {
	return nil, nil
}

func seed(n int, addPod func(*nri.PodSandbox), addCtr func(*nri.Container)) {
	var pod *nri.PodSandbox
	for i := 0; i < n; i++ {
		if i%10 == 0 {
			pod = newPod(fmt.Sprintf("pod-%d", i/10))
			addPod(pod)
		}
		addCtr(newContainer(pod.Id, fmt.Sprintf("ctr-%d", i), nri.ContainerState_CONTAINER_RUNNING))
	}
}

func newPod(id string) *nri.PodSandbox {
	return &nri.PodSandbox{
		Id: id, Name: id, Uid: "uid-" + id, Namespace: "bench",
		Labels:      map[string]string{"app": "bench", "pod": id},
		Annotations: map[string]string{"kubernetes.io/config.source": "api"},
	}
}

func newContainer(pod, id string, state nri.ContainerState) *nri.Container {
	return &nri.Container{
		Id: id, PodSandboxId: pod, Name: id, State: state,
		Labels:      map[string]string{"io.kubernetes.container.name": id, "app": "bench"},
		Annotations: map[string]string{"io.kubernetes.container.hash": "0123abcd", "bench": "yes"},
		Args:        []string{"/bin/app", "--serve", "--port=8080"},
		Env:         []string{"PATH=/usr/bin:/bin", "HOME=/root", "POD=" + pod},
		Mounts: []*nri.Mount{
			{Destination: "/etc/hosts", Type: "bind", Source: "/var/lib/pods/" + pod + "/hosts", Options: []string{"rbind", "ro"}},
		},
	}
}
