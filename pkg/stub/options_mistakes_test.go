package stub

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/nri-handover/nri/api"
)

// WithExitOnSuperseded alone would never fire: only a plugin that opted in
// is told it was superseded. New refuses it, in either order of options it
// accepts it with WithHandover, and with handover turned off by the kill
// switch (the plugin's code is right; the operator turned it off).
func TestExitOnSupersededNeedsHandover(t *testing.T) {
	t.Setenv(HandoverEnvVar, "")
	_, err := New(newTestPlugin(), WithPluginName("p"), WithPluginIdx("10"), WithExitOnSuperseded())
	if err == nil || !strings.Contains(err.Error(), "WithExitOnSuperseded needs WithHandover") {
		t.Fatalf("New: %v, want a refusal saying WithExitOnSuperseded needs WithHandover", err)
	}
	for _, opts := range [][]Option{
		{WithHandover(), WithExitOnSuperseded()},
		{WithExitOnSuperseded(), WithHandover()},
	} {
		if _, err := New(newTestPlugin(), append([]Option{WithPluginName("p"), WithPluginIdx("10")}, opts...)...); err != nil {
			t.Fatalf("New with WithHandover: %v", err)
		}
	}
	t.Setenv(HandoverEnvVar, "off")
	if _, err := New(newTestPlugin(), WithPluginName("p"), WithPluginIdx("10"), WithHandover(), WithExitOnSuperseded()); err != nil {
		t.Fatalf("New with handover turned off: %v", err)
	}
}

// An opted-in plugin without identity is warned about, naming what to set;
// one with either is not.
func TestHandoverWithoutIdentityIsWarned(t *testing.T) {
	t.Setenv(HandoverEnvVar, "")
	t.Setenv(InstanceIDEnvVar, "")
	t.Setenv(GenerationEnvVar, "")
	for _, tc := range []struct {
		name string
		opts []Option
		warn bool
	}{
		{"no identity", nil, true},
		{"instance id", []Option{WithInstanceID("uid-1")}, false},
		{"generation", []Option{WithGeneration(3)}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			log := &lineRecorder{}
			opts := append([]Option{WithPluginName("p"), WithPluginIdx("10"), WithLogger(log), WithHandover()}, tc.opts...)
			if _, err := New(newTestPlugin(), opts...); err != nil {
				t.Fatal(err)
			}
			if got := log.has(InstanceIDEnvVar); got != tc.warn {
				t.Fatalf("warned about identity: %v, want %v; log:\n%s", got, tc.warn, log)
			}
		})
	}
}

// deltaPlugin implements delta rounds.
type deltaPlugin struct{ onlyCreate }

func (deltaPlugin) SynchronizeRound(context.Context, *SyncInfo, []*api.PodSandbox, []*api.Container) ([]*api.ContainerUpdate, error) {
	return nil, nil
}

// An opted-in plugin without delta rounds is told, in its own log, what to
// implement to be kept as a standby: once per process, at debug level (most
// runtimes keep no standby); others are not.
func TestNoDeltaRoundsHint(t *testing.T) {
	t.Setenv(HandoverEnvVar, "")
	const hint = "debug: plugin 10-p opted into handover without delta rounds, so outside a pod a runtime with " +
		"adaptation.WithStandbyGrace cannot keep it as a standby: implement stub.SynchronizeRoundInterface"
	for _, tc := range []struct {
		name   string
		p      Plugin
		opts   []Option
		hinted int // in two stubs created
	}{
		{"opted in, no delta rounds", onlyCreate{}, []Option{WithHandover(), WithInstanceID("i")}, 1},
		{"opted in, delta rounds", deltaPlugin{}, []Option{WithHandover(), WithInstanceID("i")}, 0},
		{"not opted in", onlyCreate{}, nil, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			deltaHintOnce = sync.Once{} // a process of its own
			log := &lineRecorder{}
			opts := append([]Option{WithPluginName("p"), WithPluginIdx("10"), WithLogger(log)}, tc.opts...)
			for range 2 {
				if _, err := New(tc.p, opts...); err != nil {
					t.Fatal(err)
				}
			}
			n := 0
			for _, l := range log.all() {
				if strings.Contains(l, "delta rounds") {
					n++
					if l != hint {
						t.Errorf("hint %q, want %q", l, hint)
					}
				}
			}
			if n != tc.hinted {
				t.Errorf("hinted %d times, want %d; log: %s", n, tc.hinted, log)
			}
		})
	}
}

