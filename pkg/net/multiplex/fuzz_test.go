package multiplex_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"strings"
	"testing"

	"github.com/nri-handover/nri/pkg/net/multiplex"
)

// FuzzMuxRead feeds an arbitrary byte stream from the peer to a Mux and
// requires: no panic, each open connection gets exactly the payloads of the
// well-formed frames for it, in order, frames for other ids are dropped, and
// a frame declared larger than the largest payload ends the Mux with an
// error naming the maximum instead of being allocated. (The second argument
// is left over from an earlier frame-limit option; the seed corpus keeps it.)
func FuzzMuxRead(f *testing.F) {
	f.Add(frame(1, []byte("hello")), uint16(64))
	f.Add(append(frame(2, []byte("ab")), frame(1, []byte("cd"))...), uint16(64))
	f.Add(append(frame(7, []byte("dropped")), frame(2, nil)...), uint16(16))
	f.Add(frame(2, bytes.Repeat([]byte{'x'}, 100)), uint16(16))
	f.Add([]byte{0, 0, 0, 2, 0, 0x40, 0, 0, 1, 2, 3}, uint16(1024)) // declares 4 MiB, sends 3 bytes
	f.Add([]byte{0, 0, 0, 2, 0xff, 0xff, 0xff, 0xff, 1}, uint16(0)) // declares more than the maximum
	f.Add([]byte{0, 0, 0, 1, 0, 0, 0}, uint16(64))                  // short header
	f.Add(append(frame(0, []byte("reserved")), frame(1, []byte("x"))...), uint16(64))

	f.Fuzz(func(t *testing.T, stream []byte, _ uint16) {
		const limit = maxPayload
		trunk, peer := net.Pipe()
		m := multiplex.Multiplex(trunk, multiplex.WithReadQueueLength(len(stream)+1))
		defer m.Close()

		want, tooLarge := parseFrames(stream, limit)
		type result struct {
			data []byte
			err  error
		}
		results := map[uint32]chan result{}
		for _, id := range []uint32{1, 2} {
			c, err := m.Open(multiplex.ConnID(id))
			if err != nil {
				t.Fatal(err)
			}
			ch := make(chan result, 1)
			results[id] = ch
			go func() {
				var got []byte
				buf := make([]byte, 4096)
				for {
					n, err := c.Read(buf)
					if n > limit {
						ch <- result{got, errors.New("read more than a frame's limit at once")}
						return
					}
					got = append(got, buf[:n]...)
					if err != nil {
						ch <- result{got, err}
						return
					}
				}
			}()
		}

		go func() {
			_, _ = peer.Write(stream) // fails once the Mux gave up reading
			peer.Close()
		}()
		for _, id := range []uint32{1, 2} {
			r := <-results[id]
			if !bytes.Equal(r.data, want[id]) {
				t.Fatalf("conn %d got %q, want %q", id, r.data, want[id])
			}
			if tooLarge && !strings.Contains(r.err.Error(), "maximum is") {
				t.Fatalf("conn %d ended with %v, want the frame limit", id, r.err)
			}
			if !tooLarge && r.err != nil && !errors.Is(r.err, io.EOF) && !strings.Contains(r.err.Error(), "failed to read") {
				t.Fatalf("conn %d ended with %v", id, r.err)
			}
		}
	})
}

// parseFrames is the reference reader: the payloads per connection of the
// complete frames up to the first one over limit (tooLarge) or the end.
func parseFrames(stream []byte, limit int) (map[uint32][]byte, bool) {
	out := map[uint32][]byte{}
	for len(stream) >= 8 {
		id := binary.BigEndian.Uint32(stream[0:4])
		size := binary.BigEndian.Uint32(stream[4:8])
		if int64(size) > int64(limit) {
			return out, true
		}
		if uint64(len(stream)-8) < uint64(size) {
			break
		}
		out[id] = append(out[id], stream[8:8+size]...)
		stream = stream[8+size:]
	}
	return out, false
}
