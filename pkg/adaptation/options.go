package adaptation

import (
	"github.com/containerd/ttrpc"

	"github.com/nri-handover/nri/pkg/adaptation/builtin"
	validator "github.com/nri-handover/nri/plugins/default-validator/builtin"
)

// Option configures an Adaptation in New.
type Option func(*Adaptation) error

// WithPluginPath sets the directory pre-installed plugins are launched from.
func WithPluginPath(path string) Option {
	return func(r *Adaptation) error {
		r.pluginPath = path
		return nil
	}
}

// WithPluginConfigPath sets the directory holding pre-installed plugins'
// configuration (NN-name.conf or name.conf).
func WithPluginConfigPath(path string) Option {
	return func(r *Adaptation) error {
		r.configPath = path
		return nil
	}
}

// WithSocketPath sets the unix socket external plugins connect to.
func WithSocketPath(path string) Option {
	return func(r *Adaptation) error {
		r.socketPath = path
		return nil
	}
}

// WithDisabledExternalConnections leaves only builtin and pre-installed
// plugins: no socket is created.
func WithDisabledExternalConnections() Option {
	return func(r *Adaptation) error {
		r.dontListen = true
		return nil
	}
}

// WithTTRPCOptions adds options for the ttrpc client (runtime to plugin) and
// server (plugin to runtime) of every plugin connection.
func WithTTRPCOptions(clientOpts []ttrpc.ClientOpts, serverOpts []ttrpc.ServerOpt) Option {
	return func(r *Adaptation) error {
		r.clientOpts = append(r.clientOpts, clientOpts...)
		r.serverOpts = append(r.serverOpts, serverOpts...)
		return nil
	}
}

// WithBuiltinPlugins adds in-process plugins.
func WithBuiltinPlugins(plugins ...*builtin.BuiltinPlugin) Option {
	return func(r *Adaptation) error {
		r.builtin = append(r.builtin, plugins...)
		return nil
	}
}

// WithMetrics sets the sink for plugin metrics. A nil m keeps the no-op sink.
func WithMetrics(m Metrics) Option {
	return func(r *Adaptation) error {
		if m != nil {
			r.metrics = m
		}
		return nil
	}
}

// WithLogger replaces the default logger (NRI's pkg/log, whose default is
// logrus's standard logger, as upstream's).
func WithLogger(l Logger) Option {
	return func(r *Adaptation) error {
		if l != nil {
			r.log = l
		}
		return nil
	}
}

// WithDeprecationRecorder lets the runtime record plugins using deprecated
// parts of the protocol instead of only logging them.
func WithDeprecationRecorder(d DeprecationRecorder) Option {
	return func(r *Adaptation) error {
		r.deprecated = d
		return nil
	}
}

// WithDefaultValidator runs the default validator as the first builtin plugin
// when cfg enables it.
func WithDefaultValidator(cfg *validator.DefaultValidatorConfig) Option {
	return func(r *Adaptation) error {
		if p := validator.GetDefaultValidator(cfg); p != nil {
			r.builtin = append([]*builtin.BuiltinPlugin{p}, r.builtin...)
		}
		return nil
	}
}
