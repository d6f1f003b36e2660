package loadgen

import (
	"bufio"
	"context"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// DispatchResult is the cost of one runtime operation with plugins attached,
// measured in the runtime's process like testing.B does: allocations are the
// whole process's (the adaptation and its ttrpc connections).
type DispatchResult struct {
	N           int     `json:"n"`
	NsPerOp     float64 `json:"nsPerOp"`
	P50Ns       float64 `json:"p50Ns,omitempty"`
	P99Ns       float64 `json:"p99Ns,omitempty"`
	AllocsPerOp float64 `json:"allocsPerOp"`
	BytesPerOp  float64 `json:"bytesPerOp"`
	// CPUNsPerOp is the runtime process's CPU time (user and system, every
	// thread) per operation: what an operation costs the runtime, less
	// disturbed by other work on the machine than its latency.
	CPUNsPerOp float64 `json:"cpuNsPerOp,omitempty"`
}

// Dispatch runs n back-to-back operations and times each.
func Dispatch(ctx context.Context, op func(context.Context, int) error, n int) (*DispatchResult, error) {
	lat := make([]time.Duration, 0, n)
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	cpu := CPUTime()
	start := time.Now()
	for i := 0; i < n; i++ {
		t := time.Now()
		if err := op(ctx, i); err != nil {
			return nil, err
		}
		lat = append(lat, time.Since(t))
	}
	el := time.Since(start)
	cpu = CPUTime() - cpu
	runtime.ReadMemStats(&after)
	return &DispatchResult{
		N:           n,
		NsPerOp:     float64(el.Nanoseconds()) / float64(n),
		CPUNsPerOp:  float64(cpu.Nanoseconds()) / float64(n),
		P50Ns:       float64(Quantile(lat, 0.5)),
		P99Ns:       float64(Quantile(lat, 0.99)),
		AllocsPerOp: float64(after.Mallocs-before.Mallocs) / float64(n),
		BytesPerOp:  float64(after.TotalAlloc-before.TotalAlloc) / float64(n),
	}, nil
}

// BlockSync times n BlockPluginSync+Unblock pairs, nobody waiting, as
// testing.B with ReportAllocs would.
func BlockSync(h Harness, n int) *DispatchResult {
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	start := time.Now()
	for i := 0; i < n; i++ {
		h.BlockUnblock()
	}
	el := time.Since(start)
	runtime.ReadMemStats(&after)
	return &DispatchResult{
		N:           n,
		NsPerOp:     float64(el.Nanoseconds()) / float64(n),
		AllocsPerOp: float64(after.Mallocs-before.Mallocs) / float64(n),
		BytesPerOp:  float64(after.TotalAlloc-before.TotalAlloc) / float64(n),
	}
}

// MemResult is the runtime process's memory after a collection.
type MemResult struct {
	HeapInuseMiB float64 `json:"heapInuseMiB"`
	HeapAllocMiB float64 `json:"heapAllocMiB"`
	RSSMiB       float64 `json:"rssMiB"`
	heap, rss    uint64  // in bytes
}

// Memory collects garbage, returns freed memory to the OS and reads the
// heap and the resident set size.
func Memory() MemResult {
	runtime.GC()
	debug.FreeOSMemory()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	rss := rssBytes()
	return MemResult{
		HeapInuseMiB: mib(m.HeapInuse),
		HeapAllocMiB: mib(m.HeapAlloc),
		RSSMiB:       mib(rss),
		heap:         m.HeapInuse,
		rss:          rss,
	}
}

func mib(b uint64) float64 { return float64(b) / (1 << 20) }

// rssBytes reads VmRSS from /proc (Linux); 0 elsewhere.
func rssBytes() uint64 { return procStatus("VmRSS:") }

// peakRSSBytes reads the resident high-water mark, VmHWM (Linux; 0
// elsewhere).
func peakRSSBytes() uint64 { return procStatus("VmHWM:") }

// procStatus reads a kB field of /proc/self/status in bytes.
func procStatus(field string) uint64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), field); ok {
			kb, _ := strconv.ParseUint(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return kb << 10
		}
	}
	return 0
}

// CPUTime is the process's CPU time so far, user and system (0 where
// getrusage fails).
func CPUTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
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
