package adaptation

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/nri-handover/nri/pkg/adaptation/builtin"
)

// startWith starts an adaptation with n pre-installed plugins (this test
// binary, see TestMain) and the builtin ones given, counting the calls of
// its SyncFn that Start makes; sync replaces the fake runtime's SyncFn.
func startWith(t *testing.T, n int, builtins []*builtin.BuiltinPlugin, sync SyncFn) (*Adaptation, int64, error) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	plugins := filepath.Join(dir, "plugins")
	if err := os.Mkdir(plugins, 0o755); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < n; i++ {
		if err := os.Symlink(exe, filepath.Join(plugins, fmt.Sprintf("%02d-launched", 10+i))); err != nil {
			t.Fatal(err)
		}
	}
	rt := newFakeRuntime()
	if sync == nil {
		sync = rt.sync
	}
	var calls atomic.Int64
	counting := func(ctx context.Context, cb SyncCB) error {
		calls.Add(1)
		return sync(ctx, cb)
	}
	r, err := New("test-runtime", "v0.0.1", counting, rt.update,
		WithPluginPath(plugins), WithPluginConfigPath(dir), WithDisabledExternalConnections(),
		WithBuiltinPlugins(builtins...))
	if err != nil {
		t.Fatal(err)
	}
	err = r.Start()
	return r, calls.Load(), err
}

// Upstream v0.12.5's Start calls SyncFn exactly once, whatever the number of
// plugins it starts, and synchronizes them all within that call.
func TestStartCallsSyncFnOnce(t *testing.T) {
	probe := &builtin.BuiltinPlugin{Base: "probe", Index: "05", Handlers: builtin.BuiltinHandlers{
		RunPodSandbox: func(context.Context, *RunPodSandboxRequest) error { return nil },
	}}
	for _, c := range []struct {
		preinstalled int
		builtins     []*builtin.BuiltinPlugin
	}{
		{0, nil},
		{1, nil},
		{3, nil},
		{0, []*builtin.BuiltinPlugin{probe}},
		{2, []*builtin.BuiltinPlugin{probe}},
	} {
		t.Run(fmt.Sprintf("%d pre-installed, %d builtin", c.preinstalled, len(c.builtins)), func(t *testing.T) {
			r, calls, err := startWith(t, c.preinstalled, c.builtins, nil)
			defer r.Stop()
			if err != nil {
				t.Fatalf("Start: %v", err)
			}
			if calls != 1 {
				t.Errorf("Start called SyncFn %d times, upstream calls it once", calls)
			}
			if got, want := len(r.reg.active()), c.preinstalled+len(c.builtins); got != want {
				t.Errorf("%d plugins active after Start, want %d", got, want)
			}
		})
	}
}

func TestStartFailsWithSyncFn(t *testing.T) {
	boom := errors.New("boom")
	r, calls, err := startWith(t, 1, nil, func(context.Context, SyncCB) error { return boom })
	defer r.Stop()
	if !errors.Is(err, boom) || !strings.Contains(err.Error(), "failed to synchronize") {
		t.Fatalf("Start: %v, want the SyncFn's error", err)
	}
	if calls != 1 {
		t.Errorf("SyncFn called %d times", calls)
	}
}

// A runtime whose SyncFn does not call back leaves the plugins started
// unsynchronized: none becomes active.
func TestStartWithSyncFnNotCallingBack(t *testing.T) {
	r, _, err := startWith(t, 1, nil, func(context.Context, SyncCB) error { return nil })
	defer r.Stop()
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	if a := r.reg.active(); len(a) != 0 {
		t.Fatalf("plugins active without synchronization: %v", a)
	}
}
