package stub

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/nri-handover/nri/api"
	"github.com/nri-handover/nri/pkg/adaptation"
)

// repeated returns a phrase an error message says twice ("a: a: b", or the
// plugin's name twice), or "".
func repeated(msg string) string {
	seen := map[string]bool{}
	for _, part := range strings.Split(msg, ": ") {
		part = strings.TrimSpace(part)
		if len(part) < 4 {
			continue
		}
		if seen[part] {
			return part
		}
		seen[part] = true
	}
	return ""
}

// TestErrorsSayEachThingOnce walks the stub's option errors and fails on a
// message that repeats a prefix or phrase; both kinds of bad index read the
// same.
func TestErrorsSayEachThingOnce(t *testing.T) {
	cases := []struct {
		name string
		env  string
		opts []Option
	}{
		{"index too long", "", []Option{WithPluginName("p"), WithPluginIdx("100")}},
		{"index not digits", "", []Option{WithPluginName("p"), WithPluginIdx("ab")}},
		{"bad name", "", []Option{WithPluginName("my plugin"), WithPluginIdx("10")}},
		{"bad kill switch", "maybe", []Option{WithPluginName("p"), WithPluginIdx("10"), WithHandover()}},
		{"nil logger", "", []Option{WithPluginName("p"), WithPluginIdx("10"), WithLogger(nil)}},
	}
	var indexMsgs []string
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv(HandoverEnvVar, tc.env)
			_, err := New(newTestPlugin(), tc.opts...)
			if err == nil {
				t.Fatal("no error")
			}
			if r := repeated(err.Error()); r != "" {
				t.Errorf("%q says %q twice", err, r)
			}
			if strings.Count(err.Error(), "invalid stub option") > 1 {
				t.Errorf("%q repeats its prefix", err)
			}
			if strings.HasPrefix(tc.name, "index") {
				_, after, _ := strings.Cut(err.Error(), "invalid plugin index ")
				_, why, _ := strings.Cut(after, ": ")
				indexMsgs = append(indexMsgs, why)
			}
		})
	}
	if len(indexMsgs) == 2 && indexMsgs[0] != indexMsgs[1] {
		t.Errorf("two wordings for a bad index: %q and %q", indexMsgs[0], indexMsgs[1])
	}
}

// syncingPlugin fails its Synchronize with err, if set.
type syncingPlugin struct{ err error }

func (p syncingPlugin) Synchronize(context.Context, []*api.PodSandbox, []*api.Container) ([]*api.ContainerUpdate, error) {
	return nil, p.err
}

func (p syncingPlugin) CreateContainer(context.Context, *api.PodSandbox, *api.Container) (*api.ContainerAdjustment, []*api.ContainerUpdate, error) {
	return nil, nil, nil
}

// sayOnce fails if msg repeats a ": " part, names plugin ("plugin NN-name")
// more than once, or says a reason's key word twice.
func sayOnce(t *testing.T, what, msg, plugin string) {
	t.Helper()
	if r := repeated(msg); r != "" {
		t.Errorf("%s %q says %q twice", what, msg, r)
	}
	if n := strings.Count(msg, "plugin "+plugin); n > 1 {
		t.Errorf("%s %q names plugin %s %d times", what, msg, plugin, n)
	}
	for _, key := range []string{"supersed", "registration", "synchroni", "reject"} {
		if n := strings.Count(strings.ToLower(msg), key); n > 1 {
			t.Errorf("%s %q says %q %d times", what, msg, key, n)
		}
	}
}

// runtimeLog keeps what the runtime logged.
type runtimeLog struct{ lineRecorder }

// matching returns the lines containing sub.
func (l *lineRecorder) matching(sub string) []string {
	var out []string
	for _, line := range l.all() {
		if strings.Contains(line, sub) {
			out = append(out, line)
		}
	}
	return out
}

func (l *lineRecorder) all() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.lines)
}

