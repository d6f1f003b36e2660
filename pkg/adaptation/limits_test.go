package adaptation

import (
	"context"
	"encoding/binary"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/nri-handover/nri/api"
)

// Oversized registrations are refused with a clear error and the plugin is
// told why (issue 10 finding 8: 10 KiB names and 1 MiB versions were kept).
// A registration larger than the pre-registration frame limit (a 1 MiB
// version) does not get that far: TestLargeFrameBeforeRegistration.
func TestRegistrationLimits(t *testing.T) {
	r, sock := startRuntime(t, newFakeRuntime())
	defer r.Stop()
	big := func(n int) string { return strings.Repeat("x", n) }
	for _, tc := range []struct {
		name string
		req  *api.RegisterPluginRequest
		want string
	}{
		{"name", &api.RegisterPluginRequest{PluginName: big(10 << 10), PluginIdx: "10"}, "plugin name is 10240 bytes, limit 128"},
		{"version", &api.RegisterPluginRequest{PluginName: "p", PluginIdx: "10", PluginVersion: big(10 << 10)}, "version is 10240 bytes, limit 256"},
		{"NRI version", &api.RegisterPluginRequest{PluginName: "p", PluginIdx: "10", NRIVersion: big(257)}, "NRI version is 257 bytes"},
		{"instance id", &api.RegisterPluginRequest{PluginName: "p", PluginIdx: "10", InstanceId: big(300)}, "instance id is 300 bytes, limit 256"},
		{"feature count", &api.RegisterPluginRequest{PluginName: "p", PluginIdx: "10", Features: make([]string, 33)}, "33 features, limit 32"},
		{"feature length", &api.RegisterPluginRequest{PluginName: "p", PluginIdx: "10", Features: []string{big(65)}}, "a feature name is 65 bytes, limit 64"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFakePlugin("10", "p", nil)
			f.dial(t, sock)
			defer f.close()
			_, err := f.runtime.RegisterPlugin(context.Background(), tc.req)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("registration error %v, want one containing %q", err, tc.want)
			}
			req := receive(t, f.shutdowns, "shutdown notice")
			if req.GetReason() != api.ShutdownReason_SHUTDOWN_REASON_REGISTRATION_REJECTED || !strings.Contains(req.GetMessage(), tc.want) {
				t.Fatalf("shutdown %v %q, want REGISTRATION_REJECTED naming %q", req.GetReason(), req.GetMessage(), tc.want)
			}
		})
	}

	t.Run("at the limits", func(t *testing.T) {
		f := newFakePlugin("10", big(maxPluginNameLen), nil)
		f.dial(t, sock)
		defer f.close()
		features := make([]string, maxFeatures)
		for i := range features {
			features[i] = big(maxFeatureLen)
		}
		_, err := f.runtime.RegisterPlugin(context.Background(), &api.RegisterPluginRequest{
			PluginName: f.name, PluginIdx: "10", PluginVersion: big(maxVersionLen), NRIVersion: big(maxVersionLen),
			InstanceId: big(maxInstanceIDLen), Features: features,
		})
		if err != nil {
			t.Fatalf("registration at the limits refused: %v", err)
		}
	})
}

// A connection that has not registered may not make the runtime allocate
// large frames: declaring a 4 MiB frame before registering closes it
// (issue 10 finding 8: 32 such connections cost 131 MiB until the
// registration timeout).
func TestLargeFrameBeforeRegistration(t *testing.T) {
	// The connection must be closed for the frame, not at the timeout.
	withTimeouts(t, time.Hour, DefaultPluginRequestTimeout)
	r, sock := startRuntime(t, newFakeRuntime())
	defer r.Stop()
	conn, err := net.Dial("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	var hdr [8]byte
	binary.BigEndian.PutUint32(hdr[0:4], 2) // the runtime service
	binary.BigEndian.PutUint32(hdr[4:8], 4<<20)
	if _, err := conn.Write(hdr[:]); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { _, err := io.Copy(io.Discard, conn); done <- err }()
	if err := receive(t, done, "the runtime closing the connection"); err != nil {
		t.Fatalf("reading until the runtime hung up: %v", err)
	}
}
