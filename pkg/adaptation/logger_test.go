package adaptation

import (
	"context"
	"fmt"
	"path/filepath"
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

func (l *lineRecorder) Debugf(_ context.Context, f string, a ...any) { l.add("debug", f, a) }
func (l *lineRecorder) Infof(_ context.Context, f string, a ...any)  { l.add("info", f, a) }
func (l *lineRecorder) Warnf(_ context.Context, f string, a ...any)  { l.add("warning", f, a) }
func (l *lineRecorder) Errorf(_ context.Context, f string, a ...any) { l.add("error", f, a) }

// A runtime that routes NRI's logging with pkg/log's Set (as runtimes built
// for upstream do) gets the adaptation's lines, even when it sets the logger
// after New.
func TestDefaultLoggerIsPkgLog(t *testing.T) {
	before, after := &lineRecorder{}, &lineRecorder{}
	nrilog.Set(before)
	t.Cleanup(func() { nrilog.Set(nil) })

	sock := shortSocket(t)
	rt := newFakeRuntime()
	r, err := New("log-runtime", "v7", rt.sync, rt.update,
		WithSocketPath(sock),
		WithPluginPath(filepath.Join(filepath.Dir(sock), "no-plugins")),
		WithPluginConfigPath(filepath.Join(filepath.Dir(sock), "no-conf")))
	if err != nil {
		t.Fatal(err)
	}
	nrilog.Set(after)
	if err := r.Start(); err != nil {
		t.Fatal(err)
	}
	r.Stop()

	if !before.has("info: NRI runtime interface created for log-runtime v7") {
		t.Errorf("New did not log through pkg/log: %q", before.lines)
	}
	if !after.has("info: NRI runtime interface starting up") || !after.has("shutting down") {
		t.Errorf("Start and Stop did not log through the logger set after New: %q", after.lines)
	}
}
