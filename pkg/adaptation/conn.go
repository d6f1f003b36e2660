package adaptation

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"sync"
	"syscall"
	"time"
)

// deadlineConn bounds every write to a plugin's connection and closes the
// connection when a write misses its deadline.
//
// A context bounds only how long a ttrpc call waits for its reply: the write
// of the request happens under the client's send lock and ignores it. A
// plugin that stops reading (hung, SIGSTOPped, or hostile) lets the socket
// buffer fill up, and the next large enough write blocks until the plugin
// reads again or hangs up; every later call, the shutdown notice included,
// queues behind it on the same lock. Bounding the write where it happens, on
// the connection that the multiplexer writes both services' frames to, covers
// every request and reply at once.
//
// A write that times out may have sent part of a frame: the stream can no
// longer be parsed, so the connection is closed. The multiplexer's reader then
// fails, the ttrpc client's close callback runs and the plugin is removed.
//
// Reads are never bounded: a plugin may rightly stay silent forever.
type deadlineConn struct {
	net.Conn
	timeout func() time.Duration // read at every write: the request timeout can change at run time

	mu sync.Mutex // one write at a time, so each write gets its own deadline
}

// newDeadlineConn wraps conn so that each write must complete within timeout().
func newDeadlineConn(conn net.Conn, timeout func() time.Duration) net.Conn {
	return &deadlineConn{Conn: conn, timeout: timeout}
}

// Write writes p within the write timeout, or closes the connection.
func (c *deadlineConn) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	timeout := c.timeout()
	if err := c.Conn.SetWriteDeadline(time.Now().Add(timeout)); err != nil {
		return 0, err
	}
	n, err := c.Conn.Write(p)
	if err != nil && errors.Is(err, os.ErrDeadlineExceeded) {
		c.Conn.Close()
		return n, &writeTimeoutError{timeout: timeout, written: n, size: len(p), err: err}
	}
	return n, err
}

// SyscallConn exposes the socket, for peer credentials.
func (c *deadlineConn) SyscallConn() (syscall.RawConn, error) {
	sc, ok := c.Conn.(syscall.Conn)
	if !ok {
		return nil, errors.New("not a socket")
	}
	return sc.SyscallConn()
}

// writeTimeoutError reports a write the plugin did not accept in time. It is
// a timeout (context.DeadlineExceeded) so that the failure policy treats the
// request like one the plugin did not answer.
type writeTimeoutError struct {
	timeout       time.Duration
	written, size int
	err           error
}

func (e *writeTimeoutError) Error() string {
	return fmt.Sprintf("plugin accepted %d of %d bytes in %s, connection closed: %v", e.written, e.size, e.timeout, e.err)
}

func (e *writeTimeoutError) Unwrap() []error { return []error{e.err, context.DeadlineExceeded} }

// Timeout lets net-style checks see the timeout too.
func (e *writeTimeoutError) Timeout() bool { return true }
