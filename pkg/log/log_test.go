package log_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sirupsen/logrus"

	nrilog "github.com/nri-handover/nri/pkg/log"
)

// recorder is a Logger keeping "level: message" lines.
type recorder struct {
	mu    sync.Mutex
	lines []string
}

func (r *recorder) add(level, format string, args []interface{}) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.lines = append(r.lines, level+": "+fmt.Sprintf(format, args...))
}

func (r *recorder) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.lines)
}

func (r *recorder) Debugf(_ context.Context, f string, a ...interface{}) { r.add("debug", f, a) }
func (r *recorder) Infof(_ context.Context, f string, a ...interface{})  { r.add("info", f, a) }
func (r *recorder) Warnf(_ context.Context, f string, a ...interface{})  { r.add("warning", f, a) }
func (r *recorder) Errorf(_ context.Context, f string, a ...interface{}) { r.add("error", f, a) }

// captureLogrus points logrus's standard logger, as a runtime would, at a
// buffer with JSON output and the given level, until the test ends.
func captureLogrus(t *testing.T, level logrus.Level) *bytes.Buffer {
	t.Helper()
	std := logrus.StandardLogger()
	out, formatter, oldLevel := std.Out, std.Formatter, std.GetLevel()
	buf := &bytes.Buffer{}
	std.SetOutput(buf)
	std.SetFormatter(&logrus.JSONFormatter{})
	std.SetLevel(level)
	t.Cleanup(func() {
		std.SetOutput(out)
		std.SetFormatter(formatter)
		std.SetLevel(oldLevel)
	})
	return buf
}

func TestDefaultWritesThroughLogrus(t *testing.T) {
	buf := captureLogrus(t, logrus.InfoLevel)
	ctx := context.Background()
	nrilog.Debugf(ctx, "hidden %d", 1)
	nrilog.Infof(ctx, "plugin %s registered", "10-test")
	nrilog.Warnf(ctx, "slow %s", "plugin")
	nrilog.Get().Errorf(nil, "failed: %v", "boom") //nolint:staticcheck // a nil context must not panic

	var got []string
	dec := json.NewDecoder(buf)
	for dec.More() {
		var line struct{ Level, Msg string }
		if err := dec.Decode(&line); err != nil {
			t.Fatal(err)
		}
		got = append(got, line.Level+": "+line.Msg)
	}
	want := []string{"info: plugin 10-test registered", "warning: slow plugin", "error: failed: boom"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("logrus got %q, want %q (the runtime's level and format apply)", got, want)
	}
}

func TestSetAndGet(t *testing.T) {
	buf := captureLogrus(t, logrus.DebugLevel)
	rec := &recorder{}
	nrilog.Set(rec)
	t.Cleanup(func() { nrilog.Set(nil) })
	if nrilog.Get() != nrilog.Logger(rec) {
		t.Fatal("Get does not return what Set was given")
	}
	ctx := context.Background()
	nrilog.Debugf(ctx, "d%d", 1)
	nrilog.Infof(ctx, "i%d", 2)
	nrilog.Warnf(ctx, "w%d", 3)
	nrilog.Errorf(ctx, "e%d", 4)
	if want := "[debug: d1 info: i2 warning: w3 error: e4]"; fmt.Sprint(rec.lines) != want {
		t.Fatalf("recorded %v, want %s", rec.lines, want)
	}
	if buf.Len() != 0 {
		t.Fatalf("logrus still written to: %s", buf)
	}

	nrilog.Set(nil)
	nrilog.Infof(ctx, "back")
	if !bytes.Contains(buf.Bytes(), []byte(`"msg":"back"`)) {
		t.Fatalf("Set(nil) did not restore the default: %q", buf)
	}
}

// TestSetWhileLogging races Set against logging. Every line logged while
// loggers are swapped must land in exactly one of them (none lost, none
// written twice), a goroutine's lines must never go back to a logger that
// was replaced (Set is a single atomic store, observed in order), and every
// logger Set must receive the lines logged after it was set; -race checks
// that the swap itself is not a data race.
func TestSetWhileLogging(t *testing.T) {
	buf := captureLogrus(t, logrus.InfoLevel) // the default gets lines too
	t.Cleanup(func() { nrilog.Set(nil) })
	const (
		loggers = 3
		sets    = 50
	)
	// recs[0] stands for the default (logrus); recs[k] is the k-th Set.
	recs := make([]*recorder, sets+1)
	for k := 1; k <= sets; k++ {
		recs[k] = &recorder{}
	}
	var (
		stop   atomic.Bool
		logged [loggers]int
		wg     sync.WaitGroup
	)
	for g := range loggers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			n := 0
			for ; !stop.Load() || n < 10; n++ {
				nrilog.Infof(context.Background(), "g%d-%d", g, n)
			}
			logged[g] = n
		}()
	}
	deadline := time.Now().Add(10 * time.Second)
	for k := 1; k <= sets; k++ {
		nrilog.Set(recs[k])
		// Wait for a line in the new logger, so that every Set races
		// with lines being logged (and a lost logger shows).
		for recs[k].count() == 0 && time.Now().Before(deadline) {
			runtime.Gosched()
		}
	}
	stop.Store(true)
	wg.Wait()

	// where[g][n] is the index of the logger line n of goroutine g went to.
	where := make([][]int, loggers)
	for g := range where {
		where[g] = make([]int, logged[g])
		for n := range where[g] {
			where[g][n] = -1
		}
	}
	land := func(k int, msg string) {
		var g, n int
		if _, err := fmt.Sscanf(msg, "g%d-%d", &g, &n); err != nil || g < 0 || g >= loggers || n < 0 || n >= logged[g] {
			t.Fatalf("logger %d got a line nobody logged: %q (%v)", k, msg, err)
		}
		if where[g][n] != -1 {
			t.Fatalf("line %q in logger %d and logger %d", msg, where[g][n], k)
		}
		where[g][n] = k
	}
	dec := json.NewDecoder(buf)
	for dec.More() {
		var line struct{ Level, Msg string }
		if err := dec.Decode(&line); err != nil {
			t.Fatal(err)
		}
		land(0, line.Msg)
	}
	for k := 1; k <= sets; k++ {
		if recs[k].count() == 0 {
			t.Errorf("logger %d of %d (set while lines were logged) got no line", k, sets)
		}
		for _, l := range recs[k].lines {
			msg, ok := strings.CutPrefix(l, "info: ")
			if !ok {
				t.Fatalf("logger %d got %q, want an info line", k, l)
			}
			land(k, msg)
		}
	}
	for g := range where {
		for n, k := range where[g] {
			if k == -1 {
				t.Fatalf("line g%d-%d (of %d) landed in no logger", g, n, logged[g])
			}
			if n > 0 && k < where[g][n-1] {
				t.Fatalf("line g%d-%d went to logger %d after line %d went to logger %d, set later", g, n, k, n-1, where[g][n-1])
			}
		}
	}
	if got := nrilog.Get(); got != nrilog.Logger(recs[sets]) {
		t.Fatalf("Get after the race returns %T %p, want the last logger Set %p", got, got, recs[sets])
	}
}
