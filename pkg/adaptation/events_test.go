package adaptation

import (
	"context"
	"slices"
	"sync"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/nri-handover/nri/api"
)

type deprecations struct {
	mu   sync.Mutex
	seen []string
}

func (d *deprecations) PluginWarning(_ context.Context, dep Deprecation, plugin, _ string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.seen = append(d.seen, plugin+":"+dep.String())
}

func TestEventTableCoversEveryEvent(t *testing.T) {
	for e := api.Event_UNKNOWN + 1; e < api.Event_LAST; e++ {
		if _, ok := eventTable[e]; !ok {
			t.Errorf("no relay for %s", e.PrettyName())
		}
	}
}

// A plugin predating the dedicated RPCs gets the event through StateChange,
// and only the first attempt pays for the dedicated call.
func TestStateChangeFallbackForOldPlugins(t *testing.T) {
	rt := newFakeRuntime()
	dep := &deprecations{}
	r, sock := startRuntime(t, rt, WithDeprecationRecorder(dep))
	defer r.Stop()

	rec := newRecorder()
	f := newFakePlugin("01", "old", nil)
	f.handle = func(_ context.Context, e api.Event, req any) (any, error) {
		if _, ok := req.(*api.StateChangeEvent); ok {
			rec.add("StateChange:" + e.PrettyName())
			return nil, nil
		}
		rec.add("dedicated:" + e.PrettyName())
		return nil, status.Error(codes.Unimplemented, "unknown method")
	}
	f.connect(t, sock)
	defer f.close()
	waitActive(t, r, "01-old")

	for range 2 {
		if err := r.StartContainer(context.Background(), &StartContainerRequest{Container: &Container{Id: "c"}}); err != nil {
			t.Fatalf("StartContainer: %v", err)
		}
	}
	want := []string{"dedicated:StartContainer", "StateChange:StartContainer", "StateChange:StartContainer"}
	if got := rec.list(); !slices.Equal(got, want) {
		t.Fatalf("plugin saw %v, want %v", got, want)
	}
	if !slices.Equal(dep.seen, []string{"01-old:deprecated StateChange"}) {
		t.Fatalf("deprecations recorded: %v", dep.seen)
	}
}
