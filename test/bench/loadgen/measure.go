package loadgen

import (
	"bufio"
	"context"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"time"
)

// DispatchResult is the cost of one runtime operation with plugins attached,
// measured in the runtime's process like testing.B does: allocations are the
// whole process's (the adaptation and its ttrpc connections).
type DispatchResult struct {
	N           int     `json:"n"`
	NsPerOp     float64 `json:"nsPerOp"`
	AllocsPerOp float64 `json:"allocsPerOp"`
	BytesPerOp  float64 `json:"bytesPerOp"`
}

// Dispatch runs n back-to-back operations.
func Dispatch(ctx context.Context, rt Runtime, n int) (*DispatchResult, error) {
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	start := time.Now()
	for i := 0; i < n; i++ {
		if _, err := rt.Op(ctx, i); err != nil {
			return nil, err
		}
	}
	el := time.Since(start)
	runtime.ReadMemStats(&after)
	return &DispatchResult{
		N:           n,
		NsPerOp:     float64(el.Nanoseconds()) / float64(n),
		AllocsPerOp: float64(after.Mallocs-before.Mallocs) / float64(n),
		BytesPerOp:  float64(after.TotalAlloc-before.TotalAlloc) / float64(n),
	}, nil
}

// MemResult is the runtime process's memory after a collection.
type MemResult struct {
	HeapInuseMiB float64 `json:"heapInuseMiB"`
	HeapAllocMiB float64 `json:"heapAllocMiB"`
	RSSMiB       float64 `json:"rssMiB"`
}

// Memory collects garbage, returns freed memory to the OS and reads the
// heap and the resident set size.
func Memory() MemResult {
	runtime.GC()
	debug.FreeOSMemory()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return MemResult{
		HeapInuseMiB: mib(m.HeapInuse),
		HeapAllocMiB: mib(m.HeapAlloc),
		RSSMiB:       mib(rssBytes()),
	}
}

func mib(b uint64) float64 { return float64(b) / (1 << 20) }

// rssBytes reads VmRSS from /proc (Linux); 0 elsewhere.
func rssBytes() uint64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			kb, _ := strconv.ParseUint(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return kb << 10
		}
	}
	return 0
}

// LoadAvg returns the machine's one-minute load average (Linux; 0
// elsewhere). Benchmarks report it: on a shared 2-core machine, other work
// shows up in every latency measured here.
func LoadAvg() float64 {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return 0
	}
	v, _ := strconv.ParseFloat(f[0], 64)
	return v
}
