// Package log is the process-wide logger of NRI, with upstream
// containerd/nri's pkg/log API (Logger, Set, Get, Debugf, ...).
//
// Its default writes through logrus's standard logger, as upstream's does:
// runtimes such as containerd configure that logger (level, format, output)
// for themselves, so NRI's lines land in the runtime's log with the runtime's
// level and format without the runtime calling Set. A runtime or plugin that
// wants them elsewhere calls Set once, early.
package log

import (
	"context"
	"sync/atomic"

	"github.com/sirupsen/logrus"
)

// Logger is the interface NRI logs through.
type Logger interface {
	Debugf(ctx context.Context, format string, args ...interface{})
	Infof(ctx context.Context, format string, args ...interface{})
	Warnf(ctx context.Context, format string, args ...interface{})
	Errorf(ctx context.Context, format string, args ...interface{})
}

// current holds the logger; atomic so that Set may race with logging.
var current atomic.Value // of holder

// holder gives atomic.Value one concrete type whatever the Logger is.
type holder struct{ l Logger }

func init() { current.Store(holder{logrusLogger{}}) }

// Set makes l the logger of NRI. Set(nil) restores the default (upstream
// would keep the nil and panic at the next line logged).
func Set(l Logger) {
	if l == nil {
		l = logrusLogger{}
	}
	current.Store(holder{l})
}

// Get returns the logger of NRI.
func Get() Logger { return current.Load().(holder).l }

// Debugf logs a debug message through the current logger.
func Debugf(ctx context.Context, format string, args ...interface{}) {
	Get().Debugf(ctx, format, args...)
}

// Infof logs an informational message through the current logger.
func Infof(ctx context.Context, format string, args ...interface{}) {
	Get().Infof(ctx, format, args...)
}

// Warnf logs a warning through the current logger.
func Warnf(ctx context.Context, format string, args ...interface{}) {
	Get().Warnf(ctx, format, args...)
}

// Errorf logs an error through the current logger.
func Errorf(ctx context.Context, format string, args ...interface{}) {
	Get().Errorf(ctx, format, args...)
}

// logrusLogger is the default: logrus's standard logger, with the context
// attached so that logrus hooks can read it.
type logrusLogger struct{}

func (logrusLogger) Debugf(ctx context.Context, format string, args ...interface{}) {
	entry(ctx).Debugf(format, args...)
}

func (logrusLogger) Infof(ctx context.Context, format string, args ...interface{}) {
	entry(ctx).Infof(format, args...)
}

func (logrusLogger) Warnf(ctx context.Context, format string, args ...interface{}) {
	entry(ctx).Warnf(format, args...)
}

func (logrusLogger) Errorf(ctx context.Context, format string, args ...interface{}) {
	entry(ctx).Errorf(format, args...)
}

func entry(ctx context.Context) *logrus.Entry {
	if ctx == nil {
		ctx = context.Background()
	}
	return logrus.WithContext(ctx)
}
