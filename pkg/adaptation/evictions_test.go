package adaptation

import (
	"context"
	"testing"

	"github.com/nri-handover/nri/api"
)

// A plugin asking for evictions in its CreateContainer and UpdateContainer
// replies: the runtime sees them only if it asked for them.
func TestEvictionsReachRuntimeOnlyWhenForwarded(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts []Option
		want int
	}{
		{name: "default, as upstream: dropped"},
		{name: "WithEvictionForwarding: forwarded", opts: []Option{WithEvictionForwarding()}, want: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, sock := startRuntime(t, newFakeRuntime(), tc.opts...)
			defer r.Stop()

			evict := []*api.ContainerEviction{{ContainerId: "victim", Reason: "make room"}}
			f := newFakePlugin("01", "evictor", nil)
			f.handle = func(_ context.Context, e api.Event, _ any) (any, error) {
				switch e {
				case api.Event_CREATE_CONTAINER:
					return &api.CreateContainerResponse{Evict: evict}, nil
				case api.Event_UPDATE_CONTAINER:
					return &api.UpdateContainerResponse{Evict: evict}, nil
				}
				return nil, nil
			}
			f.connect(t, sock)
			defer f.close()
			waitActive(t, r, "01-evictor")

			ctx := context.Background()
			pod := &PodSandbox{Id: "p"}
			created, err := r.CreateContainer(ctx, &CreateContainerRequest{Pod: pod, Container: &Container{Id: "c", PodSandboxId: "p"}})
			if err != nil {
				t.Fatalf("CreateContainer: %v", err)
			}
			if got := len(created.GetEvict()); got != tc.want {
				t.Errorf("CreateContainer reply carries %d evictions, want %d", got, tc.want)
			}
			updated, err := r.UpdateContainer(ctx, &UpdateContainerRequest{Pod: pod, Container: &Container{Id: "c", PodSandboxId: "p"}})
			if err != nil {
				t.Fatalf("UpdateContainer: %v", err)
			}
			if got := len(updated.GetEvict()); got != tc.want {
				t.Errorf("UpdateContainer reply carries %d evictions, want %d", got, tc.want)
			}
		})
	}
}
