package adaptation

// Our own versions of the two test hooks upstream's adaptation suite expects
// from its package-internal helpers_test.go. hack/upstream-suite.sh drops this
// file into the temporary copy of our package the suite is built against; it
// is never compiled into the real package.

import "log/slog"

// Upstream's suite quietens upstream's logrus logging to errors; ours (the
// adaptation's and the stub's default loggers) goes through log/slog.
func init() { slog.SetLogLoggerLevel(slog.LevelError) }

// WithTestNRIVersion makes the runtime announce v as its NRI version, so that
// the suite can check what plugins are told.
func WithTestNRIVersion(v string) Option {
	return func(r *Adaptation) error {
		r.nriVersion = v
		return nil
	}
}

// PluginClosed looks the named plugin up now and returns a probe telling
// whether the runtime has seen its connection go. The probe takes no lock of
// the adaptation, so the suite may poll it while a request holds the lock.
// A plugin that is not known counts as closed.
func (r *Adaptation) PluginClosed(name string) func() bool {
	find := func(plugins []*plugin) *plugin {
		for _, p := range plugins {
			if p.name() == name {
				return p
			}
		}
		return nil
	}
	p := find(r.reg.active())
	if p == nil {
		p = find(r.reg.tracked())
	}
	if p == nil {
		return func() bool { return true }
	}
	return p.isClosed
}