// TestFailuresSayEachThingOnce walks registration and synchronization
// failures as a plugin sees them (Start's and Run's errors, the stub's log)
// and as the runtime logs them, and a superseded instance's notices, against
// the real runtime: each says each thing once, and the runtime logs one
// refusal once.
func TestFailuresSayEachThingOnce(t *testing.T) {
	t.Setenv(HandoverEnvVar, "")
	dir := t.TempDir()
	sock := filepath.Join(dir, "nri.sock")
	rlog := &runtimeLog{}
	r, err := adaptation.New("rt", "v1",
		func(ctx context.Context, cb adaptation.SyncCB) error { _, err := cb(ctx, nil, nil); return err },
		func(context.Context, []*api.ContainerUpdate) ([]*api.ContainerUpdate, error) { return nil, nil },
		adaptation.WithSocketPath(sock), adaptation.WithLogger(rlog),
		adaptation.WithPluginPath(filepath.Join(dir, "none")), adaptation.WithPluginConfigPath(filepath.Join(dir, "none")),
		adaptation.WithWorkloadIdentity(false))
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.Stop)

	type inst struct {
		s   HandoverStub
		log *lineRecorder
	}
	stubFor := func(p Plugin, opts ...Option) inst {
		log := &lineRecorder{}
		s, err := NewHandoverStub(p, append([]Option{WithPluginName("p"), WithPluginIdx("10"), WithSocketPath(sock), WithLogger(log)}, opts...)...)
		if err != nil {
			t.Fatal(err)
		}
		return inst{s, log}
	}
	start := func(p Plugin, opts ...Option) (inst, error) {
		in := stubFor(p, opts...)
		return in, in.s.Start(context.Background())
	}
	const name = "10-p"

	a := stubFor(syncingPlugin{}, WithHandover(), WithInstanceID("a"), WithGeneration(2), WithPluginVersion("v2"), WithExitOnSuperseded())
	runErr := make(chan error, 1)
	go func() { runErr <- a.s.Run(context.Background()) }()
	if err := a.s.WaitReady(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer a.s.Stop()

	t.Run("registration refused, opted in", func(t *testing.T) {
		b, err := start(syncingPlugin{}, WithHandover(), WithInstanceID("b"), WithGeneration(1), WithPluginVersion("v1"))
		if !errors.Is(err, ErrRegistrationRejected) {
			t.Fatalf("Start: %v, want a registration rejected", err)
		}
		sayOnce(t, "Start's error", err.Error(), name)
		for _, l := range b.log.all() {
			sayOnce(t, "stub log line", l, name)
		}
		if n := len(rlog.matching("instance b generation 1 is older")); n != 1 {
			t.Errorf("the runtime logged the refusal %d times, want once: %s", n, rlog.String())
		}
	})
	t.Run("registration refused, not opted in", func(t *testing.T) {
		c, err := start(syncingPlugin{})
		if err == nil {
			t.Fatal("a plugin without handover registered beside the opted-in holder of its name")
		}
		sayOnce(t, "Start's error", err.Error(), name)
		for _, l := range c.log.all() {
			sayOnce(t, "stub log line", l, name)
		}
		if n := len(rlog.matching("may not run beside")); n != 1 {
			t.Errorf("the runtime logged the refusal %d times, want once: %s", n, rlog.String())
		}
	})
	t.Run("synchronization failed", func(t *testing.T) {
		d := stubFor(syncingPlugin{err: errors.New("no state directory")}, WithHandover(), WithInstanceID("d"), WithGeneration(3), WithPluginVersion("v3"))
		err := d.s.Run(context.Background())
		if !errors.Is(err, ErrSynchronizationFailed) {
			t.Fatalf("Run: %v, want a synchronization failure", err)
		}
		sayOnce(t, "Run's error", err.Error(), name)
		for _, l := range d.log.all() {
			sayOnce(t, "stub log line", l, name)
		}
		if n := len(rlog.matching("no state directory")); n != 1 {
			t.Errorf("the runtime logged the failure %d times, want once: %s", n, rlog.String())
		}
	})
	t.Run("superseded", func(t *testing.T) {
		e, err := start(syncingPlugin{}, WithHandover(), WithInstanceID("e"), WithGeneration(4), WithPluginVersion("v4"))
		if err != nil {
			t.Fatal(err)
		}
		defer e.s.Stop()
		err = <-runErr // WithExitOnSuperseded
		if !errors.Is(err, ErrSuperseded) {
			t.Fatalf("Run: %v, want superseded", err)
		}
		sayOnce(t, "Run's error", err.Error(), name)
		for _, l := range a.log.all() {
			sayOnce(t, "stub log line", l, name)
		}
		for _, l := range rlog.matching("instance a") {
			sayOnce(t, "runtime log line", l, name)
		}
	})
}
