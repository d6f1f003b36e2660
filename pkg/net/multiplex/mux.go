package multiplex

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"

	"github.com/containerd/ttrpc"

	nrinet "github.com/nri-handover/nri/pkg/net"
)

// Mux multiplexes logical connections over one trunk connection.
//
// Open returns the net.Conn of an id (the same one on every call while it is
// open); writes to it are framed and written to the trunk synchronously, one
// whole write at a time; reads return the payloads that arrived for it, in
// order. A reader that falls more than the queue length (WithReadQueueLength)
// of frames behind, a malformed frame or a trunk error tears the Mux down:
// the trunk and every connection are closed and later reads and writes report
// that error.
type Mux interface {
	// Open returns the connection for id.
	Open(ConnID) (net.Conn, error)
	// Close closes the trunk and every connection.
	Close() error
	// Dialer returns a net.Dial-like function that opens id.
	Dialer(ConnID) func(string, string) (net.Conn, error)
	// Listen returns a listener whose first Accept returns the connection
	// for id; later Accepts block until it is closed, then return io.EOF.
	Listen(ConnID) (net.Listener, error)
	// Trunk returns the underlying connection.
	Trunk() net.Conn
	// Unblock starts reading the trunk (see WithBlockedRead).
	Unblock()
}

// Option configures a Mux.
type Option func(*mux)

// WithBlockedRead makes the Mux leave the trunk unread until Unblock, so
// that the caller can open its connections first: frames for an id that is
// not open yet would be dropped.
func WithBlockedRead() Option {
	return func(m *mux) { m.blocked = true }
}

// WithReadQueueLength sets how many frames may wait per connection.
func WithReadQueueLength(n int) Option {
	return func(m *mux) { m.qlen = n }
}

// Multiplex starts a Mux on trunk.
func Multiplex(trunk net.Conn, options ...Option) Mux {
	m := &mux{
		trunk:   trunk,
		conns:   map[ConnID]*conn{},
		qlen:    defaultQueueLen,
		unblock: make(chan struct{}),
		closed:  make(chan struct{}),
		ended:   make(chan struct{}),
	}
	for _, o := range options {
		o(m)
	}
	if m.qlen < 1 {
		m.qlen = 1
	}
	if !m.blocked {
		m.Unblock()
	}
	go m.read()
	return m
}

type mux struct {
	trunk   net.Conn
	qlen    int
	blocked bool

	wmu sync.Mutex // one write's frames go out back to back

	mu    sync.Mutex
	conns map[ConnID]*conn

	unblockOnce sync.Once
	unblock     chan struct{}

	closeOnce sync.Once
	closed    chan struct{} // Close was called: connections fail at once

	endOnce sync.Once
	ended   chan struct{} // no frame will arrive anymore: queued ones drain

	errOnce sync.Once
	err     error
}

func (m *mux) Trunk() net.Conn { return m.trunk }

func (m *mux) Unblock() { m.unblockOnce.Do(func() { close(m.unblock) }) }

