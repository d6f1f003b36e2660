package log_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"

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

func TestSetWhileLogging(t *testing.T) {
	captureLogrus(t, logrus.PanicLevel)
	t.Cleanup(func() { nrilog.Set(nil) })
	var wg sync.WaitGroup
	for i := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 100 {
				if i%2 == 0 {
					nrilog.Set(&recorder{})
				} else {
					nrilog.Infof(context.Background(), "x")
				}
			}
		}()
	}
	wg.Wait()
}
