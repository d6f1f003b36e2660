package adaptation

import (
	"context"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/containerd/ttrpc"

	"github.com/nri-handover/nri/api"
)

// A registration beyond any limit is refused with an error that says which
// limit; one at the limits is accepted. Nothing in a request beyond the
// limits is taken as opting in, so no Shutdown tells the plugin (only the
// error does, as upstream).
func TestRegistrationLimits(t *testing.T) {
	rt := newFakeRuntime()
	r, sock := startRuntime(t, rt)
	defer r.Stop()

	long := func(n int) string { return strings.Repeat("a", n) }
	for _, c := range []struct {
		what string
		req  func(*api.RegisterPluginRequest)
		want string // "" means accepted
	}{
		{"name", func(q *api.RegisterPluginRequest) { q.PluginName = long(maxPluginNameLen + 1) }, "name of 129 bytes"},
		{"version", func(q *api.RegisterPluginRequest) { q.PluginVersion = long(10 << 10) }, "version of 10240 bytes"},
		{"NRI version", func(q *api.RegisterPluginRequest) { q.NRIVersion = long(maxPluginVersionLen + 1) }, "NRI version of 129 bytes"},
		{"instance", func(q *api.RegisterPluginRequest) { q.InstanceId = long(maxInstanceIDLen + 1) }, "instance id of 129 bytes"},
		{"features", func(q *api.RegisterPluginRequest) { q.Features = make([]string, maxFeatures+1) }, "17 features"},
		{"feature", func(q *api.RegisterPluginRequest) { q.Features = []string{long(maxFeatureLen + 1)} }, "feature of 65 bytes"},
		{"at the limits", func(q *api.RegisterPluginRequest) {
			q.PluginName, q.PluginVersion, q.InstanceId = long(maxPluginNameLen), long(maxPluginVersionLen), long(maxInstanceIDLen)
			q.Features = make([]string, maxFeatures)
		}, ""},
	} {
		t.Run(c.what, func(t *testing.T) {
			f := newFakePlugin("01", "limits", nil)
			f.regReq = c.req
			f.dial(t, sock)
			defer f.close()
			err := f.register(context.Background())
			if c.want == "" {
				if err != nil {
					t.Fatalf("registration at the limits refused: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("registration error %v, want one saying %q", err, c.want)
			}
		})
	}
}

// A peer that has not registered cannot make the runtime allocate a large
// message buffer by declaring one: the runtime drops the connection as soon
// as the header arrives, not when the registration timeout expires.
func TestUnregisteredPeerCannotDeclareLargeMessages(t *testing.T) {
	withTimeouts(t, time.Hour, DefaultPluginRequestTimeout)
	rt := newFakeRuntime()
	r, sock := startRuntime(t, rt)
	defer r.Stop()

	for _, service := range []uint32{1, 2} { // the plugin service's replies, the runtime service's requests
		conn, err := net.Dial("unix", sock)
		if err != nil {
			t.Fatal(err)
		}
		frame := make([]byte, 8+ttrpcHeaderLen)
		binary.BigEndian.PutUint32(frame[0:4], service)        // mux: connection id
		binary.BigEndian.PutUint32(frame[4:8], ttrpcHeaderLen) // mux: payload length
		binary.BigEndian.PutUint32(frame[8:12], 4<<20)         // ttrpc: message length
		binary.BigEndian.PutUint32(frame[12:16], 1)            // ttrpc: stream id
		frame[16] = 1                                          // ttrpc: request
		if _, err := conn.Write(frame); err != nil {
			t.Fatal(err)
		}
		// Bounded only so that a regression fails instead of hanging.
		_ = conn.SetReadDeadline(time.Now().Add(time.Minute))
		_, err = io.Copy(io.Discard, conn)
		conn.Close()
		if err != nil {
			t.Fatalf("conn %d: the runtime kept a connection that declared a 4 MiB message before registering: %v", service, err)
		}
	}
}

// A panic in our code handling a plugin's reply fails that request with an
// error naming the plugin; the runtime goes on.
func TestPanicWhileMergingFailsOnlyTheRequest(t *testing.T) {
	rt := newFakeRuntime()
	r, sock := startRuntime(t, rt)
	defer r.Stop()

	f := newFakePlugin("01", "panicky", nil)
	f.handle = func(_ context.Context, e api.Event, _ any) (any, error) {
		if e == api.Event_CREATE_CONTAINER {
			return &api.CreateContainerResponse{}, nil
		}
		return nil, nil
	}
	f.connect(t, sock)
	defer f.close()
	waitActive(t, r, "01-panicky")

	req := &CreateContainerRequest{Pod: &PodSandbox{Id: "p"}, Container: &Container{Id: "c", PodSandboxId: "p"}}
	r.Lock()
	err := r.relay(context.Background(), r.reg.active(), api.Event_CREATE_CONTAINER, req, func(*plugin, any) error {
		var m map[string]string
		m["boom"] = "x" // a nil map write, as a merging bug would
		return nil
	})
	r.Unlock()
	if err == nil || !strings.Contains(err.Error(), "01-panicky") || !strings.Contains(err.Error(), "panic") {
		t.Fatalf("error %v, want one naming the plugin and the panic", err)
	}
	if _, err := r.CreateContainer(context.Background(), req); err != nil {
		t.Fatalf("CreateContainer after the recovered panic: %v", err)
	}
}

// A panic in a handler of the runtime service fails the plugin's request.
func TestServerGuardRecovers(t *testing.T) {
	r := &Adaptation{log: defaultLogger()}
	p := r.newPlugin(kindExternal)
	p.setName("01", "caller")
	_, err := p.serverGuard()(context.Background(), func(any) error { return nil },
		&ttrpc.UnaryServerInfo{FullMethod: "/nri.pkg.api.v1alpha1.Runtime/UpdateContainers"},
		func(context.Context, func(any) error) (any, error) { panic(errors.New("boom")) })
	if err == nil || !strings.Contains(err.Error(), "01-caller") || !strings.Contains(err.Error(), "UpdateContainers") {
		t.Fatalf("error %v, want one naming the plugin and the request", err)
	}
}
