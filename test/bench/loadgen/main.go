package loadgen

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"time"
)

// Harness is a runtime with its adaptation created but not started.
type Harness interface {
	Runtime
	Start() error
	Stop()
	// BlockUnblock takes and releases the adaptation's BlockPluginSync
	// hold once.
	BlockUnblock()
	// Hold takes a BlockPluginSync hold, as a runtime operation that takes
	// long (a graceful StopContainer), until release is called.
	Hold() (release func())
}

// Extras is implemented by a harness that measures more than Op latency,
// such as the handover metrics of our adaptation.
type Extras interface {
	Extra() map[string]float64
}

// Config is what a Factory needs to create a harness.
type Config struct {
	Socket string
	// Containers are seeded (in pods of ten) before any plugin connects.
	Containers int
	// FanOut relays notifications to all plugins at once (ours only).
	FanOut bool
}

// ErrUnsupported is returned by a Factory for a configuration its
// implementation cannot run.
var ErrUnsupported = errors.New("not supported by this implementation")

// WarmupOps run before a timed loop of operations.
const WarmupOps = 100

// PluginTimeout is the plugin registration and request timeout both
// benchmark runtimes set.
const PluginTimeout = 30 * time.Second

// Factory creates a harness.
type Factory func(Config) (Harness, error)

// Result is the one JSON line a benchmark runtime prints.
type Result struct {
	Stall    *StallResult    `json:"stall,omitempty"`
	Dispatch *DispatchResult `json:"dispatch,omitempty"`
	Idle     *IdleResult     `json:"idle,omitempty"`
	Sync     *SyncResult     `json:"sync,omitempty"`
	LongStop *LongStopResult `json:"longStop,omitempty"`
	Busy     *BusyResult     `json:"busy,omitempty"`
	Err      string          `json:"err,omitempty"`
}

// IdleResult is what connected idle plugins cost: the runtime's heap and
// RSS growth per plugin, and the plugin process's RSS and heap growth per
// stub (all stubs run in one process).
type IdleResult struct {
	Plugins          int     `json:"plugins"`
	RuntimeHeapKB    float64 `json:"runtimeHeapKB"`
	RuntimeRSSKB     float64 `json:"runtimeRSSKB"`
	StubRSSKB        float64 `json:"stubRSSKB"`
	StubHeapKB       float64 `json:"stubHeapKB"`
	RuntimeHeapMiB   float64 `json:"runtimeHeapMiB"`
	PluginProcRSSMiB float64 `json:"pluginProcRSSMiB"`
}

// SyncResult is one plugin synchronizing with a node of Containers.
type SyncResult struct {
	Containers int `json:"containers"`
	// RegisterMs runs from launching the plugin process to the completion of
	// the first runtime operation it handled.
	RegisterMs float64 `json:"registerMs"`
	// HeapPerCtrB is the runtime's heap growth (after GC) from before the
	// plugin was launched to after it handled its first event, per container.
	HeapPerCtrB  float64 `json:"heapPerCtrB"`
	HeapMiB      float64 `json:"heapMiB"`
	RSSGrowthMiB float64 `json:"rssGrowthMiB"`
	// PeakRSSGrowthMiB is the process's resident high-water mark at the end
	// minus its RSS before the plugin was launched: what synchronizing
	// needed at its peak.
	PeakRSSGrowthMiB float64 `json:"peakRSSGrowthMiB"`
	// RuntimeCPUMs is the runtime process's CPU time over RegisterMs (the
	// operations run meanwhile included): the runtime's share of the
	// work, less disturbed by other work on the machine than RegisterMs.
	RuntimeCPUMs float64 `json:"runtimeCPUMs"`
}

// Main is the command line shared by the benchmark runtimes:
//
//	stall     -containers N -sync-delay D [-predecessor] [-interval D] [-change-every K] -plugin CMD
//	events    -plugins K -n N [-event op|start] [-work D] [-fanout] -plugin CMD
//	blocksync -n N
//	idle      -plugins K -plugin CMD
//	sync      -containers N -plugin CMD
//	longstop  -containers N -hold D [-predecessor] [-interval D] -plugin CMD
//	busy      -containers N -hold D [-predecessor] [-hold-every D] [-hold-for D] [-interval D] [-change-every K] -plugin CMD
//
// CMD is the plugin's command line; PluginFlags are appended to it.
//
// With NRI_BENCH_CPUPROFILE set, the runtime writes a CPU profile there;
// with NRI_BENCH_MEMPROFILE, an allocation profile of the whole run (every
// allocation sampled).
func Main(f Factory) {
	if path := os.Getenv("NRI_BENCH_CPUPROFILE"); path != "" {
		if pf, err := os.Create(path); err == nil {
			if pprof.StartCPUProfile(pf) == nil {
				defer func() { pprof.StopCPUProfile(); pf.Close() }()
			}
		}
	}
	memProfile := os.Getenv("NRI_BENCH_MEMPROFILE")
	if memProfile != "" {
		runtime.MemProfileRate = 1
	}
	res, err := run(f, os.Args[1:])
	if memProfile != "" {
		writeHeapProfile(memProfile)
	}
	if err != nil {
		res = &Result{Err: err.Error()}
	}
	_ = json.NewEncoder(os.Stdout).Encode(res)
	if err != nil {
		pprof.StopCPUProfile()
		os.Exit(1)
	}
}

