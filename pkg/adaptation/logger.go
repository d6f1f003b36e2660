package adaptation

import (
	"context"
	"fmt"
	"log/slog"
)

// Logger is what the adaptation logs through. Its method set is upstream's nri
// log.Logger (and our stub's), so one adapter serves a runtime for both.
type Logger interface {
	Debugf(ctx context.Context, format string, args ...any)
	Infof(ctx context.Context, format string, args ...any)
	Warnf(ctx context.Context, format string, args ...any)
	Errorf(ctx context.Context, format string, args ...any)
}

// NewSlogLogger returns a Logger writing to l (slog.Default() if nil).
func NewSlogLogger(l *slog.Logger) Logger {
	if l == nil {
		l = slog.Default()
	}
	return slogLogger{l: l}
}

func defaultLogger() Logger { return NewSlogLogger(nil) }

type slogLogger struct{ l *slog.Logger }

func (s slogLogger) log(ctx context.Context, lvl slog.Level, format string, args []any) {
	if ctx == nil {
		ctx = context.Background()
	}
	if s.l.Enabled(ctx, lvl) {
		s.l.Log(ctx, lvl, fmt.Sprintf(format, args...), "component", "nri")
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
