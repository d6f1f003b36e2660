package stub

import (
	"context"
	"errors"
	"fmt"
	stdnet "net"
	"os"
	"strings"

	"github.com/containerd/ttrpc"

	"github.com/nri-handover/nri/api"
)

// Option configures a stub in New.
type Option func(*stub) error

// WithPluginName sets the name the plugin registers with, overriding
// $NRI_PLUGIN_NAME (with an info line, as upstream's). It is the plugin's
// identity across instances: a new instance with the same name takes over
// from the old one. An empty name means "from the executable", as upstream's.
func WithPluginName(name string) Option {
	return func(s *stub) error {
		if s.name != "" {
			s.logger.Infof(context.Background(), "plugin name %q overrides %q", name, s.name)
		}
		s.name = name
		return nil
	}
}

// WithPluginIdx sets the two-digit index that orders the plugin among
// others. As upstream's, it is refused once the index is set, by
// $NRI_PLUGIN_IDX (a runtime-launched plugin) or an earlier WithPluginIdx;
// an empty index leaves it to the executable's NN- prefix.
func WithPluginIdx(idx string) Option {
	return func(s *stub) error {
		if s.idx != "" {
			return fmt.Errorf("plugin index already set to %q (by $%s or an earlier WithPluginIdx)", s.idx, api.PluginIdxEnvVar)
		}
		if idx == "" {
			return nil
		}
		// Upstream's runtime refuses a malformed index at registration;
		// refusing it here says so earlier and more clearly.
		if err := api.CheckPluginIndex(idx); err != nil {
			return err
		}
		s.idx = idx
		return nil
	}
}

// WithSocketPath sets the runtime's NRI socket to dial.
func WithSocketPath(path string) Option {
	return func(s *stub) error {
		s.socketPath = path
		return nil
	}
}

// WithConnection makes the first Start use conn instead of dialing.
func WithConnection(conn stdnet.Conn) Option {
	return func(s *stub) error {
		s.conn = conn
		return nil
	}
}

// WithDialer replaces how the stub connects to the socket path.
func WithDialer(d func(string) (stdnet.Conn, error)) Option {
	return func(s *stub) error {
		if d == nil {
			return errors.New("nil dialer")
		}
		s.dialer = d
		return nil
	}
}

// WithOnClose sets a function called each time a connection to the runtime
// ends, for whatever reason.
func WithOnClose(onClose func()) Option {
	return func(s *stub) error {
		s.onClose = onClose
		return nil
	}
}

// WithTTRPCOptions adds ttrpc client and server options.
func WithTTRPCOptions(clientOpts []ttrpc.ClientOpts, serverOpts []ttrpc.ServerOpt) Option {
	return func(s *stub) error {
		s.clientOpts = append(s.clientOpts, clientOpts...)
		s.serverOpts = append(s.serverOpts, serverOpts...)
		return nil
	}
}

// WithLogger replaces the default logger, NRI's pkg/log (whatever log.Set
// installed, logrus's standard logger otherwise, as upstream's). NewSlogLogger
// adapts log/slog.
func WithLogger(logger Logger) Option {
	return func(s *stub) error {
		if logger == nil {
			return errors.New("nil logger")
		}
		s.logger = logger
		return nil
	}
}

// WithFailurePolicy asks the runtime to treat this plugin's timeouts and
// transport failures as the policy says: fail the request instead of letting
// it proceed (FailRequest) and/or stay connected after a timeout
// (KeepConnected). Errors the plugin returns always fail the request.
// Runtimes without failure policies ignore it.
func WithFailurePolicy(policy *api.FailurePolicy) Option {
	return func(s *stub) error {
		if policy == nil {
			return errors.New("nil failure policy")
		}
		s.failurePolicy = policy
		return nil
	}
}

// WithPluginVersion sets the plugin's own software version, reported at
// registration for logs, metrics and an optional downgrade policy in the
// runtime. Default: the main module's version from the build info.
func WithPluginVersion(version string) Option {
	return func(s *stub) error {
		s.pluginVersion = version
		return nil
	}
}

// WithInstanceID sets this instance's identity. It should stay the same when
// the container restarts but differ between pods, so that the runtime can
// recognise a superseded instance coming back: in Kubernetes, the pod UID.
// It wins over $NRI_PLUGIN_INSTANCE_ID (InstanceIDEnvVar), the default, which
// only a plugin that opted in with WithHandover reads. It needs WithHandover
// (New refuses it alone): only the handover rules use it. An id of blanks is
// refused: it would tell no two instances apart.
func WithInstanceID(id string) Option {
	return func(s *stub) error {
		if err := checkInstanceID(id); err != nil {
			return err
		}
		s.instanceID, s.instanceIDSet = id, true
		return nil
	}
}

