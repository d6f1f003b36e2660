package adaptation

import (
	"testing"

	"github.com/nri-handover/nri/api"
)

// Plugins on upstream's stub store NRI_version as the runtime's NRI release
// and compare it with upstream's release numbers.
func TestPluginsSeeUpstreamVersion(t *testing.T) {
	rt := newFakeRuntime()
	r, sock := startRuntime(t, rt)
	defer r.Stop()

	f := newFakePlugin("10", "version", newRecorder())
	f.connect(t, sock)
	defer f.close()
	receive(t, f.synced, "synchronize of "+f.id())

	f.mu.Lock()
	cfg, reg := f.cfgReq, f.regRpl
	f.mu.Unlock()
	if got := reg.GetNRIVersion(); got != api.UpstreamVersion {
		t.Errorf("RegisterPluginResponse.NRI_version %q, want %q", got, api.UpstreamVersion)
	}
	if got := cfg.GetNRIVersion(); got != api.UpstreamVersion {
		t.Errorf("ConfigureRequest.NRI_version %q, want %q", got, api.UpstreamVersion)
	}
}
