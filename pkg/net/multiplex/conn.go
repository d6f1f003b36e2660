package multiplex

import (
	"net"
	"strconv"
	"sync"
	"time"
)

// conn is one logical connection of a Mux.
type conn struct {
	id     ConnID
	m      *mux
	frames chan [][]byte // payloads in arrival order, each in chunks
	done   chan struct{} // closed by Close (of the conn or the Mux)

	closeOnce sync.Once

	rmu    sync.Mutex
	rest   []byte   // the unread tail of the chunk being read
	chunks [][]byte // the unread chunks of the payload after it
}

// Read returns the next bytes that arrived for the connection: the rest of a
// payload a smaller buffer could not take, else the next payload, as much of
// it as b takes. Like upstream's, one Read never returns bytes of two frames,
// and returns a whole frame when b is large enough, however it was buffered
// (readPayload's chunks). Once the trunk has ended, queued payloads are still
// returned before the Mux's error.
func (c *conn) Read(b []byte) (int, error) {
	c.rmu.Lock()
	defer c.rmu.Unlock()
	if len(c.rest) == 0 && len(c.chunks) == 0 {
		payload, err := c.next()
		if err != nil {
			return 0, err
		}
		c.chunks = payload
	}
	n := 0
	for n < len(b) {
		if len(c.rest) == 0 {
			if len(c.chunks) == 0 {
				break // the frame is read: the next one is for the next Read
			}
			c.rest, c.chunks = c.chunks[0], c.chunks[1:]
		}
		k := copy(b[n:], c.rest)
		c.rest = c.rest[k:]
		n += k
	}
	if len(c.rest) == 0 && len(c.chunks) == 0 {
		c.rest, c.chunks = nil, nil // let the payload go
	}
	return n, nil
}

func (c *conn) next() ([][]byte, error) {
	select {
	case <-c.done:
		return nil, c.m.error()
	default:
	}
	select {
	case p := <-c.frames:
		return p, nil
	case <-c.done:
		return nil, c.m.error()
	case <-c.m.ended:
		select {
		case p := <-c.frames:
			return p, nil
		default:
			return nil, c.m.error()
		}
	}
}

// Write sends b as one message of the connection.
func (c *conn) Write(b []byte) (int, error) {
	select {
	case <-c.done:
		return 0, c.m.error()
	case <-c.m.ended:
		return 0, c.m.error()
	default:
	}
	return c.m.write(c.id, b)
}

// Close closes this connection only; the Mux and its other connections stay.
func (c *conn) Close() error {
	c.m.mu.Lock()
	if c.m.conns[c.id] == c {
		delete(c.m.conns, c.id)
	}
	c.m.mu.Unlock()
	c.closeOnce.Do(func() { close(c.done) })
	return nil
}

// addr names a connection of a Mux (network "mux", address its id), so
// that code printing a connection's address does not meet a nil.
type addr ConnID

// Network is "mux".
func (addr) Network() string { return "mux" }

func (a addr) String() string { return "conn-" + strconv.FormatUint(uint64(a), 10) }

func (c *conn) LocalAddr() net.Addr  { return addr(c.id) }
func (c *conn) RemoteAddr() net.Addr { return addr(c.id) }

// Deadlines are not supported; like upstream's, these succeed and do nothing.
func (c *conn) SetDeadline(time.Time) error      { return nil }
func (c *conn) SetReadDeadline(time.Time) error  { return nil }
func (c *conn) SetWriteDeadline(time.Time) error { return nil }
