package multiplex

import (
	"bytes"
	"io"
	"net"
	"testing"
)

// A connection that once sent a large message (a plugin's synchronization)
// does not keep a buffer of that size for as long as it lives: a runtime
// holds one multiplexer per plugin.
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
	m.wmu.Lock()
	kept := cap(m.wbuf)
	m.wmu.Unlock()
	if kept > headerLen+keptBuffer {
		t.Fatalf("the multiplexer keeps a %d-byte write buffer after a 32 KiB message, want at most %d", kept, headerLen+keptBuffer)
	}
}
