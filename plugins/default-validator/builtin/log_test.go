package builtin

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	nrilog "github.com/nri-handover/nri/pkg/log"
)

type lines struct {
	mu  sync.Mutex
	all []string
}

func (l *lines) add(f string, a []any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.all = append(l.all, fmt.Sprintf(f, a...))
}

func (l *lines) Debugf(_ context.Context, f string, a ...any) { l.add(f, a) }
func (l *lines) Infof(_ context.Context, f string, a ...any)  { l.add(f, a) }
func (l *lines) Warnf(_ context.Context, f string, a ...any)  { l.add(f, a) }
func (l *lines) Errorf(_ context.Context, f string, a ...any) { l.add(f, a) }

// The validator runs in the runtime: its lines go where the runtime's NRI
// lines go (pkg/log), not to log/slog's default.
func TestLogsThroughPkgLog(t *testing.T) {
	rec := &lines{}
	nrilog.Set(rec)
	t.Cleanup(func() { nrilog.Set(nil) })
	if GetDefaultValidator(nil) != nil {
		t.Fatal("a validator without configuration")
	}
	if got := strings.Join(rec.all, "\n"); !strings.Contains(got, "default validator is disabled") {
		t.Fatalf("logged %q", got)
	}
}
