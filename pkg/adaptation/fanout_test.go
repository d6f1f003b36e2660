package adaptation

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/nri-handover/nri/api"
)

// barrier lets n callers through once all n have arrived, or fails them when
// ctx ends first.
type barrier struct {
	mu      sync.Mutex
	n       int
	arrived int
	all     chan struct{}
}

func newBarrier(n int) *barrier { return &barrier{n: n, all: make(chan struct{})} }

func (b *barrier) wait(ctx context.Context) error {
	b.mu.Lock()
	if b.arrived++; b.arrived == b.n {
		close(b.all)
	}
	b.mu.Unlock()
	select {
	case <-b.all:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// With fan-out every plugin has a notification at the same time: each of
// them answers StartContainer only once all of them received it, which
// sequential relaying could never satisfy. CreateContainer stays sequential.
func TestNotificationFanOut(t *testing.T) {
	const n = 8
	for _, fanOut := range []bool{false, true} {
		t.Run(fmt.Sprintf("fan-out %v", fanOut), func(t *testing.T) {
			withTimeouts(t, DefaultPluginRegistrationTimeout, 20*time.Second)
			var opts []Option
			if fanOut {
				opts = append(opts, WithNotificationFanOut())
			}
			rt := newFakeRuntime()
			r, sock := startRuntime(t, rt, opts...)
			defer r.Stop()

			b := newBarrier(n)
			var names []string
			for i := range n {
				f := newFakePlugin(fmt.Sprintf("%02d", i), "p", nil)
				f.policy = &api.FailurePolicy{FailRequest: true, KeepConnected: true}
				f.handle = func(ctx context.Context, e api.Event, _ any) (any, error) {
					if e == api.Event_START_CONTAINER {
						return nil, b.wait(ctx)
					}
					return nil, nil
				}
				f.connect(t, sock)
				defer f.close()
				names = append(names, f.id())
			}
			waitActive(t, r, names...)
			if !fanOut {
				// The first plugin waits for the others until its request
				// times out, which fails the request: keep that short.
				SetPluginRequestTimeout(200 * time.Millisecond)
			}

			err := r.StartContainer(context.Background(), &StartContainerRequest{
				Pod: &PodSandbox{Id: "p"}, Container: &Container{Id: "c", PodSandboxId: "p"},
			})
			if fanOut && err != nil {
				t.Fatalf("StartContainer with fan-out: %v", err)
			}
			if !fanOut && err == nil {
				t.Fatal("StartContainer without fan-out got every plugin at once")
			}
		})
	}
}

// BenchmarkNotify relays StartContainer to 16 plugins that each take 200 µs
// to handle it (a plugin's own work), one after the other and fanned out.
func BenchmarkNotify(b *testing.B) {
	const plugins, work = 16, 200 * time.Microsecond
	for _, fanOut := range []bool{false, true} {
		name := "sequential"
		var opts []Option
		if fanOut {
			name, opts = "fan-out", []Option{WithNotificationFanOut()}
		}
		b.Run(fmt.Sprintf("%s/%d-plugins", name, plugins), func(b *testing.B) {
			r, sock := startRuntime(b, newFakeRuntime(), opts...)
			defer r.Stop()
			var names []string
			for i := range plugins {
				f := newFakePlugin(fmt.Sprintf("%02d", i), "p", nil)
				// The plugin's own work, modelled as latency (a benchmark
				// figure, not a synchronisation): it answers when its timer fires.
				f.handle = func(ctx context.Context, _ api.Event, _ any) (any, error) {
					timer := time.NewTimer(work)
					defer timer.Stop()
					select {
					case <-timer.C:
						return nil, nil
					case <-ctx.Done():
						return nil, ctx.Err()
					}
				}
				f.connect(b, sock)
				defer f.close()
				names = append(names, f.id())
			}
			waitActive(b, r, names...)
			req := &StartContainerRequest{Pod: &PodSandbox{Id: "p"}, Container: &Container{Id: "c", PodSandboxId: "p"}}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if err := r.StartContainer(context.Background(), req); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
