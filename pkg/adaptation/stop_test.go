package adaptation

import (
	"context"
	"testing"

	"go.uber.org/goleak"

	"github.com/nri-handover/nri/api"
)

// TestStopLeavesLegacyExternalConnected: Stop leaves an external plugin that
// did not opt into handover in the state upstream v0.12.5's Stop leaves it
// (stopPlugins returns early for external plugins): its connection open and
// served, no Shutdown, and no more events. An opted-in plugin beside it is
// told RUNTIME_SHUTDOWN and closed. Once the legacy plugin hangs up, nothing
// of its connection is left running.
func TestStopLeavesLegacyExternalConnected(t *testing.T) {
	before := goleak.IgnoreCurrent()
	rt := newFakeRuntime()
	r, sock := startRuntime(t, rt)
	stopped := false
	t.Cleanup(func() {
		if !stopped {
			r.Stop()
		}
	})

	rec := newRecorder()
	legacy := newFakePlugin("10", "legacy", rec)
	legacy.connect(t, sock)
	t.Cleanup(legacy.close)
	opted := newFakePlugin("20", "opted", nil)
	opted.regReq = func(q *api.RegisterPluginRequest) { q.Features = []string{api.FeatureHandover} }
	opted.connect(t, sock)
	t.Cleanup(opted.close)
	waitActive(t, r, "10-legacy", "20-opted")

	r.Stop()
	stopped = true

	receive(t, opted.lost, "the runtime closing the opted-in plugin's connection")
	select {
	case req := <-opted.shutdowns:
		if req.GetReason() != api.ShutdownReason_SHUTDOWN_REASON_RUNTIME_SHUTDOWN {
			t.Fatalf("opted-in plugin told %v (%q), want RUNTIME_SHUTDOWN", req.GetReason(), req.GetMessage())
		}
	default:
		t.Fatal("opted-in plugin closed without Shutdown(RUNTIME_SHUTDOWN)")
	}

	// The legacy plugin's connection is open and its runtime service
	// answers: a round trip on it after Stop returned.
	if _, err := legacy.runtime.UpdateContainers(context.Background(), &api.UpdateContainersRequest{}); err != nil {
		t.Fatalf("legacy plugin's connection after Stop: %v", err)
	}
	select {
	case <-legacy.lost:
		t.Fatal("Stop closed the connection of an external plugin that did not opt in; upstream leaves it open")
	default:
	}
	select {
	case req := <-legacy.shutdowns:
		t.Fatalf("legacy plugin sent Shutdown(%v, %q); upstream sends none", req.GetReason(), req.GetMessage())
	default:
	}
	// No more events reach it, as upstream forgets every plugin on Stop.
	_ = r.RunPodSandbox(context.Background(), &RunPodSandboxRequest{Pod: &PodSandbox{Id: "pod"}})
	if got := rec.list(); len(got) != 0 {
		t.Fatalf("legacy plugin received %v after Stop", got)
	}
	// Deviation (keptOnStop): its updates no longer reach the runtime.
	if _, err := legacy.runtime.UpdateContainers(context.Background(), &api.UpdateContainersRequest{
		Update: []*api.ContainerUpdate{{ContainerId: "ctr"}},
	}); err == nil {
		t.Fatal("container updates accepted after Stop")
	}
	select {
	case u := <-rt.updates:
		t.Fatalf("UpdateFn called after Stop with %v", u)
	default:
	}

	// The plugin hangs up: the runtime side of its connection goes too.
	legacy.close()
	eventually(t, func() bool { return len(r.reg.tracked()) == 0 }, "the legacy plugin torn down")
	opted.close()
	goleak.VerifyNone(t, before)
}
