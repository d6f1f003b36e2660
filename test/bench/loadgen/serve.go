package loadgen

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"
)

// CountName is the name of plugin i of a process running several.
func CountName(name string, i int) string { return fmt.Sprintf("%s%d", name, i) }

// Serve is the main loop of a benchmark plugin process, whichever stub it
// is built on. It prints the start event with the process's memory, answers
// SIGUSR1 with a mem event, and runs count plugins (at least one) through
// run, which blocks while the plugin named name with index idx runs and
// calls synced once the plugin was synchronized. With count > 1 the plugins
// are named by CountName and indexed by their number, and each starts once
// its predecessor was synchronized (or after a bound): a hundred plugins
// registering at once overwhelm upstream's runtime on a busy machine (its
// registration timeouts close connections, on which it can panic), and the
// benchmark measures idle plugins, not a registration storm. It returns when
// the first plugin stops.
func Serve(emit *Emitter, name, idx string, count int, run func(name, idx string, synced func()) error) error {
	m := Memory()
	emit.Emit(PluginEvent{Ev: "start", RSS: m.rss, Heap: m.heap})
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGUSR1)
	go func() {
		for range sig {
			m := Memory()
			emit.Emit(PluginEvent{Ev: "mem", RSS: m.rss, Heap: m.heap})
		}
	}()
	if count <= 1 {
		return run(name, idx, func() {})
	}
	errs := make(chan error, count)
	for i := 0; i < count; i++ {
		ready := make(chan struct{})
		var once sync.Once
		go func() {
			errs <- run(CountName(name, i), fmt.Sprintf("%02d", i), func() { once.Do(func() { close(ready) }) })
		}()
		t := time.NewTimer(30 * time.Second)
		select {
		case <-ready:
		case err := <-errs:
			t.Stop()
			return err
		case <-t.C:
		}
		t.Stop()
	}
	return <-errs
}

// Work waits d, standing for a plugin's own work on an event: a timer, so
// that a plugin process handling many events at once is not limited by a
// CPU it would not need for waiting.
func Work(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return nil
	}
	return wait(ctx, d)
}
