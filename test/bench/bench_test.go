package bench

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/nri-handover/nri/test/bench/loadgen"
	"github.com/nri-handover/nri/test/bench/ournri"
)

// dispatchOps is how many operations a binary's timed loop runs, and
// dispatchRuns how many times (the median run is reported: the machine's
// scheduling noise is larger than the differences measured).
const (
	dispatchOps  = 8000
	dispatchRuns = 3
)

// stallRuns is how many registrations each stall sub-benchmark runs; the
// medians over them are reported.
const stallRuns = 5

// variant is one combination of runtime and plugin under registration.
type variant struct {
	name        string
	runtime     string // ours or upstream
	stub        string // ours or upstream
	predecessor bool   // an instance is active before the measured one registers
	extra       []string
	onlyCtrs    int // run only at this node size (0: all)
}

var stallVariants = []variant{
	{name: "upstream", runtime: "upstream", stub: "upstream"},
	{name: "ours-handover", runtime: "ours", stub: "ours"},
	{name: "ours-legacy-plugin", runtime: "ours", stub: "upstream"},
	{name: "ours-takeover", runtime: "ours", stub: "ours", predecessor: true},
	// a plugin that pays its full reconciliation again in the delta round
	{name: "ours-takeover-delta-full-cost", runtime: "ours", stub: "ours", predecessor: true,
		extra: []string{"-delta-cost", "full"}, onlyCtrs: 1000},
	// our stub against an upstream runtime: a plain NRI plugin there
	{name: "upstream-runtime-our-plugin", runtime: "upstream", stub: "ours", onlyCtrs: 1000},
}

// BenchmarkRegistrationStall measures runtime operations (BlockPluginSync,
// CreateContainer, Unblock, paced every 2ms) while a plugin whose full
// Synchronize takes 200ms registers. Latency counts from each operation's
// scheduled start, so every operation held up by a stall shows it.
func BenchmarkRegistrationStall(b *testing.B) {
	x := bins(b)
	for _, ctrs := range []int{1000, 5000} {
		for _, v := range stallVariants {
			if v.onlyCtrs != 0 && v.onlyCtrs != ctrs {
				continue
			}
			b.Run(fmt.Sprintf("ctrs=%d/%s", ctrs, v.name), func(b *testing.B) {
				runStall(b, x, v, ctrs, 200*time.Millisecond)
			})
		}
	}
}

// BenchmarkHandoverDuration measures a takeover on a 1000-container node:
// from the successor's start to its RoleChange(ACTIVE), and the
// adaptation's own record of the handover and of how long it held runtime
// operations.
func BenchmarkHandoverDuration(b *testing.B) {
	x := bins(b)
	for _, delay := range []time.Duration{0, 200 * time.Millisecond} {
		v := variant{name: "ours-takeover", runtime: "ours", stub: "ours", predecessor: true}
		b.Run(fmt.Sprintf("ctrs=1000/sync-delay=%s", delay), func(b *testing.B) {
			runStall(b, x, v, 1000, delay)
		})
	}
}

func runStall(b *testing.B, x *binaries, v variant, ctrs int, delay time.Duration) {
	var p50, p99, maxes, window, load []float64
	extra := map[string][]float64{}
	for i := 0; i < stallRuns; i++ {
		args := []string{"stall", "-containers", fmt.Sprint(ctrs), "-sync-delay", delay.String(),
			"-plugin", x.pluginCmd(v.stub, v.extra...)}
		if v.predecessor {
			args = append(args, "-predecessor")
		}
		load = append(load, loadgen.LoadAvg())
		res := runBinary(b, x.runtime(v.runtime), args...)
		if res.Stall == nil {
			b.Fatal("no stall result")
		}
		st := res.Stall
		p50, p99, maxes = append(p50, st.P50Ms), append(p99, st.P99Ms), append(maxes, st.MaxMs)
		window = append(window, st.WindowMs)
		for k, val := range st.Extra {
			extra[k] = append(extra[k], val)
		}
	}
	// Each figure is the median over the runs, so that one run disturbed by
	// other work on the machine does not decide it; worst-max-ms shows the
	// worst run anyway.
	b.ReportMetric(0, "ns/op")
	b.ReportMetric(median(p50), "p50-ms")
	b.ReportMetric(median(p99), "p99-ms")
	b.ReportMetric(median(maxes), "max-ms")
	b.ReportMetric(slices.Max(maxes), "worst-max-ms")
	b.ReportMetric(median(window), "window-ms")
	for _, k := range []string{"gateHeldMs", "handoverMs", "startToActiveMs"} {
		if v, ok := extra[k]; ok {
			b.ReportMetric(median(v), metricName(k))
		}
	}
	b.ReportMetric(slices.Max(load), "load1")
}

func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	return s[len(s)/2]
}

func metricName(k string) string {
	return map[string]string{
		"gateHeldMs":      "gate-held-ms",
		"handoverMs":      "handover-ms",
		"startToActiveMs": "start-to-active-ms",
	}[k]
}

