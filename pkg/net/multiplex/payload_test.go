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

// Payloads of every size arrive whole, however the reads are cut.
func TestReadPayloadRoundTrip(t *testing.T) {
	for _, size := range []int{0, 1, eagerPayload, eagerPayload + 1, 3*eagerPayload + 7, maxPayload} {
		want := make([]byte, size)
		for i := range want {
			want[i] = byte(i * 7)
		}
		got, err := readPayload(iotest.HalfReader(bytes.NewReader(want)), size)
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("size %d: got %d bytes (equal %v), error %v", size, len(got), bytes.Equal(got, want), err)
		}
	}
}
