package adaptation

import (
	"context"
	"testing"

	"github.com/nri-handover/nri/api"
)

// A runtime that stops while it tells a joining plugin it is active tells
// the plugin RUNTIME_SHUTDOWN: the cancelled notice is not the plugin's
// failure.
func TestStopDuringActiveNoticeIsRuntimeShutdown(t *testing.T) {
	rt := newFakeRuntime()
	r, sock := startRuntime(t, rt)

	told := make(chan struct{})
	release := make(chan struct{})
	defer close(release)
	f := newFakePlugin("10", "p", nil)
	f.regReq = func(q *api.RegisterPluginRequest) {
		q.InstanceId, q.Features = "a", []string{api.FeatureHandover, api.FeatureDeltaSync}
	}
	f.roleChange = func(context.Context, *api.RoleChangeRequest) error {
		close(told)
		<-release
		return nil
	}
	f.connect(t, sock)
	defer f.close()
	receive(t, told, "the ACTIVE notice")
	r.Stop()
	req := receive(t, f.shutdowns, "shutdown")
	if req.GetReason() != api.ShutdownReason_SHUTDOWN_REASON_RUNTIME_SHUTDOWN {
		t.Fatalf("shutdown reason %v (%q), want RUNTIME_SHUTDOWN", req.GetReason(), req.GetMessage())
	}
}
