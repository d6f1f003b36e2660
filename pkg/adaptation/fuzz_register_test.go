package adaptation

import (
	"context"
	"io"
	"log/slog"
	"slices"
	"strings"
	"testing"

	"github.com/nri-handover/nri/api"
)

// FuzzRegisterPlugin sends arbitrary registrations to the runtime service:
// each one is accepted within the limits or refused with an error naming
// the plugin, never panics, and leaves the membership consistent (an
// accepted plugin is its slot's candidate, a refused one is in no slot, a
// displaced candidate is disconnected). flags: bit 0 asks for handover, bit 1
// for delta sync, bit 2 first places an opted-in instance of 10-p, bit 3
// sends the registration twice on one connection, bit 4 from a second
// connection too.
func FuzzRegisterPlugin(f *testing.F) {
	f.Add("p", "10", "1.0.0", "i1", "v0.12.5", "", uint64(0), uint8(0))
	f.Add("p", "10", "1.1.0", "i1", "v0.12.5", api.FeatureHandover, uint64(6), uint8(1|4))
	f.Add("p", "10", "1.1.0", "i1", "v0.12.5", api.FeatureHandover+","+api.FeatureDeltaSync, uint64(4), uint8(3|4))
	f.Add("p", "10", "1.0.0", "i0", "", api.FeatureHandover, uint64(5), uint8(1|4|16))
	f.Add("p", "10", "", "", "", "", uint64(0), uint8(4|8|16))
	f.Add("", "1", "", "", "", "", uint64(0), uint8(0))
	f.Add("a b", "xx", "", "", "", ",,,", uint64(1), uint8(1))
	f.Add(strings.Repeat("n", maxPluginNameLen+1), "10", "", "", "", "", uint64(0), uint8(0))
	f.Add("p", "10", strings.Repeat("v", maxPluginVersionLen+1), strings.Repeat("i", maxInstanceIDLen+1), "", "", uint64(0), uint8(0))
	f.Add("p", "10", "", "", "", strings.Repeat("f,", maxFeatures+1), uint64(0), uint8(0))

	f.Fuzz(func(t *testing.T, name, idx, version, instance, nriVersion, features string, gen uint64, flags uint8) {
		r, err := New("fuzz", "v0", func(context.Context, SyncCB) error { return nil },
			func(context.Context, []*ContainerUpdate) ([]*ContainerUpdate, error) { return nil, nil },
			WithLogger(NewSlogLogger(slog.New(slog.NewTextHandler(io.Discard, nil)))))
		if err != nil {
			t.Fatal(err)
		}
		defer r.Stop()

		var feats []string
		if features != "" {
			feats = strings.Split(features, ",")
		}
		if flags&1 != 0 {
			feats = append(feats, api.FeatureHandover)
		}
		if flags&2 != 0 {
			feats = append(feats, api.FeatureDeltaSync)
		}
		req := &api.RegisterPluginRequest{
			PluginName: name, PluginIdx: idx, PluginVersion: version, InstanceId: instance,
			NRIVersion: nriVersion, Generation: gen, Features: feats,
		}

		var first *plugin
		if flags&4 != 0 {
			first = fuzzRegister(t, r, &api.RegisterPluginRequest{
				PluginName: "p", PluginIdx: "10", PluginVersion: "1.0.0", InstanceId: "i0", Generation: 5,
				Features: []string{api.FeatureHandover},
			})
			if first.slot == nil {
				t.Fatal("the first instance of 10-p was not placed")
			}
		}
		p := fuzzRegister(t, r, req)
		if p.slot != nil && first != nil && first.slot == p.slot && first.slot.candidate != first && !first.isClosed() {
			t.Fatalf("candidate %s displaced by %s but not disconnected", first.describe(), p.describe())
		}
		if flags&8 != 0 {
			if _, err := (&runtimeService{p: p}).RegisterPlugin(context.Background(), req); err == nil {
				t.Fatal("a second registration on one connection was accepted")
			}
		}
		if flags&16 != 0 {
			fuzzRegister(t, r, req)
		}
	})
}

// fuzzRegister registers req on a new connection without transport and
// checks the outcome against the limits and the membership.
func fuzzRegister(t *testing.T, r *Adaptation, req *api.RegisterPluginRequest) *plugin {
	t.Helper()
	p := r.newPlugin(kindExternal)
	if err := r.reg.track(p); err != nil {
		t.Fatal(err)
	}
	rpl, err := (&runtimeService{p: p}).RegisterPlugin(context.Background(), req)
	r.reg.mu.Lock()
	defer r.reg.mu.Unlock()
	if err != nil {
		if rpl != nil {
			t.Fatalf("refused with a reply: %v", err)
		}
		if !strings.Contains(err.Error(), "plugin") {
			t.Fatalf("refusal does not say what was refused: %q", err)
		}
		if p.slot != nil {
			t.Fatalf("refused plugin placed in a slot: %v", err)
		}
		return p
	}
	switch {
	case api.CheckPluginName(req.GetPluginName()) != nil, api.CheckPluginIndex(req.GetPluginIdx()) != nil:
		t.Fatalf("accepted invalid name %q or index %q", req.GetPluginName(), req.GetPluginIdx())
	case checkRegistration(req) != nil:
		t.Fatalf("accepted beyond the limits: %v", checkRegistration(req))
	case p.slot == nil || p.slot.candidate != p:
		t.Fatal("accepted plugin is not its slot's candidate")
	case p.handsOver() && !slices.Contains(r.reg.named[p.base], p.slot):
		t.Fatal("an opted-in plugin is not in the shared slot of its name")
	}
	return p
}