// checkInstanceID refuses an id of blanks; empty means none.
func checkInstanceID(id string) error {
	if id != "" && strings.TrimSpace(id) == "" {
		return fmt.Errorf("instance id %q is blank: want the pod's UID, or empty for none", id)
	}
	return nil
}

// WithGeneration sets the rollout generation of this instance, which only
// grows from one rollout to the next: in Kubernetes, the DaemonSet pod's
// pod-template-generation label. 0 means unknown.
// It wins over $NRI_PLUGIN_GENERATION (GenerationEnvVar), the default, which
// only a plugin that opted in with WithHandover reads. It needs WithHandover
// (New refuses it alone): only the handover rules use it.
func WithGeneration(generation uint64) Option {
	return func(s *stub) error {
		s.generation, s.generationSet = generation, true
		return nil
	}
}

// WithReadyFile keeps a file at path that exists exactly while the plugin is
// ready, for an exec readinessProbe such as `test -f path`.
func WithReadyFile(path string) Option {
	return func(s *stub) error {
		if path == "" {
			return errors.New("empty ready file path")
		}
		s.readyFile = path
		return nil
	}
}

// WithExitOnSuperseded makes Run return as soon as the runtime reports that
// another instance took over. By default Run keeps blocking, serving no events,
// until its context is cancelled or Stop is called: a process that exits
// would be restarted by its supervisor and come back only to be refused.
// It needs WithHandover (New refuses it alone): only a plugin that opted in
// is ever told it was superseded.
func WithExitOnSuperseded() Option {
	return func(s *stub) error {
		s.exitOnSuperseded = true
		return nil
	}
}

// WithHandover opts the plugin into handover: it registers with
// api.FeatureHandover, so that a handover-capable runtime lets this instance
// take over from an earlier instance of its name (and a later one take over
// from it), and readiness then means "made active by the runtime". A plugin
// that also implements SynchronizeRoundInterface gets delta rounds and can
// stand by (api.FeatureDeltaSync). Without this option the stub behaves as
// upstream's: every instance receives every event, one full Synchronize per
// connection, ready once synchronized.
//
// $NRI_PLUGIN_HANDOVER=off (HandoverEnvVar) is the operator's kill switch:
// it makes this option a no-op, so a deployed plugin can be turned back into
// an upstream plugin from its manifest, without a rebuild.
func WithHandover() Option {
	return func(s *stub) error {
		s.handover = true // the environment may turn it off: readHandoverEnv
		return nil
	}
}

// readHandoverEnv applies the environment of a plugin that called
// WithHandover, after every option: the operator's kill switch, the address
// to serve /readyz on, then the instance id and generation that options left
// unset. A plugin that did not
// opt in reads none of it, as upstream's stub.
func (s *stub) readHandoverEnv() error {
	on, err := handoverFromEnv()
	if err != nil {
		return err
	}
	s.handover, s.handoverOff = on, !on
	if s.readyzAddr, err = readyzAddrFromEnv(); err != nil {
		return err
	}
	return s.handoverIdentityFromEnv()
}

// HandoverEnvVar, in the plugin's environment, turns WithHandover off or
// leaves it on. It takes the spellings operators write in manifests: on/off,
// true/false, 1/0, yes/no, in any case; unset or empty means on.
const HandoverEnvVar = "NRI_PLUGIN_HANDOVER"

// handoverFromEnv reads HandoverEnvVar. An unknown value is an error rather
// than a guess: a typo in a kill switch must not leave handover on silently.
func handoverFromEnv() (bool, error) {
	v := strings.TrimSpace(os.Getenv(HandoverEnvVar))
	switch strings.ToLower(v) {
	case "", "on", "true", "1", "yes":
		return true, nil
	case "off", "false", "0", "no":
		return false, nil
	}
	return false, fmt.Errorf("$%s=%q: want on/off, true/false, 1/0 or yes/no (any case; unset or empty means on)",
		HandoverEnvVar, os.Getenv(HandoverEnvVar))
}

// errOption marks an error as coming from an option; the plugin's name is
// not known yet at that point.
func errOption(err error) error {
	return fmt.Errorf("invalid stub option: %w", err)
}
