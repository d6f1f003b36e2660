package net

import (
	"fmt"
	"io"
	stdnet "net"
	"os"
	"strconv"
	"sync"
)

// NewFdConn wraps an inherited socket descriptor (NRI_PLUGIN_SOCKET) in a
// net.Conn. The connection owns a duplicate; fd itself is closed.
func NewFdConn(fd int) (stdnet.Conn, error) {
	f := os.NewFile(uintptr(fd), "fd #"+strconv.Itoa(fd))
	conn, err := stdnet.FileConn(f)
	if err != nil {
		return nil, fmt.Errorf("failed to create net.Conn for fd #%d: %w", fd, err)
	}
	f.Close()
	return conn, nil
}

// NewConnListener presents an established connection as a net.Listener, for
// servers (ttrpc) that insist on accepting their connection: the first Accept
// returns conn, later ones block until Close and then return io.EOF. Close
// also closes conn.
func NewConnListener(conn stdnet.Conn) stdnet.Listener {
	l := &connListener{conn: conn, addr: conn.LocalAddr(), pending: make(chan stdnet.Conn, 1)}
	l.pending <- conn
	return l
}

type connListener struct {
	conn    stdnet.Conn
	addr    stdnet.Addr
	pending chan stdnet.Conn // holds conn until the first Accept; closed by Close

	mu     sync.Mutex
	closed bool
}

func (l *connListener) Accept() (stdnet.Conn, error) {
	if conn, ok := <-l.pending; ok {
		return conn, nil
	}
	return nil, io.EOF
}

func (l *connListener) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return nil
	}
	l.closed = true
	close(l.pending)
	return l.conn.Close()
}

func (l *connListener) Addr() stdnet.Addr { return l.addr }
