package adaptation

import (
	"context"
	"fmt"
	"log/slog"

	nrilog "github.com/nri-handover/nri/pkg/log"
)

// Logger is what the adaptation logs through: NRI's pkg/log Logger (upstream's
// method set), so one adapter serves a runtime for the adaptation, the stub
// and pkg/log.
type Logger = nrilog.Logger

// NewSlogLogger returns a Logger writing to l (slog.Default() if nil).
func NewSlogLogger(l *slog.Logger) Logger {
	if l == nil {
		l = slog.Default()
	}
	return slogLogger{l: l}
}

// defaultLogger logs through pkg/log, as upstream's adaptation does: by
// default that is logrus's standard logger, which runtimes like containerd
// configure as their own log, and a runtime's log.Set applies even after New.
func defaultLogger() Logger { return processLogger{} }

// processLogger forwards to whatever pkg/log holds at the time of each line.
type processLogger struct{}

func (processLogger) Debugf(ctx context.Context, f string, a ...any) { nrilog.Debugf(ctx, f, a...) }
func (processLogger) Infof(ctx context.Context, f string, a ...any)  { nrilog.Infof(ctx, f, a...) }
func (processLogger) Warnf(ctx context.Context, f string, a ...any)  { nrilog.Warnf(ctx, f, a...) }
func (processLogger) Errorf(ctx context.Context, f string, a ...any) { nrilog.Errorf(ctx, f, a...) }

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
