// Command floor is the floor of the event path with one plugin: the two
// requests our benchmark runtimes send a plugin per operation
// (CreateContainer, answered with an annotation and an environment
// variable, and StartContainer), with the same messages, over one bare ttrpc
// connection: no multiplexer, adaptation, stub or result merging.
//
//	floor events -n N [-mux]     the runtime side: starts `floor serve`, times N operations
//	floor serve -socket S [-mux] the plugin side
//
// With -mux both sides speak over our multiplexer (pkg/net/multiplex), as NRI
// plugins and runtimes do: the difference is the multiplexer's cost.
//
// It prints the runtime benchmarks' result line (loadgen.Result).
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/containerd/ttrpc"

	"github.com/nri-handover/nri/api"
	"github.com/nri-handover/nri/pkg/net/multiplex"
	"github.com/nri-handover/nri/test/bench/loadgen"
	"github.com/nri-handover/nri/test/bench/ournri"
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == "serve" {
		if err := serve(os.Args[2:]); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		return
	}
	res, err := events(os.Args[1:])
	if err != nil {
		res = &loadgen.Result{Err: err.Error()}
	}
	_ = json.NewEncoder(os.Stdout).Encode(res)
	if err != nil {
		os.Exit(1)
	}
}

// plugin answers CreateContainer as the benchmark plugins do and
// StartContainer with nothing; the other methods are never called.
type plugin struct{ api.PluginService }

func (plugin) CreateContainer(context.Context, *api.CreateContainerRequest) (*api.CreateContainerResponse, error) {
	adj := &api.ContainerAdjustment{}
	adj.AddAnnotation(loadgen.MarkKey("bench0"), "floor")
	adj.AddEnv(loadgen.EnvKey("bench0"), "floor")
	return &api.CreateContainerResponse{Adjust: adj}, nil
}

func (plugin) StartContainer(context.Context, *api.StartContainerRequest) (*api.StartContainerResponse, error) {
	return &api.StartContainerResponse{}, nil
}

func serve(args []string) error {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	socket := fs.String("socket", "", "socket to listen on")
	mux := fs.Bool("mux", false, "serve over our multiplexer")
	if err := fs.Parse(args); err != nil {
		return err
	}
	l, err := net.Listen("unix", *socket)
	if err != nil {
		return err
	}
	srv, err := ttrpc.NewServer()
	if err != nil {
		return err
	}
	api.RegisterPluginService(srv, plugin{})
	if *mux {
		c, err := l.Accept()
		if err != nil {
			return err
		}
		if l, err = multiplex.Multiplex(c).Listen(multiplex.PluginServiceConn); err != nil {
			return err
		}
	}
	// The runtime side kills this process when it is done.
	return srv.Serve(context.Background(), l)
}

func events(args []string) (*loadgen.Result, error) {
	fs := flag.NewFlagSet("events", flag.ContinueOnError)
	n := fs.Int("n", 2000, "operations to time")
	mux := fs.Bool("mux", false, "send over our multiplexer")
	if len(args) > 0 && args[0] == "events" {
		args = args[1:]
	}
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	ctx, cancel := loadgen.Context(60 * time.Second)
	defer cancel()
	dir, err := os.MkdirTemp("", "nribench-floor")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	socket := filepath.Join(dir, "floor.sock")
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(self, "serve", "-socket", socket, fmt.Sprintf("-mux=%v", *mux))
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()

	conn, err := dial(ctx, socket)
	if err != nil {
		return nil, err
	}
	if *mux {
		if conn, err = multiplex.Multiplex(conn).Open(multiplex.PluginServiceConn); err != nil {
			return nil, err
		}
	}
	client := ttrpc.NewClient(conn)
	defer client.Close()
	svc := api.NewPluginClient(client)

	pod := ournri.NewPod("bench-ops")
	op := func(ctx context.Context, i int) error {
		ctr := ournri.NewContainer(pod.Id, fmt.Sprintf("op-%d", i), api.ContainerState_CONTAINER_CREATED)
		if _, err := svc.CreateContainer(ctx, &api.CreateContainerRequest{Pod: pod, Container: ctr}); err != nil {
			return err
		}
		_, err := svc.StartContainer(ctx, &api.StartContainerRequest{Pod: pod, Container: ctr})
		return err
	}
	// warm up the connection and both sides' code paths
	for i := 0; i < loadgen.WarmupOps; i++ {
		if err := op(ctx, -1-i); err != nil {
			return nil, err
		}
	}
	d, err := loadgen.Dispatch(ctx, op, *n)
	if err != nil {
		return nil, err
	}
	return &loadgen.Result{Dispatch: d}, nil
}

// dial connects to the plugin side once it listens.
func dial(ctx context.Context, socket string) (net.Conn, error) {
	t := time.NewTicker(2 * time.Millisecond)
	defer t.Stop()
	for {
		conn, err := net.Dial("unix", socket)
		if err == nil {
			return conn, nil
		}
		select {
		case <-t.C:
		case <-ctx.Done():
			return nil, fmt.Errorf("floor plugin not listening: %w", err)
		}
	}
}
