package loadgen

import (
	"testing"
	"time"
)

func TestQuantile(t *testing.T) {
	ds := []time.Duration{5, 1, 4, 2, 3, 6, 7, 8, 9, 10}
	for _, tc := range []struct {
		q    float64
		want time.Duration
	}{{0.5, 5}, {0.99, 10}, {1, 10}, {0.1, 1}, {0, 1}} {
		if got := Quantile(ds, tc.q); got != tc.want {
			t.Errorf("Quantile(%v) = %v, want %v", tc.q, got, tc.want)
		}
	}
	if Quantile(nil, 0.5) != 0 {
		t.Error("empty quantile not zero")
	}
}

func TestSyncCost(t *testing.T) {
	for _, tc := range []struct {
		objects, full int
		want          time.Duration
	}{{1000, 1000, 200}, {10, 1000, 2}, {0, 1000, 0}, {5, 0, 200}, {2000, 1000, 200}} {
		if got := SyncCost(200, tc.objects, tc.full); got != tc.want {
			t.Errorf("SyncCost(200, %d, %d) = %v, want %v", tc.objects, tc.full, got, tc.want)
		}
	}
}

func TestParseResult(t *testing.T) {
	res, err := ParseResult([]byte("noise\n{\"stall\":{\"p99Ms\":1.5}}\n"))
	if err != nil || res.Stall == nil || res.Stall.P99Ms != 1.5 {
		t.Fatalf("got %+v, %v", res, err)
	}
	if _, err := ParseResult([]byte("{\"err\":\"boom\"}\n")); err == nil {
		t.Error("error result not reported")
	}
	if _, err := ParseResult([]byte("nothing")); err == nil {
		t.Error("missing result not reported")
	}
}

func TestHasMarks(t *testing.T) {
	want := HasMarks("a", "b")
	if want(map[string]string{MarkKey("a"): "x"}) {
		t.Error("accepted a missing mark")
	}
	if !want(map[string]string{MarkKey("a"): "x", MarkKey("b"): "y"}) {
		t.Error("refused complete marks")
	}
}
