package stub

import (
	"context"
	"errors"
	"io"
	stdnet "net"
	"net/http"
	"strings"
	"syscall"
	"testing"

	"github.com/nri-handover/nri/api"
)

// freeAddr is a loopback address with a port nothing listens on.
func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := stdnet.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

func getReadyz(t *testing.T, addr string) (int, string, error) {
	t.Helper()
	rsp, err := http.Get("http://" + addr + "/readyz")
	if err != nil {
		return 0, "", err
	}
	defer rsp.Body.Close()
	body, _ := io.ReadAll(rsp.Body)
	return rsp.StatusCode, string(body), nil
}

// A plugin that did only WithHandover answers the manifest's readinessProbe:
// with $NRI_PLUGIN_READYZ_ADDR set, the stub serves /readyz itself from Run
// until Stop (503 until the runtime makes it active, 200 then).
func TestReadyzServedFromEnv(t *testing.T) {
	addr := freeAddr(t)
	t.Setenv(HandoverEnvVar, "")
	t.Setenv(ReadyzAddrEnvVar, addr)
	p := newTestPlugin()
	s, rt := newTestStub(t, p, WithHandover())
	errC := runStub(t, s, context.Background())

	var code int
	eventually(t, func() bool {
		var err error
		code, _, err = getReadyz(t, addr)
		return err == nil
	}, "/readyz served on $"+ReadyzAddrEnvVar)
	if code != http.StatusServiceUnavailable {
		t.Errorf("/readyz before the runtime made it active: %d, want 503", code)
	}
	rt.connect(true)
	if err := rt.role(api.PluginRole_PLUGIN_ROLE_ACTIVE); err != nil {
		t.Fatal(err)
	}
	recv(t, p.roleC, "role change")
	if code, body, err := getReadyz(t, addr); err != nil || code != http.StatusOK || !strings.Contains(body, "active") {
		t.Errorf("/readyz once active: %d %q %v, want 200 active", code, body, err)
	}
	// A second Run, refused, leaves the first one's /readyz served.
	if err := s.Run(context.Background()); err == nil || !strings.Contains(err.Error(), "already started") {
		t.Fatalf("a second Run: %v, want already started", err)
	}
	if code, _, err := getReadyz(t, addr); err != nil || code != http.StatusOK {
		t.Errorf("/readyz after a refused second Run: %d %v, want 200", code, err)
	}
	s.Stop()
	recv(t, errC, "Run")
	if _, _, err := getReadyz(t, addr); !errors.Is(err, syscall.ECONNREFUSED) {
		t.Errorf("/readyz after Stop: %v, want connection refused", err)
	}
}

// Only a plugin that opted in reads the variable, as upstream's stub reads
// none; a bad value or a port taken is an error naming the variable.
func TestReadyzEnvMistakes(t *testing.T) {
	t.Setenv(HandoverEnvVar, "")
	t.Run("not opted in", func(t *testing.T) {
		addr := freeAddr(t)
		t.Setenv(ReadyzAddrEnvVar, addr)
		s, rt := newTestStub(t, newTestPlugin())
		runStub(t, s, context.Background())
		rt.connect(false)
		if _, _, err := getReadyz(t, addr); err == nil {
			t.Error("/readyz served for a plugin that did not opt in")
		}
	})
	t.Run("handover turned off by the kill switch", func(t *testing.T) {
		// The manifest still probes /readyz: the plugin, now registering as
		// an upstream plugin, is ready once synchronized.
		addr := freeAddr(t)
		t.Setenv(ReadyzAddrEnvVar, addr)
		t.Setenv(HandoverEnvVar, "off")
		s, rt := newTestStubOn(t, newTestPlugin(), []rtOption{legacyRegistration}, WithHandover())
		runStub(t, s, context.Background())
		rt.connect(false)
		eventually(t, func() bool {
			code, _, err := getReadyz(t, addr)
			return err == nil && code == http.StatusOK
		}, "/readyz 200 once synchronized")
	})
	t.Run("bad value", func(t *testing.T) {
		t.Setenv(ReadyzAddrEnvVar, "8080")
		_, err := New(newTestPlugin(), WithPluginName("p"), WithPluginIdx("10"), WithHandover(), quiet)
		if err == nil || !strings.Contains(err.Error(), "$"+ReadyzAddrEnvVar+`="8080"`) {
			t.Errorf("New: %v, want an error naming $%s", err, ReadyzAddrEnvVar)
		}
	})
	t.Run("port taken", func(t *testing.T) {
		l, err := stdnet.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		t.Setenv(ReadyzAddrEnvVar, l.Addr().String())
		s, _ := newTestStub(t, newTestPlugin(), WithHandover())
		ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
		defer cancel()
		if err := s.Run(ctx); err == nil || !strings.Contains(err.Error(), "serving /readyz ($"+ReadyzAddrEnvVar+")") {
			t.Errorf("Run: %v, want an error naming $%s", err, ReadyzAddrEnvVar)
		}
	})
}
