package loadgen

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime/pprof"
	"time"
)

// Harness is a runtime with its adaptation created but not started.
type Harness interface {
	Runtime
	Start() error
	Stop()
}

// Extras is implemented by a harness that measures more than Op latency,
// such as the handover metrics of our adaptation.
type Extras interface {
	Extra() map[string]float64
}

// Factory creates a harness listening on socket and holding containers
// containers (in pods of ten) before any plugin connects.
type Factory func(socket string, containers int) (Harness, error)

// Result is the one JSON line a benchmark runtime prints.
type Result struct {
	Stall    *StallResult    `json:"stall,omitempty"`
	Dispatch *DispatchResult `json:"dispatch,omitempty"`
	// MemBefore is taken with the state seeded and the adaptation created,
	// MemAfter once the plugin is synchronized and handling events.
	MemBefore *MemResult `json:"memBefore,omitempty"`
	MemAfter  *MemResult `json:"memAfter,omitempty"`
	Err       string     `json:"err,omitempty"`
}

// Main is the command line shared by the benchmark runtimes:
//
//	stall    -containers N -sync-delay D [-predecessor] -plugin CMD
//	dispatch -plugins K -n N -plugin CMD
//	memory   -containers N -plugin CMD
//
// CMD is the plugin's command line; PluginFlags are appended to it.
//
// With NRI_BENCH_CPUPROFILE set, the runtime writes a CPU profile there.
func Main(f Factory) {
	if path := os.Getenv("NRI_BENCH_CPUPROFILE"); path != "" {
		if pf, err := os.Create(path); err == nil {
			if pprof.StartCPUProfile(pf) == nil {
				defer func() { pprof.StopCPUProfile(); pf.Close() }()
			}
		}
	}
	res, err := run(f, os.Args[1:])
	if err != nil {
		res = &Result{Err: err.Error()}
	}
	_ = json.NewEncoder(os.Stdout).Encode(res)
	if err != nil {
		pprof.StopCPUProfile()
		os.Exit(1)
	}
}

func run(f Factory, args []string) (*Result, error) {
	if len(args) == 0 {
		return nil, fmt.Errorf("usage: stall|dispatch|memory [flags]")
	}
	mode := args[0]
	fs := flag.NewFlagSet(mode, flag.ContinueOnError)
	var (
		containers  = fs.Int("containers", 1000, "containers the runtime holds before the plugin registers")
		plugin      = fs.String("plugin", "", "plugin command line")
		syncDelay   = fs.Duration("sync-delay", 200*time.Millisecond, "time a plugin's full Synchronize takes")
		predecessor = fs.Bool("predecessor", false, "stall: an instance of the plugin is active before the measured one registers")
		interval    = fs.Duration("interval", 2*time.Millisecond, "stall: pacing of runtime operations")
		warmup      = fs.Duration("warmup", 300*time.Millisecond, "stall: operations before the plugin starts")
		tail        = fs.Duration("tail", 100*time.Millisecond, "stall: operations after the plugin took over")
		plugins     = fs.Int("plugins", 1, "dispatch: number of plugins")
		n           = fs.Int("n", 2000, "dispatch: operations to time")
		timeout     = fs.Duration("timeout", 60*time.Second, "overall limit")
	)
	if err := fs.Parse(args[1:]); err != nil {
		return nil, err
	}
	ctx, cancel := Context(*timeout)
	defer cancel()

	dir, err := os.MkdirTemp("", "nribench")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	socket := filepath.Join(dir, "nri.sock")

	h, err := f(socket, *containers)
	if err != nil {
		return nil, err
	}
	res := &Result{}
	if mode == "memory" {
		m := Memory()
		res.MemBefore = &m
	}
	if err := h.Start(); err != nil {
		return nil, err
	}
	var procs []*Proc
	defer func() { StopAll(procs); h.Stop() }()
	launch := func(fl PluginFlags) (*Proc, error) {
		fl.Socket = socket
		p, err := StartPlugin(SplitCommand(*plugin), fl)
		if err == nil {
			procs = append(procs, p)
		}
		return p, err
	}

	switch mode {
	case "stall":
		fl := PluginFlags{Name: "bench", Idx: "10", Instance: "new", Version: "v2", Generation: 2, SyncDelay: *syncDelay}
		if *predecessor {
			old := PluginFlags{Name: "bench", Idx: "10", Instance: "old", Version: "v1", Generation: 1}
			if _, err := launch(old); err != nil {
				return nil, err
			}
			if err := WaitHandled(ctx, h, 30*time.Second, HasMarks("bench")); err != nil {
				return nil, err
			}
		}
		var p *Proc
		cfg := StallConfig{Interval: *interval, Warmup: *warmup, Tail: *tail, Timeout: 45 * time.Second,
			Name: fl.Name, Instance: fl.Instance}
		st, err := Stall(ctx, h, cfg, func() error {
			var err error
			p, err = launch(fl)
			return err
		})
		if err != nil {
			return nil, err
		}
		st.Extra = map[string]float64{}
		if d, ok := p.Between("start", "active"); ok {
			st.Extra["startToActiveMs"] = ms(d)
		}
		if d, ok := p.Between("start", "synced"); ok {
			st.Extra["startToSyncedMs"] = ms(d)
		}
		if x, ok := h.(Extras); ok {
			for k, v := range x.Extra() {
				st.Extra[k] = v
			}
		}
		res.Stall = st
	case "dispatch":
		var names []string
		for i := 0; i < *plugins; i++ {
			name := fmt.Sprintf("bench%d", i)
			names = append(names, name)
			if _, err := launch(PluginFlags{Name: name, Idx: fmt.Sprintf("%02d", 10+i), Instance: "i"}); err != nil {
				return nil, err
			}
		}
		if err := WaitHandled(ctx, h, 30*time.Second, HasMarks(names...)); err != nil {
			return nil, err
		}
		d, err := Dispatch(ctx, h, *n)
		if err != nil {
			return nil, err
		}
		res.Dispatch = d
	case "memory":
		if _, err := launch(PluginFlags{Name: "bench", Idx: "10", Instance: "i"}); err != nil {
			return nil, err
		}
		if err := WaitHandled(ctx, h, 30*time.Second, HasMarks("bench")); err != nil {
			return nil, err
		}
		m := Memory()
		res.MemAfter = &m
	default:
		return nil, fmt.Errorf("unknown mode %q", mode)
	}
	return res, nil
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