func (m *mux) Open(id ConnID) (net.Conn, error) {
	if id == reservedConnID {
		return nil, fmt.Errorf("ConnID %d is reserved", id)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if c, ok := m.conns[id]; ok {
		return c, nil
	}
	c := &conn{id: id, m: m, frames: make(chan [][]byte, m.qlen), done: make(chan struct{})}
	select {
	case <-m.closed:
		// Nothing will ever be read for it: fail its reads instead of
		// blocking them forever.
		c.closeOnce.Do(func() { close(c.done) })
	default:
		m.conns[id] = c
	}
	return c, nil
}

func (m *mux) Dialer(id ConnID) func(string, string) (net.Conn, error) {
	return func(string, string) (net.Conn, error) { return m.Open(id) }
}

func (m *mux) Listen(id ConnID) (net.Listener, error) {
	c, err := m.Open(id)
	if err != nil {
		return nil, err
	}
	return nrinet.NewConnListener(c), nil
}

func (m *mux) Close() error {
	m.closeOnce.Do(func() {
		m.mu.Lock()
		close(m.closed)
		for _, c := range m.conns {
			c.closeOnce.Do(func() { close(c.done) })
		}
		m.mu.Unlock()
		m.end()
	})
	return nil
}

// end stops the traffic: the trunk is closed, readers get what is queued.
func (m *mux) end() {
	m.endOnce.Do(func() {
		close(m.ended)
		m.trunk.Close()
	})
}

// fail records the first error and ends the Mux.
func (m *mux) fail(err error) {
	m.setError(err)
	m.end()
}

func (m *mux) setError(err error) { m.errOnce.Do(func() { m.err = err }) }

// error is what reads and writes report once the Mux has ended.
func (m *mux) error() error {
	m.setError(io.EOF)
	return m.err
}

// write sends b to id as one or more frames. A small frame goes out in one
// write to the trunk (header and payload copied together), a large one in
// two, so that large messages are not copied. Plain writes, not writev: the
// race detector orders a socket write before the peer's read only for
// write(2), and tests of peers in one process rely on that ordering.
func (m *mux) write(id ConnID, b []byte) (int, error) {
	m.wmu.Lock()
	defer m.wmu.Unlock()
	sent := 0
	for first := true; first || sent < len(b); first = false {
		chunk := b[sent:min(len(b), sent+maxPayload)]
		if err := m.writeFrame(id, chunk); err != nil {
			return sent, err
		}
		sent += len(chunk)
	}
	return len(b), nil
}

// copyLimit is the largest payload copied next to its header.
const copyLimit = 64 << 10

// keptBuffer is the largest payload whose copy buffer is kept for the next
// write (frameBufs): events fit, while the buffer of a large message (a
// synchronization round) is not kept.
const keptBuffer = 4 << 10

// frameBufs holds the buffers small frames are assembled in, shared by every
// Mux: a runtime holds one Mux per plugin, and an idle one holds no buffer.
var frameBufs = sync.Pool{New: func() any {
	b := make([]byte, 0, headerLen+keptBuffer)
	return &b
}}

func (m *mux) writeFrame(id ConnID, payload []byte) error {
	n := len(payload) // bytes copied next to the header
	if n > copyLimit {
		n = 0
	}
	var buf []byte
	if n <= keptBuffer {
		bp := frameBufs.Get().(*[]byte)
		defer frameBufs.Put(bp)
		buf = (*bp)[:headerLen+n]
	} else {
		buf = make([]byte, headerLen+n)
	}
	binary.BigEndian.PutUint32(buf[0:4], uint32(id))
	binary.BigEndian.PutUint32(buf[4:8], uint32(len(payload)))
	copy(buf[headerLen:], payload[:n])
	written, err := m.trunk.Write(buf)
	if err == nil && n < len(payload) {
		var more int
		more, err = m.trunk.Write(payload)
		written += more
	}
	if err != nil {
		err = fmt.Errorf("failed to write frame to trunk: %w", err)
		if written != 0 {
			// Part of a frame went out: the stream cannot be resumed.
			m.fail(err)
		}
	}
	return err
}

// read demultiplexes the trunk until it ends.
func (m *mux) read() {
	select {
	case <-m.unblock:
	case <-m.closed:
		return
	}
	var hdr [headerLen]byte
	for {
		if _, err := io.ReadFull(m.trunk, hdr[:]); err != nil {
			m.fail(trunkError("header", err))
			return
		}
		id := ConnID(binary.BigEndian.Uint32(hdr[0:4]))
		size := binary.BigEndian.Uint32(hdr[4:8])
		if size > maxPayload {
			// Never written by a conforming peer, and the framing has no
			// marker to resynchronize on.
			m.fail(fmt.Errorf("conn %d: frame payload %d bytes, maximum is %d", id, size, maxPayload))
			return
		}
		payload, err := readPayload(m.trunk, int(size))
		if err != nil {
			m.fail(trunkError("payload", err))
			return
		}
		m.mu.Lock()
		c := m.conns[id]
		m.mu.Unlock()
		if c == nil {
			continue
		}
		select {
		case c.frames <- payload:
		default:
			// Blocking here would stall every other connection.
			m.fail(fmt.Errorf("conn %d: read queue full (%d frames)", id, m.qlen))
			return
		}
	}
}

// eagerPayload is the largest payload allocated before it arrives.
const eagerPayload = 64 << 10

// readPayload reads a payload of size bytes, in chunks. A large one is
// allocated as it arrives, not as declared: a peer that declares the largest
// frame and sends nothing more must not make us hold 4 MiB per connection.
// Each chunk is as large as all before it, so a payload of megabytes takes a
// handful of allocations of its size in total, and no byte is copied twice.
func readPayload(r io.Reader, size int) ([][]byte, error) {
	chunks := make([][]byte, 0, 1)
	for got := 0; got < size || len(chunks) == 0; {
		c := make([]byte, min(size-got, max(eagerPayload, got)))
		if _, err := io.ReadFull(r, c); err != nil {
			return nil, err
		}
		chunks = append(chunks, c)
		got += len(c)
	}
	return chunks, nil
}

// trunkError reports a closed trunk as io.EOF, like upstream.
func trunkError(what string, err error) error {
	switch {
	case errors.Is(err, io.EOF), errors.Is(err, net.ErrClosed),
		errors.Is(err, ttrpc.ErrClosed), errors.Is(err, ttrpc.ErrServerClosed):
		return io.EOF
	}
	return fmt.Errorf("failed to read %s from trunk: %w", what, err)
}
