// Command patched is an NRI plugin built on upstream containerd/nri v0.12.5
// with the patches of upstream-patches/ applied (PRs a-d), for part U of
// make e2e-containerd (../patched.sh): it opts into handover the way the
// patched stub offers it (WithHandover, and ShutdownWithReasonInterface for
// the reasons), so that a surge rollout on containerd built on the same
// patched tree shows what the series alone gives.
//
// It is its own module: it imports github.com/containerd/nri, which
// patched.sh resolves to the patched tree through a go.work; built without
// one it gets the released v0.12.5, which lacks WithHandover, and fails to
// build.
//
// One line per fact, on stdout, each starting with the time (Unix seconds,
// microseconds) and the plugin's instance id:
//
//	T ID ROLE <role> peer=<instance id>      a RoleChange request
//	T ID SYNC pods=<n> containers=<n>        Synchronize, before -sync-delay
//	T ID EVENT <name> pod=<name> ctr=<name>  every pod and container event
//	T ID SHUTDOWN <reason> <message>         the runtime's Shutdown notice
//	T ID EXIT <error>                        Run returned
//
// To every container it sees created it adds the annotation
// nri-handover.test/handled-by=<instance id>, so that the script can check
// which instance adjusted it in its OCI spec.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/containerd/nri/pkg/api"
	"github.com/containerd/nri/pkg/stub"
)

const annotation = "nri-handover.test/handled-by"

func main() {
	socket := flag.String("socket", "", "the runtime's NRI socket")
	name := flag.String("name", "annotator", "plugin name")
	idx := flag.String("idx", "50", "plugin index")
	syncDelay := flag.Duration("sync-delay", 0, "time Synchronize takes, as a plugin reconciling its state would")
	flag.Parse()

	p := &plugin{id: os.Getenv(api.PluginInstanceIDEnvVar), syncDelay: *syncDelay}
	s, err := stub.New(p, stub.WithSocketPath(*socket), stub.WithPluginName(*name), stub.WithPluginIdx(*idx),
		stub.WithHandover())
	if err != nil {
		p.say("EXIT %v", err)
		os.Exit(1)
	}
	err = s.Run(context.Background())
	p.say("EXIT %v", err)
	if errors.Is(err, stub.ErrSuperseded) {
		os.Exit(0)
	}
	os.Exit(1)
}

type plugin struct {
	id        string
	syncDelay time.Duration
	mu        sync.Mutex
}

func (p *plugin) say(format string, args ...any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := time.Now()
	fmt.Printf("%d.%06d %s %s\n", now.Unix(), now.Nanosecond()/1000, p.id, fmt.Sprintf(format, args...))
}

func (p *plugin) Synchronize(_ context.Context, pods []*api.PodSandbox, ctrs []*api.Container) ([]*api.ContainerUpdate, error) {
	p.say("SYNC pods=%d containers=%d", len(pods), len(ctrs))
	time.Sleep(p.syncDelay)
	return nil, nil
}

func (p *plugin) RoleChange(_ context.Context, req *api.RoleChangeRequest) error {
	p.say("ROLE %s peer=%s", req.GetRole(), req.GetPeerInstanceId())
	return nil
}

func (p *plugin) Shutdown(_ context.Context, req *api.ShutdownRequest) {
	p.say("SHUTDOWN %s %s", req.GetReason(), req.GetMessage())
}

func (p *plugin) RunPodSandbox(_ context.Context, pod *api.PodSandbox) error {
	p.say("EVENT RunPodSandbox pod=%s ctr=-", pod.GetName())
	return nil
}

func (p *plugin) CreateContainer(_ context.Context, pod *api.PodSandbox, ctr *api.Container) (*api.ContainerAdjustment, []*api.ContainerUpdate, error) {
	p.say("EVENT CreateContainer pod=%s ctr=%s", pod.GetName(), ctr.GetName())
	adjust := &api.ContainerAdjustment{}
	adjust.AddAnnotation(annotation, p.id)
	return adjust, nil, nil
}

func (p *plugin) StartContainer(_ context.Context, pod *api.PodSandbox, ctr *api.Container) error {
	p.say("EVENT StartContainer pod=%s ctr=%s", pod.GetName(), ctr.GetName())
	return nil
}
