package stub_test

import (
	"context"
	"errors"
	"log"
	"net/http"

	"github.com/nri-handover/nri/api"
	"github.com/nri-handover/nri/pkg/stub"
)

type examplePlugin struct{}

func (examplePlugin) Synchronize(ctx context.Context, pods []*api.PodSandbox, ctrs []*api.Container) ([]*api.ContainerUpdate, error) {
	if info, ok := stub.SyncInfoFrom(ctx); ok && info.Takeover != nil {
		log.Printf("taking over from version %s", info.Takeover.GetPredecessorVersion())
	}
	return nil, nil
}

func (examplePlugin) CreateContainer(ctx context.Context, pod *api.PodSandbox, ctr *api.Container) (*api.ContainerAdjustment, []*api.ContainerUpdate, error) {
	return &api.ContainerAdjustment{Annotations: map[string]string{"example": "yes"}}, nil, nil
}

// Example is a plugin that is safe to roll out with surge: WithHandover is
// the one option that makes a new instance take over from the running one
// (without it the stub behaves as upstream's, and both instances get every
// event). The /readyz handler is the pod's readinessProbe.
func Example() {
	s, err := stub.NewHandoverStub(examplePlugin{},
		stub.WithPluginName("example"),
		stub.WithPluginIdx("50"),
		stub.WithHandover(),
	)
	if err != nil {
		log.Fatal(err)
	}
	go func() { _ = http.ListenAndServe(":8080", s.ReadyzHandler()) }()

	err = s.Run(context.Background())
	var sd *stub.ShutdownError
	switch {
	case errors.Is(err, stub.ErrSuperseded) && errors.As(err, &sd):
		log.Printf("replaced by version %s", sd.SuccessorVersion)
	case err != nil:
		log.Fatal(err)
	}
}
