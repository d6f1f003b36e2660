package stub

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	nrilog "github.com/nri-handover/nri/pkg/log"
)

// lineRecorder is a Logger keeping "level: message" lines.
type lineRecorder struct {
	mu    sync.Mutex
	lines []string
}

func (l *lineRecorder) add(level, f string, a []any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, level+": "+fmt.Sprintf(f, a...))
}

func (l *lineRecorder) has(sub string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, line := range l.lines {
		if strings.Contains(line, sub) {
			return true
		}
	}
	return false
}

func (l *lineRecorder) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return fmt.Sprintf("%q", l.lines)
}

func (l *lineRecorder) Debugf(_ context.Context, f string, a ...any) { l.add("debug", f, a) }
func (l *lineRecorder) Infof(_ context.Context, f string, a ...any)  { l.add("info", f, a) }
func (l *lineRecorder) Warnf(_ context.Context, f string, a ...any)  { l.add("warning", f, a) }
func (l *lineRecorder) Errorf(_ context.Context, f string, a ...any) { l.add("error", f, a) }

// A plugin that routes NRI's logging with pkg/log's Set, as plugins built for
// upstream do, gets the stub's lines without WithLogger: New's through the
// logger set before New, and the connection's through one set after it.
func TestDefaultLoggerIsPkgLog(t *testing.T) {
	before, after := &lineRecorder{}, &lineRecorder{}
	nrilog.Set(before)
	t.Cleanup(func() { nrilog.Set(nil) })

	rconn, pconn := socketPair(t)
	s, err := New(newTestPlugin(), WithPluginName("logged"), WithPluginIdx("10"), WithConnection(pconn))
	if err != nil {
		t.Fatal(err)
	}
	if !before.has("info: created plugin 10-logged") {
		t.Errorf("New did not log through pkg/log: %s", before)
	}
	if got := s.Logger(); got != nrilog.Logger(before) {
		t.Errorf("Logger() = %T, want pkg/log's logger", got)
	}

	nrilog.Set(after)
	if got := s.Logger(); got != nrilog.Logger(after) {
		t.Errorf("Logger() after log.Set = %T, want the logger set", got)
	}
	rt := newFakeRuntime(t, rconn)
	runStub(t, s, context.Background())
	rt.connect(true)
	if !after.has("info: registering plugin 10-logged") || !after.has("info: plugin 10-logged subscribes to") {
		t.Errorf("the connection did not log through the logger set after New: %s", after)
	}
}

// A plugin may wrap the stub's logger and make the wrapper pkg/log's logger;
// the stub's lines then go through the wrapper once, not round in a circle.
func TestWrappedDefaultLoggerDoesNotRecurse(t *testing.T) {
	rec := &lineRecorder{}
	nrilog.Set(rec)
	t.Cleanup(func() { nrilog.Set(nil) })
	s, err := New(onlyCreate{}, WithPluginName("x"), WithPluginIdx("01"))
	if err != nil {
		t.Fatal(err)
	}
	nrilog.Set(prefixLogger{s.Logger()})
	s.(*stub).logger.Infof(context.Background(), "hello")
	if !rec.has("info: wrapped: hello") {
		t.Errorf("got %s", rec)
	}
}

type prefixLogger struct{ Logger }

func (p prefixLogger) Infof(ctx context.Context, f string, a ...any) {
	p.Logger.Infof(ctx, "wrapped: "+f, a...)
}

// WithLogger still replaces pkg/log for this stub, e.g. with slog.
func TestWithLoggerOverridesPkgLog(t *testing.T) {
	global, own := &lineRecorder{}, &lineRecorder{}
	nrilog.Set(global)
	t.Cleanup(func() { nrilog.Set(nil) })
	s, err := New(onlyCreate{}, WithPluginName("x"), WithPluginIdx("01"), WithLogger(own))
	if err != nil {
		t.Fatal(err)
	}
	if s.Logger() != Logger(own) {
		t.Errorf("Logger() = %T, want the one given", s.Logger())
	}
	if !own.has("created plugin 01-x") || global.has("created plugin") {
		t.Errorf("own %s, pkg/log %s", own, global)
	}
}
