package stub

import (
	"context"
	"testing"

	"github.com/nri-handover/nri/api"
)

// An upstream runtime stores NRI_version as the plugin's NRI release and may
// compare it with upstream's; our module's own version ("(devel)", "v0.1.0")
// would read as an ancient or invalid release.
func TestRegistrationReportsUpstreamVersion(t *testing.T) {
	s, rt := newTestStub(t, newTestPlugin())
	runStub(t, s, context.Background())

	if got := rt.awaitRegistration().GetNRIVersion(); got != api.UpstreamVersion {
		t.Errorf("RegisterPluginRequest.NRI_version %q, want %q", got, api.UpstreamVersion)
	}
	if got := s.PluginNRIVersion(); got != api.UpstreamVersion {
		t.Errorf("PluginNRIVersion %q, want %q", got, api.UpstreamVersion)
	}
}
