package multiplex

import (
	"bytes"
	"io"
	"net"
	"testing"
)

// A connection that once sent a large message (a plugin's synchronization)
// leaves no buffer of that size to be kept: a runtime holds one multiplexer
// per plugin, and the buffers small frames are assembled in are shared.
func TestWriteKeepsNoLargeBuffer(t *testing.T) {
	trunk, peer := net.Pipe()
	defer peer.Close()
	m := Multiplex(trunk).(*mux)
	defer m.Close()
	c, err := m.Open(PluginServiceConn)
	if err != nil {
		t.Fatal(err)
	}
	for _, size := range []int{100, 32 << 10, 200} {
		msg := bytes.Repeat([]byte{'x'}, size)
		got := make([]byte, headerLen+size)
		read := make(chan error, 1)
		go func() { _, err := io.ReadFull(peer, got); read <- err }()
		if _, err := c.Write(msg); err != nil {
			t.Fatal(err)
		}
		if err := <-read; err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got[headerLen:], msg) {
			t.Fatalf("%d-byte message arrived changed", size)
		}
	}
	for range 4 {
		bp := frameBufs.Get().(*[]byte)
		if kept := cap(*bp); kept > headerLen+keptBuffer {
			t.Fatalf("a %d-byte write buffer is kept after a 32 KiB message, want at most %d", kept, headerLen+keptBuffer)
		}
	}
}
