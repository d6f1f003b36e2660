package stub

import (
	"context"
	"fmt"
	"log/slog"
)

// Logger is what the stub logs through. Its method set is upstream's
// nri log.Logger, so a logger written for upstream plugs in unchanged.
type Logger interface {
	Debugf(ctx context.Context, format string, args ...any)
	Infof(ctx context.Context, format string, args ...any)
	Warnf(ctx context.Context, format string, args ...any)
	Errorf(ctx context.Context, format string, args ...any)
}

// slogLogger adapts log/slog, the default, so plugins get structured output
// without choosing a logging library.
type slogLogger struct{ l *slog.Logger }

// NewSlogLogger returns a Logger writing to l (slog.Default() if nil).
func NewSlogLogger(l *slog.Logger) Logger {
	if l == nil {
		l = slog.Default()
	}
	return slogLogger{l: l}
}

func (s slogLogger) log(ctx context.Context, lvl slog.Level, format string, args []any) {
	if ctx == nil {
		ctx = context.Background()
	}
	if s.l.Enabled(ctx, lvl) {
		s.l.Log(ctx, lvl, fmt.Sprintf(format, args...), "component", "nri-stub")
	}
}

func (s slogLogger) Debugf(ctx context.Context, f string, a ...any) {
	s.log(ctx, slog.LevelDebug, f, a)
}
func (s slogLogger) Infof(ctx context.Context, f string, a ...any) { s.log(ctx, slog.LevelInfo, f, a) }
func (s slogLogger) Warnf(ctx context.Context, f string, a ...any) { s.log(ctx, slog.LevelWarn, f, a) }
func (s slogLogger) Errorf(ctx context.Context, f string, a ...any) {
	s.log(ctx, slog.LevelError, f, a)
}