// opts are the flags of every mode.
type opts struct {
	containers  int
	plugin      string
	syncDelay   time.Duration
	predecessor bool
	interval    time.Duration
	changeEvery int
	warmup      time.Duration
	tail        time.Duration
	plugins     int
	n           int
	event       string
	work        time.Duration
	fanOut      bool
	timeout     time.Duration
	hold        time.Duration
	holdEvery   time.Duration
	holdFor     time.Duration
}

func run(f Factory, args []string) (*Result, error) {
	if len(args) == 0 {
		return nil, fmt.Errorf("usage: stall|events|blocksync|idle|sync|longstop|busy [flags]")
	}
	mode := args[0]
	var o opts
	fs := flag.NewFlagSet(mode, flag.ContinueOnError)
	fs.IntVar(&o.containers, "containers", 1000, "containers the runtime holds before the plugin registers")
	fs.StringVar(&o.plugin, "plugin", "", "plugin command line")
	fs.DurationVar(&o.syncDelay, "sync-delay", 200*time.Millisecond, "stall: time a plugin's full Synchronize takes")
	fs.BoolVar(&o.predecessor, "predecessor", false, "stall: an instance of the plugin is active before the measured one registers")
	fs.DurationVar(&o.interval, "interval", 2*time.Millisecond, "stall: pacing of runtime operations")
	fs.IntVar(&o.changeEvery, "change-every", 1, "stall: only every so many operations create a container, the others only start one")
	fs.DurationVar(&o.warmup, "warmup", 300*time.Millisecond, "stall: operations before the plugin starts")
	fs.DurationVar(&o.tail, "tail", 100*time.Millisecond, "stall: operations after the plugin took over")
	fs.IntVar(&o.plugins, "plugins", 1, "events, idle: number of plugins")
	fs.IntVar(&o.n, "n", 2000, "events, blocksync: operations to time")
	fs.StringVar(&o.event, "event", "op", "events: op (the whole event path) or start (StartContainer only)")
	fs.DurationVar(&o.work, "work", 0, "events: a plugin's own work per StartContainer")
	fs.BoolVar(&o.fanOut, "fanout", false, "events: relay notifications to all plugins at once")
	fs.DurationVar(&o.timeout, "timeout", 120*time.Second, "overall limit")
	fs.DurationVar(&o.hold, "hold", 10*time.Second, "longstop, busy: how long an operation holds BlockPluginSync while the plugin joins")
	fs.DurationVar(&o.holdEvery, "hold-every", 5*time.Millisecond, "busy: pacing of the overlapping BlockPluginSync holders")
	fs.DurationVar(&o.holdFor, "hold-for", 20*time.Millisecond, "busy: how long each overlapping holder keeps the block")
	if err := fs.Parse(args[1:]); err != nil {
		return nil, err
	}
	ctx, cancel := Context(o.timeout)
	defer cancel()

	dir, err := os.MkdirTemp("", "nribench")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	socket := filepath.Join(dir, "nri.sock")

	h, err := f(Config{Socket: socket, Containers: o.containers, FanOut: o.fanOut})
	if err != nil {
		return nil, err
	}
	if err := h.Start(); err != nil {
		return nil, err
	}
	s := &session{ctx: ctx, h: h, socket: socket, o: o}
	defer s.stop()

	switch mode {
	case "stall":
		return s.stall()
	case "events":
		return s.events()
	case "blocksync":
		d := BlockSync(h, o.n)
		return &Result{Dispatch: d}, nil
	case "idle":
		return s.idle()
	case "sync":
		return s.sync()
	case "longstop":
		return s.longStop()
	case "busy":
		return s.busy()
	default:
		return nil, fmt.Errorf("unknown mode %q", mode)
	}
}

// session is one benchmark runtime's run: its harness and the plugin
// processes it started.
type session struct {
	ctx    context.Context
	h      Harness
	socket string
	o      opts
	procs  []*Proc
}

func (s *session) stop() {
	StopAll(s.procs)
	s.h.Stop()
}

