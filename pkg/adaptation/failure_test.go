package adaptation

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/nri-handover/nri/api"
)

// Errors reach the runtime as upstream NRI v0.12.5 returns them: runtimes
// and their tests match on them.

// connectRefuser connects a plugin answering every event with err.
func connectRefuser(t *testing.T, policy *api.FailurePolicy, err error) (*Adaptation, *fakePlugin) {
	t.Helper()
	r, sock := startRuntime(t, newFakeRuntime())
	t.Cleanup(r.Stop)
	f := newFakePlugin("01", "refuser", nil)
	f.policy = policy
	f.handle = func(context.Context, api.Event, any) (any, error) { return nil, err }
	f.connect(t, sock)
	t.Cleanup(f.close)
	waitActive(t, r, "01-refuser")
	return r, f
}

// An error the plugin returns fails the request with that error, unwrapped,
// whatever the plugin's failure policy, and the plugin stays.
func TestPluginErrorReachesRuntimeUnchanged(t *testing.T) {
	for name, policy := range map[string]*api.FailurePolicy{
		"no policy":               nil,
		"fail_request":            {FailRequest: true},
		"keep_connected":          {KeepConnected: true},
		"fail_request and keep":   {FailRequest: true, KeepConnected: true},
		"proceed, drop (default)": {},
	} {
		t.Run(name, func(t *testing.T) {
			r, _ := connectRefuser(t, policy, errors.New("no such pod here"))
			err := r.StopPodSandbox(context.Background(), &StopPodSandboxRequest{Pod: &PodSandbox{Id: "p"}})
			if got := status.Convert(err); got.Code() != codes.Unknown || got.Message() != "no such pod here" {
				t.Fatalf("StopPodSandbox error %v, want the plugin's own error", err)
			}
			if strings.Contains(err.Error(), "01-refuser") {
				t.Errorf("error %q was wrapped", err)
			}
			if len(r.reg.active()) != 1 {
				t.Fatal("plugin dropped for an error it returned")
			}
		})
	}
}

// A plugin answering with a deadline status of its own has answered: that
// is its error, not a timeout of the request. It is not dropped, and the
// request does not proceed without it.
func TestPluginDeadlineStatusIsItsAnswer(t *testing.T) {
	r, f := connectRefuser(t, nil, status.Error(codes.DeadlineExceeded, "too slow"))
	err := r.RunPodSandbox(context.Background(), &RunPodSandboxRequest{Pod: &PodSandbox{Id: "p"}})
	if got := status.Convert(err); got.Code() != codes.DeadlineExceeded || got.Message() != "too slow" {
		t.Fatalf("RunPodSandbox error %v, want the plugin's own deadline status", err)
	}
	if errors.Is(err, context.DeadlineExceeded) || strings.Contains(err.Error(), "01-refuser") {
		t.Errorf("error %q was turned into a timeout of the request", err)
	}
	select {
	case req := <-f.shutdowns:
		t.Fatalf("plugin disconnected (%v) for an error it returned", req.GetReason())
	default:
	}
	if len(r.reg.active()) != 1 {
		t.Fatal("plugin dropped for an error it returned")
	}
}

// When the runtime's own deadline expires during a request, the runtime gets
// its context's error back unchanged, and the plugin, not to blame, stays,
// even with a policy that fails requests.
func TestRuntimeDeadlineIsNotAPluginFailure(t *testing.T) {
	withTimeouts(t, DefaultPluginRegistrationTimeout, time.Minute)
	r, sock := startRuntime(t, newFakeRuntime())
	defer r.Stop()
	f := newFakePlugin("01", "slow", nil)
	f.policy = &api.FailurePolicy{FailRequest: true}
	f.handle = hangOn(t, api.Event_RUN_POD_SANDBOX)
	f.connect(t, sock)
	defer f.close()
	waitActive(t, r, "01-slow")

	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	err := r.RunPodSandbox(ctx, &RunPodSandboxRequest{Pod: &PodSandbox{Id: "p"}})
	if !errors.Is(err, context.DeadlineExceeded) || err.Error() != context.DeadlineExceeded.Error() {
		t.Fatalf("RunPodSandbox error %v, want the runtime's context error unchanged", err)
	}
	if len(r.reg.active()) != 1 {
		t.Fatal("plugin dropped for the runtime's deadline")
	}
}
