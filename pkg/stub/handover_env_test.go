package stub

import (
	"context"
	"testing"
)

// A plugin that did not opt in ignores the handover environment, as
// upstream's stub does: no error, and nothing of it on the wire.
func TestHandoverEnvIgnoredWithoutOptIn(t *testing.T) {
	t.Setenv(GenerationEnvVar, "abc")
	t.Setenv(InstanceIDEnvVar, "pod-uid-1")
	t.Setenv(HandoverEnvVar, "maybe")

	s, rt := newTestStub(t, newTestPlugin())
	if s.InstanceID() != "" || s.Generation() != 0 {
		t.Errorf("instance %q generation %d taken from the environment", s.InstanceID(), s.Generation())
	}
	runStub(t, s, context.Background())
	req := rt.awaitRegistration()
	if req.GetInstanceId() != "" || req.GetGeneration() != 0 || len(req.GetFeatures()) != 0 {
		t.Errorf("registered with instance %q generation %d features %v", req.GetInstanceId(), req.GetGeneration(), req.GetFeatures())
	}
}

// With WithHandover the environment is the default, options win over it, and
// a bad value is an error naming the variable and what it wants.
func TestHandoverEnvWithOptIn(t *testing.T) {
	cases := []struct {
		name, gen, id string
		killSwitch    string
		opts          []Option
		wantGen       uint64
		wantID        string
		wantErr       string
	}{
		{name: "environment", gen: "5", id: "uid-env", wantGen: 5, wantID: "uid-env"},
		{name: "options win", gen: "5", id: "uid-env", opts: []Option{WithGeneration(3), WithInstanceID("uid-opt")}, wantGen: 3, wantID: "uid-opt"},
		{name: "option wins over a bad value", gen: "abc", opts: []Option{WithGeneration(3)}, wantGen: 3},
		{name: "bad generation", gen: "abc",
			wantErr: `$NRI_PLUGIN_GENERATION="abc": want the rollout generation, a whole number (0 or more), or unset`},
		{name: "bad kill switch", gen: "5", killSwitch: "maybe", wantErr: `$NRI_PLUGIN_HANDOVER="maybe": want on/off`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv(GenerationEnvVar, tc.gen)
			t.Setenv(InstanceIDEnvVar, tc.id)
			t.Setenv(HandoverEnvVar, tc.killSwitch)
			opts := append([]Option{WithPluginName("p"), WithPluginIdx("10"), quiet, WithHandover()}, tc.opts...)
			s, ok := newOrWantErr(t, tc.wantErr, newTestPlugin(), opts...)
			if !ok {
				return
			}
			if s.Generation() != tc.wantGen || s.InstanceID() != tc.wantID {
				t.Errorf("generation %d instance %q, want %d %q", s.Generation(), s.InstanceID(), tc.wantGen, tc.wantID)
			}
		})
	}
}