// WithInstanceID and WithGeneration alone would be ignored (only the
// handover rules use them): New refuses them as it refuses
// WithExitOnSuperseded alone, naming the option; with WithHandover, or
// handover turned off by the kill switch, they are taken.
func TestIdentityOptionsNeedHandover(t *testing.T) {
	t.Setenv(HandoverEnvVar, "")
	for _, tc := range []struct {
		opt  Option
		name string
	}{
		{WithInstanceID("uid-1"), "WithInstanceID needs WithHandover"},
		{WithGeneration(3), "WithGeneration needs WithHandover"},
	} {
		_, err := New(newTestPlugin(), WithPluginName("p"), WithPluginIdx("10"), tc.opt)
		if err == nil || !strings.Contains(err.Error(), tc.name) {
			t.Errorf("New: %v, want a refusal saying %q", err, tc.name)
		}
		if _, err := New(newTestPlugin(), WithPluginName("p"), WithPluginIdx("10"), tc.opt, WithHandover()); err != nil {
			t.Errorf("New with WithHandover: %v", err)
		}
	}
	t.Setenv(HandoverEnvVar, "off")
	if _, err := New(newTestPlugin(), WithPluginName("p"), WithPluginIdx("10"), WithHandover(), WithInstanceID("uid-1"), WithGeneration(3)); err != nil {
		t.Fatalf("New with handover turned off: %v", err)
	}
}

// An instance id of blanks tells no instances apart: refused from the option
// and from the environment, naming where it came from.
func TestBlankInstanceIDRefused(t *testing.T) {
	t.Setenv(HandoverEnvVar, "")
	t.Setenv(InstanceIDEnvVar, "")
	_, err := New(newTestPlugin(), WithPluginName("p"), WithPluginIdx("10"), WithHandover(), WithInstanceID("  "))
	if err == nil || !strings.Contains(err.Error(), "is blank") {
		t.Errorf("WithInstanceID(\"  \"): %v, want a refusal", err)
	}
	t.Setenv(InstanceIDEnvVar, " \t")
	_, err = New(newTestPlugin(), WithPluginName("p"), WithPluginIdx("10"), WithHandover())
	if err == nil || !strings.Contains(err.Error(), "$"+InstanceIDEnvVar) || !strings.Contains(err.Error(), "is blank") {
		t.Errorf("$%s of blanks: %v, want a refusal naming it", InstanceIDEnvVar, err)
	}
}

// An instance that was active and then superseded (by a successor with
// handover turned off, which tells it no STANDBY, for one) does not go on
// reporting ACTIVE.
func TestRoleAfterSuperseded(t *testing.T) {
	p := newTestPlugin()
	s, rt := newTestStub(t, p, WithHandover())
	runStub(t, s, context.Background())
	rt.connect(true)
	if err := rt.role(api.PluginRole_PLUGIN_ROLE_ACTIVE); err != nil {
		t.Fatal(err)
	}
	recv(t, p.roleC, "role change")
	if s.Role() != api.PluginRole_PLUGIN_ROLE_ACTIVE {
		t.Fatalf("role %s before the supersession", s.Role())
	}
	supersede(t, rt)
	eventually(t, func() bool { s.mu.Lock(); defer s.mu.Unlock(); return s.cur.shutdown != nil }, "shutdown received")
	if r := s.Role(); r == api.PluginRole_PLUGIN_ROLE_ACTIVE {
		t.Errorf("role %s after the runtime said it was superseded", r)
	}
}
