package stub

import (
	"strings"
	"testing"
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
