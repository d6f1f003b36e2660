// The half migration: this module's pkg/stub next to upstream's pkg/api.
package main

import (
	"context"
	"fmt"
	"os"

	upstreamapi "github.com/containerd/nri/pkg/api"
	"github.com/nri-handover/nri/api"
	"github.com/nri-handover/nri/pkg/stub"
)

type plugin struct{}

func (plugin) CreateContainer(context.Context, *api.PodSandbox, *api.Container) (*api.ContainerAdjustment, []*api.ContainerUpdate, error) {
	return nil, nil, nil
}

func main() {
	if _, err := stub.New(plugin{}, stub.WithPluginName("mixed"), stub.WithPluginIdx("50"), stub.WithHandover()); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Println("started with", upstreamapi.DefaultSocketPath)
}
