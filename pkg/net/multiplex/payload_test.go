package multiplex

import (
	"bytes"
	"errors"
	"io"
	"runtime"
	"testing"
	"testing/iotest"
)

// A frame that declares the largest payload and delivers a few bytes costs
// what arrived, not what was declared.
func TestReadPayloadAllocatesWhatArrives(t *testing.T) {
	cut := errors.New("peer went quiet")
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	_, err := readPayload(io.MultiReader(bytes.NewReader(make([]byte, 100)), iotest.ErrReader(cut)), maxPayload)
	runtime.ReadMemStats(&after)
	if !errors.Is(err, cut) {
		t.Fatalf("error %v, want the reader's", err)
	}
	if got := after.TotalAlloc - before.TotalAlloc; got > 1<<20 {
		t.Fatalf("allocated %d bytes for a frame of which 100 arrived", got)
	}
}

// A large payload that arrives costs its size in allocations, once: it is
// not copied into ever larger buffers as it grows (a plugin's
// synchronization round is megabytes, in one frame).
func TestReadPayloadAllocatesItsSizeOnce(t *testing.T) {
	const size = 3 << 20
	src := make([]byte, size)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	p, err := readPayload(bytes.NewReader(src), size)
	runtime.ReadMemStats(&after)
	if err != nil || payloadLen(p) != size {
		t.Fatalf("read %d bytes, error %v", payloadLen(p), err)
	}
	if got := after.TotalAlloc - before.TotalAlloc; got > size+size/8 {
		t.Fatalf("allocated %d bytes for a %d-byte payload", got, size)
	}
}

func payloadLen(p [][]byte) int {
	n := 0
	for _, c := range p {
		n += len(c)
	}
	return n
}

// Payloads of every size arrive whole, however the reads are cut.
func TestReadPayloadRoundTrip(t *testing.T) {
	for _, size := range []int{0, 1, eagerPayload, eagerPayload + 1, 3*eagerPayload + 7, maxPayload} {
		want := make([]byte, size)
		for i := range want {
			want[i] = byte(i * 7)
		}
		chunks, err := readPayload(iotest.HalfReader(bytes.NewReader(want)), size)
		got := bytes.Join(chunks, nil)
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("size %d: got %d bytes (equal %v), error %v", size, len(got), bytes.Equal(got, want), err)
		}
	}
}
