// A plugin written for upstream NRI that opts into handover: it imports only
// github.com/containerd/nri/..., which its go.mod points at the stand-in.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"sync"
	"syscall"

	"github.com/containerd/nri/pkg/api"
	"github.com/containerd/nri/pkg/stub"
)

type plugin struct {
	version string
	// told records the CPU shares of each container its synchronization
	// was told of, for the test to compare with the runtime's.
	told *sync.Map
}

// reconciledShares is the CPU shares the plugin keeps every container at:
// its synchronization sets them on every container it is told of.
const reconciledShares = 512

func (p plugin) Synchronize(_ context.Context, _ []*api.PodSandbox, ctrs []*api.Container) ([]*api.ContainerUpdate, error) {
	var updates []*api.ContainerUpdate
	for _, c := range ctrs {
		if p.told != nil {
			p.told.Store(c.GetId(), c.GetLinux().GetResources().GetCpu().GetShares().GetValue())
		}
		updates = append(updates, &api.ContainerUpdate{ContainerId: c.GetId(), Linux: &api.LinuxContainerUpdate{
			Resources: &api.LinuxResources{Cpu: &api.LinuxCPU{Shares: &api.OptionalUInt64{Value: reconciledShares}}}}})
	}
	return updates, nil
}

func (p plugin) CreateContainer(_ context.Context, _ *api.PodSandbox, _ *api.Container) (*api.ContainerAdjustment, []*api.ContainerUpdate, error) {
	return &api.ContainerAdjustment{Annotations: map[string]string{"handled-by": p.version}}, nil, nil
}

func (p plugin) RoleChange(_ context.Context, req *api.RoleChangeRequest) error {
	fmt.Printf("role %s\n", req.GetRole())
	return nil
}

func (p plugin) ShutdownWithReason(_ context.Context, req *api.ShutdownRequest) {
	fmt.Printf("shutdown %s\n", req.GetReason())
}

func main() {
	socket := flag.String("socket", api.DefaultSocketPath, "NRI socket")
	version := flag.String("version", "v1", "plugin version")
	instance := flag.String("instance", "", "instance id")
	generation := flag.Uint64("generation", 0, "rollout generation")
	flag.Parse()

	s, err := stub.New(plugin{version: *version}, stub.WithPluginName("myplugin"), stub.WithPluginIdx("50"),
		stub.WithSocketPath(*socket), stub.WithPluginVersion(*version), stub.WithInstanceID(*instance),
		stub.WithGeneration(*generation), stub.WithHandover())
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	defer stop()
	err = s.Run(ctx)
	var sd *stub.ShutdownError
	switch {
	case errors.As(err, &sd) && errors.Is(err, stub.ErrSuperseded):
		fmt.Printf("exit: superseded by %s\n", sd.SuccessorVersion)
	case err != nil && !errors.Is(err, context.Canceled):
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	default:
		fmt.Println("exit")
	}
}
