package multiplex

import "sync/atomic"

// MaxFrameSize is the largest frame payload a Mux reads or writes: a ttrpc
// message header (10 bytes) plus ttrpc's largest message (4 MiB).
const MaxFrameSize = maxPayload

// FrameLimit is the largest frame payload a Mux accepts from its peer. The
// reader allocates a frame's payload before it arrives, so a peer that is not
// trusted yet (a connection that has not registered) must not be able to
// declare large frames: the runtime starts each connection with a small
// limit and raises it once the plugin registered. It can be changed while
// the Mux runs.
type FrameLimit struct {
	n atomic.Uint32
}

// NewFrameLimit returns a limit of n bytes, clamped to [0, MaxFrameSize].
func NewFrameLimit(n int) *FrameLimit {
	l := &FrameLimit{}
	l.Set(n)
	return l
}

// Set changes the limit to n bytes, clamped to [0, MaxFrameSize].
func (l *FrameLimit) Set(n int) {
	l.n.Store(uint32(min(max(n, 0), MaxFrameSize)))
}

// Get returns the limit in bytes.
func (l *FrameLimit) Get() int {
	return int(l.n.Load())
}

// WithFrameLimit makes the Mux tear itself down when the peer sends a frame
// larger than l allows at the time the frame's header arrives, instead of
// allocating it. Without it the limit is MaxFrameSize.
func WithFrameLimit(l *FrameLimit) Option {
	return func(m *mux) { m.limit = l }
}
