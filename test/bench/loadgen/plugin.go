package loadgen

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"syscall"
	"time"
)

// PluginFlags are the flags every benchmark plugin accepts, whichever stub
// it is built on.
type PluginFlags struct {
	Socket     string
	Name, Idx  string
	Instance   string
	Version    string
	Generation uint64
	// SyncDelay is how long a full Synchronize round takes, standing for the
	// plugin's reconciliation. A delta round costs the same per object.
	SyncDelay time.Duration
	// Work is how long the plugin takes to handle StartContainer, standing
	// for its own work on a notification.
	Work time.Duration
	// Count plugins run in the one process (named by CountName), for
	// measuring what an idle plugin costs; 0 or 1 runs one named Name.
	Count int
}

// Args renders f for the plugin's command line.
func (f PluginFlags) Args() []string {
	args := []string{"-socket", f.Socket, "-name", f.Name, "-idx", f.Idx, "-instance", f.Instance,
		"-sync-delay", f.SyncDelay.String()}
	if f.Version != "" {
		args = append(args, "-plugin-version", f.Version)
	}
	if f.Generation != 0 {
		args = append(args, "-generation", strconv.FormatUint(f.Generation, 10))
	}
	if f.Work != 0 {
		args = append(args, "-work", f.Work.String())
	}
	if f.Count > 1 {
		args = append(args, "-count", strconv.Itoa(f.Count))
	}
	return args
}

// PluginEvent is a line a benchmark plugin prints on stdout.
type PluginEvent struct {
	Ev       string `json:"ev"` // start, sync, synced, active, mem, shutdown
	UnixNano int64  `json:"t"`
	Instance string `json:"instance,omitempty"`
	Objects  int    `json:"objects,omitempty"`
	Delta    bool   `json:"delta,omitempty"`
	// RSS and Heap (in use) of the plugin process after a collection, in
	// bytes: on start and on mem.
	RSS  uint64 `json:"rss,omitempty"`
	Heap uint64 `json:"heap,omitempty"`
}

// Emitter prints plugin events, one JSON object a line.
type Emitter struct {
	mu       sync.Mutex
	w        io.Writer
	instance string
}

// NewEmitter prints events of instance to stdout.
func NewEmitter(instance string) *Emitter { return &Emitter{w: os.Stdout, instance: instance} }

// Emit prints one event stamped with the current time.
func (e *Emitter) Emit(ev PluginEvent) {
	ev.UnixNano = time.Now().UnixNano()
	ev.Instance = e.instance
	buf, _ := json.Marshal(ev)
	e.mu.Lock()
	defer e.mu.Unlock()
	_, _ = e.w.Write(append(buf, '\n'))
}

// SyncCost is the simulated reconciliation time for a round of objects, given
// that a full round of full objects takes delay. A plugin that has seen no
// full round yet pays the full delay.
func SyncCost(delay time.Duration, objects, full int) time.Duration {
	if full <= 0 || objects >= full {
		return delay
	}
	return time.Duration(int64(delay) * int64(objects) / int64(full))
}

// Proc is a running plugin process and the events it printed.
type Proc struct {
	cmd  *exec.Cmd
	done chan struct{}

	mu     sync.Mutex
	events []PluginEvent
	more   chan struct{} // closed and replaced when an event arrives
}

// StartPlugin starts argv followed by flags.
func StartPlugin(argv []string, f PluginFlags) (*Proc, error) {
	if len(argv) == 0 {
		return nil, fmt.Errorf("no plugin command")
	}
	cmd := exec.Command(argv[0], append(append([]string(nil), argv[1:]...), f.Args()...)...)
	cmd.Stderr = io.Discard
	if os.Getenv("NRI_BENCH_VERBOSE") != "" {
		cmd.Stderr = os.Stderr
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	p := &Proc{cmd: cmd, done: make(chan struct{}), more: make(chan struct{})}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start plugin %s: %w", argv[0], err)
	}
	go func() {
		defer close(p.done)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			var ev PluginEvent
			if json.Unmarshal(sc.Bytes(), &ev) == nil && ev.Ev != "" {
				p.mu.Lock()
				p.events = append(p.events, ev)
				close(p.more)
				p.more = make(chan struct{})
				p.mu.Unlock()
			}
		}
	}()
	return p, nil
}

// Events returns what the plugin printed so far.
func (p *Proc) Events() []PluginEvent {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]PluginEvent(nil), p.events...)
}

// First returns the first event ev the plugin printed.
func (p *Proc) First(ev string) (PluginEvent, bool) {
	for _, e := range p.Events() {
		if e.Ev == ev {
			return e, true
		}
	}
	return PluginEvent{}, false
}

// Measure asks the plugin process for its memory (SIGUSR1) and waits for
// the answer.
func (p *Proc) Measure(ctx context.Context) (PluginEvent, error) {
	p.mu.Lock()
	seen := len(p.events)
	p.mu.Unlock()
	if err := p.cmd.Process.Signal(syscall.SIGUSR1); err != nil {
		return PluginEvent{}, err
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	for {
		p.mu.Lock()
		for _, e := range p.events[seen:] {
			if e.Ev == "mem" {
				p.mu.Unlock()
				return e, nil
			}
		}
		more := p.more
		p.mu.Unlock()
		select {
		case <-more:
		case <-p.done:
			return PluginEvent{}, fmt.Errorf("plugin exited before reporting its memory")
		case <-ctx.Done():
			return PluginEvent{}, fmt.Errorf("plugin memory: %w", ctx.Err())
		}
	}
}

// Between returns the time from the first event a to the first later event
// b, and whether both were seen.
func (p *Proc) Between(a, b string) (time.Duration, bool) {
	var ta int64
	for _, ev := range p.Events() {
		switch {
		case ta == 0 && ev.Ev == a:
			ta = ev.UnixNano
		case ta != 0 && ev.Ev == b:
			return time.Duration(ev.UnixNano - ta), true
		}
	}
	return 0, false
}

// Stop kills the plugin and waits for it.
func (p *Proc) Stop() {
	_ = p.cmd.Process.Kill()
	<-p.done
	_ = p.cmd.Wait()
}

// StopAll stops every process in ps.
func StopAll(ps []*Proc) {
	for _, p := range ps {
		p.Stop()
	}
}

// Context returns a context ending after d, for a whole benchmark process.
func Context(d time.Duration) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), d)
}
