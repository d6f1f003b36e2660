package stub

import (
	"context"
	"strings"
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
// implement to be kept as a standby; others are not.
func TestNoDeltaRoundsHint(t *testing.T) {
	t.Setenv(HandoverEnvVar, "")
	const hint = "info: plugin 10-p opted into handover without delta rounds, so a runtime with " +
		"adaptation.WithStandbyGrace cannot keep it as a standby: implement stub.SynchronizeRoundInterface"
	for _, tc := range []struct {
		name   string
		p      Plugin
		opts   []Option
		hinted bool
	}{
		{"opted in, no delta rounds", onlyCreate{}, []Option{WithHandover()}, true},
		{"opted in, delta rounds", deltaPlugin{}, []Option{WithHandover()}, false},
		{"not opted in", onlyCreate{}, nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			log := &lineRecorder{}
			opts := append([]Option{WithPluginName("p"), WithPluginIdx("10"), WithLogger(log), WithInstanceID("i")}, tc.opts...)
			if _, err := New(tc.p, opts...); err != nil {
				t.Fatal(err)
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
			if want := map[bool]int{true: 1, false: 0}[tc.hinted]; n != want {
				t.Errorf("hinted %d times, want %d; log: %s", n, want, log)
			}
		})
	}
}