func (s *session) launch(fl PluginFlags) (*Proc, error) {
	fl.Socket = s.socket
	p, err := StartPlugin(SplitCommand(s.o.plugin), fl)
	if err == nil {
		s.procs = append(s.procs, p)
	}
	return p, err
}

// predecessorFirst launches, with -predecessor, the instance a measured
// plugin takes over from, and waits until it handles events.
func (s *session) predecessorFirst() error {
	if !s.o.predecessor {
		return nil
	}
	old := PluginFlags{Name: "bench", Idx: "10", Instance: "old", Version: "v1", Generation: 1}
	if _, err := s.launch(old); err != nil {
		return err
	}
	return WaitHandled(s.ctx, s.h, 60*time.Second, HasMarks("bench"))
}

func (s *session) stall() (*Result, error) {
	fl := PluginFlags{Name: "bench", Idx: "10", Instance: "new", Version: "v2", Generation: 2, SyncDelay: s.o.syncDelay}
	if err := s.predecessorFirst(); err != nil {
		return nil, err
	}
	var p *Proc
	cfg := StallConfig{Interval: s.o.interval, Warmup: s.o.warmup, Tail: s.o.tail, Timeout: 90 * time.Second,
		ChangeEvery: s.o.changeEvery, Name: fl.Name, Instance: fl.Instance}
	st, err := Stall(s.ctx, s.h, cfg, func() error {
		var err error
		p, err = s.launch(fl)
		return err
	})
	if err != nil {
		return nil, err
	}
	st.Extra = map[string]float64{}
	if d, ok := p.Between("start", "active"); ok {
		st.Extra["startToActiveMs"] = ms(d)
		st.Extra["deltaObjects"] = 0 // unless a delta round came
	}
	if d, ok := p.Between("start", "synced"); ok {
		st.Extra["startToSyncedMs"] = ms(d)
	}
	for _, ev := range p.Events() {
		if ev.Ev == "sync" && ev.Delta {
			st.Extra["deltaObjects"] = float64(ev.Objects)
		}
	}
	if x, ok := s.h.(Extras); ok {
		for k, v := range x.Extra() {
			st.Extra[k] = v
		}
	}
	return &Result{Stall: st}, nil
}

// longStop: a plugin joins, or with -predecessor takes over, while one
// operation holds BlockPluginSync for -hold (a graceful stop) and others
// take and release it every -interval.
func (s *session) longStop() (*Result, error) {
	fl := PluginFlags{Name: "bench", Idx: "10", Instance: "new", Version: "v2", Generation: 2}
	if err := s.predecessorFirst(); err != nil {
		return nil, err
	}
	cfg := LongStopConfig{Interval: s.o.interval, Warmup: s.o.warmup, Hold: s.o.hold, Tail: s.o.tail,
		Timeout: 60 * time.Second, Name: fl.Name, Instance: fl.Instance}
	res, err := LongStop(s.ctx, s.h, cfg, func() error {
		_, err := s.launch(fl)
		return err
	})
	if err != nil {
		return nil, err
	}
	if x, ok := s.h.(Extras); ok {
		res.Extra = x.Extra()
	}
	return &Result{LongStop: res}, nil
}

// busy: a plugin takes over (-predecessor) or joins while BlockPluginSync
// is never idle: overlapping holders every -hold-every for -hold-for each,
// one holder for -hold (a graceful stop) from right before the launch, and
// runtime operations every -interval.
func (s *session) busy() (*Result, error) {
	fl := PluginFlags{Name: "bench", Idx: "10", Instance: "new", Version: "v2", Generation: 2, SyncDelay: s.o.syncDelay}
	if err := s.predecessorFirst(); err != nil {
		return nil, err
	}
	var p *Proc
	cfg := BusyConfig{Interval: s.o.interval, ChangeEvery: s.o.changeEvery, HoldEvery: s.o.holdEvery, HoldFor: s.o.holdFor,
		Stop: s.o.hold, Warmup: s.o.warmup, Tail: s.o.tail, Timeout: 90 * time.Second, Name: fl.Name, Instance: fl.Instance}
	res, err := Busy(s.ctx, s.h, cfg, func() error {
		var err error
		p, err = s.launch(fl)
		return err
	})
	if err != nil {
		return nil, err
	}
	launched, handled := res.Extra["launchedUnixMs"], res.Extra["handledUnixMs"]
	if ev, ok := p.First("synced"); ok {
		at := float64(ev.UnixNano) / 1e6
		res.Extra["launchToSyncedMs"] = at - launched
		res.Extra["syncedToHandledMs"] = handled - at
		if act, ok := p.First("active"); ok {
			res.Extra["syncedToActiveMs"] = float64(act.UnixNano)/1e6 - at
		}
	}
	if x, ok := s.h.(Extras); ok {
		for k, v := range x.Extra() {
			res.Extra[k] = v
		}
	}
	return &Result{Busy: res}, nil
}

