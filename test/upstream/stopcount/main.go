// Command stopcount is a legacy NRI plugin (it does not opt into handover)
// built on upstream containerd/nri v0.12.5's stub: it records every
// StopContainer it is relayed, and every Synchronize, one JSON line each
// (the record package), so that a suite can count the stops a runtime
// relayed to a plugin that knows nothing of handover while opted-in
// instances take over beside it (test/realcontainerd/stops.sh). It imports
// only upstream's NRI packages (never ours: both register the same protobuf
// names) and the dependency-free record package; build it with GOWORK=off.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/containerd/nri/pkg/api"
	"github.com/containerd/nri/pkg/stub"

	"github.com/nri-handover/nri/test/plugins/record"
)

type plugin struct{ rec *record.Recorder }

func (p *plugin) Synchronize(_ context.Context, pods []*api.PodSandbox, ctrs []*api.Container) ([]*api.ContainerUpdate, error) {
	p.rec.Add(record.Line{Ev: record.Synchronize, Pods: len(pods), Ctrs: len(ctrs)})
	return nil, nil
}

func (p *plugin) StopContainer(_ context.Context, pod *api.PodSandbox, ctr *api.Container) ([]*api.ContainerUpdate, error) {
	p.rec.Add(record.Line{Ev: "StopContainer", Pod: pod.GetId(), Ctr: ctr.GetId(), Detail: ctr.GetState().String()})
	return nil, nil
}

func (p *plugin) Shutdown(context.Context) { p.rec.Add(record.Line{Ev: record.Shutdown}) }

func main() {
	var socket, name, idx, recPath string
	flag.StringVar(&socket, "socket", "", "NRI socket path")
	flag.StringVar(&name, "name", "stopcount", "plugin name")
	flag.StringVar(&idx, "idx", "70", "plugin index")
	flag.StringVar(&recPath, "record", "-", "event record file")
	flag.Parse()

	rec, err := record.Open(recPath, record.Line{Name: name, Idx: idx, Instance: "upstream", Pid: os.Getpid()})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	opts := []stub.Option{stub.WithPluginName(name), stub.WithPluginIdx(idx)}
	if socket != "" {
		opts = append(opts, stub.WithSocketPath(socket))
	}
	st, err := stub.New(&plugin{rec: rec}, opts...)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)
	go func() { <-sigs; st.Stop() }()

	err = st.Run(context.Background())
	l := record.Line{Ev: record.Exit}
	if err != nil {
		l.Err = err.Error()
	}
	rec.Add(l)
}
