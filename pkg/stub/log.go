package stub

import (
	"context"
	"fmt"
	"log/slog"

	nrilog "github.com/nri-handover/nri/pkg/log"
)

// Logger is what the stub logs through: NRI's pkg/log Logger, as upstream's
// stub has it, so that Stub.Logger and WithLogger have upstream's signatures
// and one logger serves pkg/log, the stub and the adaptation.
type Logger = nrilog.Logger

// processLogger, the default, forwards each line to whatever pkg/log holds at
// that moment, as upstream's stub logs through pkg/log: a plugin that calls
// log.Set gets the stub's lines, even when it calls Set after New. Unless
// set, pkg/log writes through logrus's standard logger.
type processLogger struct{}

func (processLogger) Debugf(ctx context.Context, f string, a ...any) { nrilog.Debugf(ctx, f, a...) }
func (processLogger) Infof(ctx context.Context, f string, a ...any)  { nrilog.Infof(ctx, f, a...) }
func (processLogger) Warnf(ctx context.Context, f string, a ...any)  { nrilog.Warnf(ctx, f, a...) }
func (processLogger) Errorf(ctx context.Context, f string, a ...any) { nrilog.Errorf(ctx, f, a...) }

// slogLogger adapts log/slog, for plugins that log structured through slog
// (WithLogger(NewSlogLogger(...))).
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