func (s *session) events() (*Result, error) {
	var names []string
	for i := 0; i < s.o.plugins; i++ {
		name := fmt.Sprintf("bench%d", i)
		names = append(names, name)
		if _, err := s.launch(PluginFlags{Name: name, Idx: fmt.Sprintf("%02d", 10+i), Instance: "i", Work: s.o.work}); err != nil {
			return nil, err
		}
	}
	if err := WaitHandled(s.ctx, s.h, 60*time.Second, HasMarks(names...)); err != nil {
		return nil, err
	}
	op := func(ctx context.Context, i int) error {
		_, err := s.h.Op(ctx, i)
		return err
	}
	if s.o.event == "start" {
		op = s.h.Notify
	}
	// warm up both sides' code paths, as the floor does
	for i := 0; i < WarmupOps; i++ {
		if err := op(s.ctx, -1-i); err != nil {
			return nil, err
		}
	}
	d, err := Dispatch(s.ctx, op, s.o.n)
	if err != nil {
		return nil, err
	}
	return &Result{Dispatch: d}, nil
}

func (s *session) idle() (*Result, error) {
	before := Memory()
	p, err := s.launch(PluginFlags{Name: "idle", Instance: "i", Count: s.o.plugins})
	if err != nil {
		return nil, err
	}
	var names []string
	for i := 0; i < s.o.plugins; i++ {
		names = append(names, CountName("idle", i))
	}
	if err := WaitHandled(s.ctx, s.h, 60*time.Second, HasMarks(names...)); err != nil {
		return nil, err
	}
	after := Memory()
	mem, err := p.Measure(s.ctx)
	if err != nil {
		return nil, err
	}
	start, ok := p.First("start")
	if !ok {
		return nil, fmt.Errorf("plugin reported no start")
	}
	n := float64(s.o.plugins)
	return &Result{Idle: &IdleResult{
		Plugins:          s.o.plugins,
		RuntimeHeapKB:    (after.HeapInuseMiB - before.HeapInuseMiB) * 1024 / n,
		RuntimeRSSKB:     (after.RSSMiB - before.RSSMiB) * 1024 / n,
		StubRSSKB:        float64(mem.RSS-start.RSS) / 1024 / n,
		StubHeapKB:       float64(mem.Heap-start.Heap) / 1024 / n,
		RuntimeHeapMiB:   after.HeapInuseMiB,
		PluginProcRSSMiB: float64(mem.RSS) / (1 << 20),
	}}, nil
}

func (s *session) sync() (*Result, error) {
	before := Memory()
	cpu := CPUTime()
	launched := time.Now()
	if _, err := s.launch(PluginFlags{Name: "bench", Idx: "10", Instance: "i"}); err != nil {
		return nil, err
	}
	if err := WaitHandled(s.ctx, s.h, 90*time.Second, HasMarks("bench")); err != nil {
		return nil, err
	}
	reg := time.Since(launched)
	cpu = CPUTime() - cpu
	after := Memory()
	return &Result{Sync: &SyncResult{
		Containers:       s.o.containers,
		RegisterMs:       ms(reg),
		HeapPerCtrB:      (after.HeapInuseMiB - before.HeapInuseMiB) * (1 << 20) / float64(s.o.containers),
		HeapMiB:          after.HeapInuseMiB,
		RSSGrowthMiB:     after.RSSMiB - before.RSSMiB,
		PeakRSSGrowthMiB: mib(peakRSSBytes()) - before.RSSMiB,
		RuntimeCPUMs:     ms(cpu),
	}}, nil
}

// writeHeapProfile writes the allocation profile to path; a failure only
// loses the profile.
func writeHeapProfile(path string) {
	pf, err := os.Create(path)
	if err != nil {
		return
	}
	defer pf.Close()
	_ = pprof.Lookup("allocs").WriteTo(pf, 0)
}

// ParseResult decodes the last JSON line of a benchmark runtime's output.
func ParseResult(out []byte) (*Result, error) {
	lines := splitLines(out)
	for i := len(lines) - 1; i >= 0; i-- {
		res := &Result{}
		if json.Unmarshal(lines[i], res) == nil {
			if res.Err != "" {
				return nil, fmt.Errorf("benchmark runtime: %s", res.Err)
			}
			return res, nil
		}
	}
	return nil, fmt.Errorf("no result in output: %q", out)
}

func splitLines(b []byte) [][]byte {
	var out [][]byte
	start := 0
	for i, c := range b {
		if c == '\n' {
			if i > start {
				out = append(out, b[start:i])
			}
			start = i + 1
		}
	}
	if start < len(b) {
		out = append(out, b[start:])
	}
	return out
}
