package multiplex_test

import (
	"encoding/binary"
	"io"
	"net"
	"testing"

	"go.uber.org/goleak"

	nrinet "github.com/nri-handover/nri/pkg/net"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// pair returns the two ends of a connected socketpair, closed at cleanup.
func pair(t *testing.T) (net.Conn, net.Conn) {
	t.Helper()
	sp, err := nrinet.NewSocketPair()
	if err != nil {
		t.Fatal(err)
	}
	a, err := sp.LocalConn()
	if err != nil {
		t.Fatal(err)
	}
	b, err := sp.PeerConn()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close(); b.Close() })
	return a, b
}

// frame is one frame as it travels on the trunk.
func frame(id uint32, payload []byte) []byte {
	b := make([]byte, 8, 8+len(payload))
	binary.BigEndian.PutUint32(b[0:4], id)
	binary.BigEndian.PutUint32(b[4:8], uint32(len(payload)))
	return append(b, payload...)
}

// readFrame reads one raw frame from the trunk's other end.
func readFrame(t *testing.T, r io.Reader) (uint32, []byte) {
	t.Helper()
	var hdr [8]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		t.Fatalf("reading frame header: %v", err)
	}
	payload := make([]byte, binary.BigEndian.Uint32(hdr[4:8]))
	if _, err := io.ReadFull(r, payload); err != nil {
		t.Fatalf("reading frame payload: %v", err)
	}
	return binary.BigEndian.Uint32(hdr[0:4]), payload
}

func mustWrite(t *testing.T, w io.Writer, b []byte) {
	t.Helper()
	if _, err := w.Write(b); err != nil {
		t.Fatalf("write: %v", err)
	}
}

func mustRead(t *testing.T, r io.Reader, want string) {
	t.Helper()
	buf := make([]byte, len(want)+16)
	n, err := r.Read(buf)
	if err != nil {
		t.Fatalf("read: %v (want %q)", err, want)
	}
	if got := string(buf[:n]); got != want {
		t.Fatalf("read %q, want %q", got, want)
	}
}
