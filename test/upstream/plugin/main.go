// Command plugin is an NRI plugin built on upstream containerd/nri v0.12.5's
// stub, for the compatibility matrix: it must register, synchronize and
// adjust containers against our adaptation. It imports only upstream's NRI
// packages (never ours: both register the same protobuf names) and the
// dependency-free record package.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/containerd/nri/pkg/api"
	"github.com/containerd/nri/pkg/stub"

	"github.com/nri-handover/nri/test/plugins/record"
)

type plugin struct {
	// dieInSync exits the process inside Synchronize, before replying: a
	// plugin lost mid-synchronization (test/legacyhandover).
	dieInSync bool
	rec       *record.Recorder
	annotate  map[string]string
	env       map[string]string
	memory    int64
}

func (p *plugin) Synchronize(_ context.Context, pods []*api.PodSandbox, ctrs []*api.Container) ([]*api.ContainerUpdate, error) {
	p.rec.Add(record.Line{Ev: record.Synchronize, Pods: len(pods), Ctrs: len(ctrs)})
	if p.dieInSync {
		os.Exit(3)
	}
	return nil, nil
}

func (p *plugin) Shutdown(context.Context) {
	p.rec.Add(record.Line{Ev: record.Shutdown})
}

func (p *plugin) RunPodSandbox(_ context.Context, pod *api.PodSandbox) error {
	p.rec.Add(record.Line{Ev: "RunPodSandbox", Pod: pod.GetId(), Seq: record.SeqOf(pod.GetAnnotations())})
	return nil
}

func (p *plugin) CreateContainer(_ context.Context, pod *api.PodSandbox, ctr *api.Container) (*api.ContainerAdjustment, []*api.ContainerUpdate, error) {
	p.rec.Add(record.Line{Ev: "CreateContainer", Pod: pod.GetId(), Ctr: ctr.GetId(), Seq: record.SeqOf(ctr.GetAnnotations())})
	adj := &api.ContainerAdjustment{}
	for k, v := range p.annotate {
		adj.AddAnnotation(k, v)
	}
	for k, v := range p.env {
		adj.AddEnv(k, v)
	}
	if p.memory != 0 {
		adj.SetLinuxMemoryLimit(p.memory)
	}
	return adj, nil, nil
}

func (p *plugin) StartContainer(_ context.Context, pod *api.PodSandbox, ctr *api.Container) error {
	p.rec.Add(record.Line{Ev: "StartContainer", Pod: pod.GetId(), Ctr: ctr.GetId(), Seq: record.SeqOf(ctr.GetAnnotations())})
	return nil
}

func main() {
	var (
		socket, name, idx, recPath string
		memory                     int64
		dieInSync                  bool
		annotate                   = map[string]string{}
		env                        = map[string]string{}
	)
	flag.StringVar(&socket, "socket", "", "NRI socket path")
	flag.StringVar(&name, "name", "", "plugin name (default: environment, as for pre-installed plugins)")
	flag.StringVar(&idx, "idx", "", "plugin index (default: environment)")
	flag.StringVar(&recPath, "record", "-", "event record file")
	flag.Int64Var(&memory, "memory-limit", 0, "memory limit to set in CreateContainer")
	flag.BoolVar(&dieInSync, "die-in-synchronize", false, "exit inside Synchronize, before replying")
	flag.Func("annotate", "key=value annotation to add in CreateContainer", func(s string) error {
		k, v, ok := strings.Cut(s, "=")
		if !ok {
			return fmt.Errorf("want key=value, got %q", s)
		}
		annotate[k] = v
		return nil
	})
	flag.Func("env", "key=value environment variable to add in CreateContainer (Docker Engine takes no annotation)", func(s string) error {
		k, v, ok := strings.Cut(s, "=")
		if !ok {
			return fmt.Errorf("want key=value, got %q", s)
		}
		env[k] = v
		return nil
	})
	flag.Parse()

	rec, err := record.Open(recPath, record.Line{
		Name: os.Getenv(api.PluginNameEnvVar), Idx: os.Getenv(api.PluginIdxEnvVar), Instance: "upstream", Pid: os.Getpid(),
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	rec.SetIdentity(name, idx)
	var opts []stub.Option
	if name != "" {
		opts = append(opts, stub.WithPluginName(name))
	}
	if idx != "" {
		opts = append(opts, stub.WithPluginIdx(idx))
	}
	if socket != "" {
		opts = append(opts, stub.WithSocketPath(socket))
	}
	st, err := stub.New(&plugin{rec: rec, annotate: annotate, env: env, memory: memory, dieInSync: dieInSync}, opts...)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}

	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)
	go func() {
		<-sigs
		st.Stop()
	}()
	// SIGUSR1 sends an empty unsolicited UpdateContainers and records what
	// the runtime answered (record.Unsolicited, Detail "ok" or the error).
	usr := make(chan os.Signal, 1)
	signal.Notify(usr, syscall.SIGUSR1)
	go func() {
		for range usr {
			l := record.Line{Ev: record.Unsolicited, Detail: "ok"}
			if _, err := st.UpdateContainers([]*api.ContainerUpdate{}); err != nil {
				l.Detail = err.Error()
			}
			rec.Add(l)
		}
	}()

	err = st.Run(context.Background())
	l := record.Line{Ev: record.Exit}
	if err != nil {
		l.Err = err.Error()
	}
	rec.Add(l)
}
