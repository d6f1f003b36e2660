package adaptation

import (
	"context"
	"net"
	"os"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/nri-handover/nri/api"
)

func TestMain(m *testing.M) {
	// The test binary doubles as a pre-installed plugin when launched by an
	// adaptation under test.
	if os.Getenv(api.PluginSocketEnvVar) != "" {
		os.Exit(runLaunchedFake())
	}
	goleak.VerifyTestMain(m)
}

// runLaunchedFake registers over the inherited socket and serves until the
// runtime closes the connection.
func runLaunchedFake() int {
	conn, err := net.FileConn(os.NewFile(3, "nri-socket"))
	if err != nil {
		return 1
	}
	f := newFakePlugin(os.Getenv(api.PluginIdxEnvVar), os.Getenv(api.PluginNameEnvVar), nil)
	f.attach(&testing.T{}, conn)
	if err := f.register(context.Background()); err != nil {
		return 2
	}
	<-f.lost
	f.close()
	return 0
}

// eventually polls cond until it holds, failing the test after a generous
// bound. It synchronises on state, not on elapsed time.
func eventually(t testing.TB, cond func() bool, what string) {
	t.Helper()
	deadline := time.After(20 * time.Second)
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		select {
		case <-tick.C:
		case <-deadline:
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// receive waits for a value from ch, failing the test after a generous bound.
func receive[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(20 * time.Second):
		t.Fatalf("timed out waiting for %s", what)
	}
	var zero T
	return zero
}

// withTimeouts sets the process-wide plugin timeouts for one test.
func withTimeouts(t *testing.T, registration, request time.Duration) {
	t.Helper()
	SetPluginRegistrationTimeout(registration)
	SetPluginRequestTimeout(request)
	t.Cleanup(func() {
		SetPluginRegistrationTimeout(DefaultPluginRegistrationTimeout)
		SetPluginRequestTimeout(DefaultPluginRequestTimeout)
	})
}
