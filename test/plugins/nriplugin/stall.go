package main

import (
	"net"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// stallConn is the plugin's connection to the runtime with a reader that can
// be stopped (-stop-reading-after): the plugin stays alive and keeps writing,
// but nothing drains the socket, so the runtime's writes block once the
// socket buffers are full, as with a plugin whose reader is stuck or that was
// SIGSTOPped.
type stallConn struct {
	net.Conn

	mu      sync.Mutex
	stalled bool
	resumed chan struct{} // closed by resume or Close: a stalled Read goes on
	once    sync.Once
}

func newStallConn(conn net.Conn) *stallConn {
	return &stallConn{Conn: conn, resumed: make(chan struct{})}
}

// stallPending is how much unread data tells that the runtime is writing a
// large message: small ones (a reply that crossed the last request) do not.
const stallPending = 64 << 10

// stall makes every later Read wait until resume or Close. pending is
// called once the runtime has sent stallPending bytes that are left unread,
// so a test knows that the runtime is writing to a plugin that does not read.
func (c *stallConn) stall(pending func()) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.stalled {
		c.stalled = true
		go c.watch(pending)
	}
}

// watch polls the socket's receive queue (SIOCINQ) until it holds
// stallPending bytes.
func (c *stallConn) watch(pending func()) {
	sc, ok := c.Conn.(syscall.Conn)
	if !ok {
		return
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return
	}
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-c.resumed:
			return
		case <-tick.C:
		}
		unread := 0
		_ = raw.Control(func(fd uintptr) { unread, _ = unix.IoctlGetInt(int(fd), unix.SIOCINQ) })
		if unread >= stallPending {
			pending()
			return
		}
	}
}

// resume lets reads go on for good: the plugin then sees whatever the runtime
// did meanwhile, a closed connection included.
func (c *stallConn) resume() { c.once.Do(func() { close(c.resumed) }) }

func (c *stallConn) Read(b []byte) (int, error) {
	c.mu.Lock()
	stalled := c.stalled
	c.mu.Unlock()
	if stalled {
		<-c.resumed
	}
	return c.Conn.Read(b)
}

func (c *stallConn) Close() error {
	c.resume()
	return c.Conn.Close()
}

// stallingDialer dials the runtime's socket and remembers the connection, so
// that a handler can stop its reader.
type stallingDialer struct {
	mu   sync.Mutex
	conn *stallConn
}

func (d *stallingDialer) dial(path string) (net.Conn, error) {
	conn, err := net.Dial("unix", path)
	if err != nil {
		return nil, err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	d.conn = newStallConn(conn)
	return d.conn, nil
}

// current is the latest connection, or nil (also without a dialer).
func (d *stallingDialer) current() *stallConn {
	if d == nil {
		return nil
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.conn
}