// BenchmarkCreateContainer measures one CreateContainer through the
// adaptation with 1 and 3 plugins attached. Ours runs in this process
// (testing.B counts its allocations); upstream runs a timed loop of the same
// operation in its own binary, as does ours for a like-for-like figure.
func BenchmarkCreateContainer(b *testing.B) {
	x := bins(b)
	for _, n := range []int{1, 3} {
		b.Run(fmt.Sprintf("plugins=%d/ours", n), func(b *testing.B) {
			benchInProcess(b, x.pluginCmd("ours"), n)
		})
		b.Run(fmt.Sprintf("plugins=%d/ours-upstream-plugins", n), func(b *testing.B) {
			benchInProcess(b, x.pluginCmd("upstream"), n)
		})
		for _, impl := range []string{"ours", "upstream"} {
			b.Run(fmt.Sprintf("plugins=%d/%s-binary", n, impl), func(b *testing.B) {
				var runs []*loadgen.DispatchResult
				for i := 0; i < dispatchRuns; i++ {
					res := runBinary(b, x.runtime(impl), "dispatch", "-plugins", fmt.Sprint(n), "-n", fmt.Sprint(dispatchOps),
						"-plugin", x.pluginCmd(impl))
					if res.Dispatch == nil {
						b.Fatal("no dispatch result")
					}
					runs = append(runs, res.Dispatch)
				}
				// the run with the median time, whole: the figures belong together
				slices.SortFunc(runs, func(a, b *loadgen.DispatchResult) int { return cmp.Compare(a.NsPerOp, b.NsPerOp) })
				med := runs[len(runs)/2]
				b.ReportAllocs()
				b.ReportMetric(med.NsPerOp, "ns/op")
				b.ReportMetric(med.AllocsPerOp, "allocs/op")
				b.ReportMetric(med.BytesPerOp, "B/op")
				b.ReportMetric(loadgen.LoadAvg(), "load1")
			})
		}
	}
}

// benchInProcess runs our adaptation in the benchmark's process with n
// plugin processes attached.
func benchInProcess(b *testing.B, plugin string, n int) {
	dir, err := os.MkdirTemp("", "nribench")
	if err != nil {
		b.Fatal(err)
	}
	defer os.RemoveAll(dir)
	socket := filepath.Join(dir, "nri.sock")
	h, err := ournri.New(socket, 100)
	if err != nil {
		b.Fatal(err)
	}
	if err := h.Start(); err != nil {
		b.Fatal(err)
	}
	defer h.Stop()
	var procs []*loadgen.Proc
	defer func() { loadgen.StopAll(procs) }()
	var names []string
	for i := 0; i < n; i++ {
		name := fmt.Sprintf("bench%d", i)
		names = append(names, name)
		p, err := loadgen.StartPlugin(loadgen.SplitCommand(plugin),
			loadgen.PluginFlags{Socket: socket, Name: name, Idx: fmt.Sprintf("%02d", 10+i), Instance: "i"})
		if err != nil {
			b.Fatal(err)
		}
		procs = append(procs, p)
	}
	ctx := context.Background()
	if err := loadgen.WaitHandled(ctx, h, 30*time.Second, loadgen.HasMarks(names...)); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := h.Op(ctx, i); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	b.ReportMetric(loadgen.LoadAvg(), "load1")
}

// BenchmarkSyncedMemory reports the runtime process's heap and RSS with
// 5000 containers synchronized to one plugin, and the growth since before
// the adaptation started.
func BenchmarkSyncedMemory(b *testing.B) {
	x := bins(b)
	for _, impl := range []string{"ours", "upstream"} {
		b.Run("ctrs=5000/"+impl, func(b *testing.B) {
			res := runBinary(b, x.runtime(impl), "memory", "-containers", "5000", "-plugin", x.pluginCmd(impl))
			if res.MemAfter == nil || res.MemBefore == nil {
				b.Fatal("no memory result")
			}
			b.ReportMetric(0, "ns/op")
			b.ReportMetric(res.MemAfter.HeapInuseMiB, "heap-MiB")
			b.ReportMetric(res.MemAfter.RSSMiB, "rss-MiB")
			b.ReportMetric(res.MemAfter.HeapInuseMiB-res.MemBefore.HeapInuseMiB, "heap-growth-MiB")
			b.ReportMetric(res.MemAfter.RSSMiB-res.MemBefore.RSSMiB, "rss-growth-MiB")
			b.ReportMetric(loadgen.LoadAvg(), "load1")
		})
	}
}

// runBinary runs a benchmark runtime and decodes its result.
func runBinary(b *testing.B, bin string, args ...string) *loadgen.Result {
	b.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	res, perr := loadgen.ParseResult(out)
	if perr != nil {
		b.Fatalf("%s %v: %v (exit: %v)", bin, args, perr, err)
	}
	return res
}
