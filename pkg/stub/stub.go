package stub

import (
	"context"
	"fmt"
	stdnet "net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/containerd/ttrpc"

	"github.com/nri-handover/nri/api"
	nrilog "github.com/nri-handover/nri/pkg/log"
)

// Stub is the plugin's handle on its connection to the runtime. Its method
// set is exactly upstream's (containerd/nri v0.12.5), so types written against
// upstream's interface, such as mocks, keep satisfying it; what this module
// adds is on HandoverStub, which every stub New returns also implements.
type Stub interface {
	// Run starts the plugin and blocks until the connection ends, Stop is
	// called or ctx is cancelled. After a shutdown by the runtime it returns
	// a *ShutdownError. A superseded plugin keeps blocking, serving no events, until
	// Stop or ctx (unless WithExitOnSuperseded). Run may be called again
	// once it has returned.
	Run(context.Context) error
	// Start connects, registers and waits until the runtime configured the
	// plugin.
	Start(context.Context) error
	// Stop closes the connection.
	Stop()
	// Wait blocks until the plugin stopped, like Run does after Start.
	Wait()

	// UpdateContainers asks the runtime to apply updates outside of any
	// event and returns the updates that failed.
	UpdateContainers([]*api.ContainerUpdate) ([]*api.ContainerUpdate, error)

	// RegistrationTimeout and RequestTimeout are the runtime's values once
	// configured, the defaults before.
	RegistrationTimeout() time.Duration
	RequestTimeout() time.Duration

	// Logger is the logger the stub logs through: the one given with
	// WithLogger, otherwise pkg/log's current logger (log.Get()).
	Logger() Logger

	// RuntimeNRIVersion is the runtime's NRI library version, if known.
	RuntimeNRIVersion() string
	// PluginNRIVersion is the NRI library version the plugin was built with.
	PluginNRIVersion() string
}

// HandoverStub is a Stub with what this module adds to upstream's: the
// identity the stub registers with, and the handover role and readiness.
// Every stub New returns implements it:
//
//	s, err := stub.New(plugin, stub.WithHandover())
//	...
//	hs := s.(stub.HandoverStub)
//
// or NewHandoverStub, which returns one.
type HandoverStub interface {
	Stub

	// Name is the plugin's indexed name, NN-name.
	Name() string
	// PluginVersion, InstanceID and Generation are what the stub registers with.
	PluginVersion() string
	InstanceID() string
	Generation() uint64

	// HandoverAvailable tells whether the runtime offered handover on the
	// current connection. Without it the stub is a plain NRI plugin and
	// readiness means "registered and synchronized".
	HandoverAvailable() bool
	// Role is the role the runtime last assigned (handover runtimes only),
	// UNSPECIFIED once it shut this instance down (superseded, for one) or
	// the connection ended.
	Role() api.PluginRole
	// Ready tells whether the runtime routes this plugin's events to this
	// instance: it confirmed the instance active (handover runtimes) or
	// synchronized it (others).
	Ready() bool
	// WaitReady blocks until Ready or until ctx ends.
	WaitReady(ctx context.Context) error
	// ReadyzHandler serves readiness for an httpGet readinessProbe: 200
	// while Ready and, with WithHandover, after this instance handed over
	// until it is stopped (the body says which), 503 otherwise.
	// With WithHandover and $NRI_PLUGIN_READYZ_ADDR (ReadyzAddrEnvVar) the
	// stub serves it at /readyz itself.
	ReadyzHandler() http.Handler
}

// stub implements Stub and HandoverStub.
type stub struct {
	// Fixed by New.
	plugin           Plugin
	h                handlers
	events           EventMask
	name             string
	idx              string
	socketPath       string
	dialer           func(string) (stdnet.Conn, error)
	onClose          func()
	clientOpts       []ttrpc.ClientOpts
	serverOpts       []ttrpc.ServerOpt
	failurePolicy    *api.FailurePolicy
	logger           Logger
	pluginVersion    string
	instanceID       string
	generation       uint64
	readyFile        string
	readyzAddr       string // $NRI_PLUGIN_READYZ_ADDR, read under WithHandover
	exitOnSuperseded bool
	handover         bool // WithHandover
	handoverOff      bool // WithHandover, turned off by $NRI_PLUGIN_HANDOVER
	instanceIDSet    bool // by WithInstanceID, which wins over $NRI_PLUGIN_INSTANCE_ID
	generationSet    bool // by WithGeneration, which wins over $NRI_PLUGIN_GENERATION
	ready            *readiness

	mu                  sync.Mutex
	conn                stdnet.Conn // from WithConnection, used by the first Start
	starting            bool        // a Start is connecting
	cur                 *session    // the current or last connection
	readyz              *readyzServer
	registrationTimeout time.Duration
	requestTimeout      time.Duration
	runtimeNRIVersion   string
}

// New creates a stub for plugin p, which must implement at least one event
// handler interface. The stub it returns is also a HandoverStub.
func New(p Plugin, opts ...Option) (Stub, error) {
	s, err := newStub(p, opts...)
	if err != nil {
		return nil, err // not a nil *stub in a non-nil Stub
	}
	return s, nil
}

func newStub(p Plugin, opts ...Option) (*stub, error) {
	s := &stub{
		plugin:              p,
		socketPath:          api.DefaultSocketPath,
		dialer:              func(path string) (stdnet.Conn, error) { return stdnet.Dial("unix", path) },
		logger:              processLogger{},
		registrationTimeout: DefaultRegistrationTimeout,
		requestTimeout:      DefaultRequestTimeout,
		runtimeNRIVersion:   api.UnknownVersion,
	}
	s.identityFromEnv()
	for _, o := range opts {
		if err := o(s); err != nil {
			return nil, fmt.Errorf("creating NRI stub: %w", errOption(err))
		}
	}
	if s.handover {
		if err := s.readHandoverEnv(); err != nil {
			return nil, fmt.Errorf("creating NRI stub: %w", err)
		}
	}
	if err := s.checkNeedsHandover(); err != nil {
		return nil, fmt.Errorf("creating NRI stub: %w", errOption(err))
	}
	if err := s.completeIdentity(); err != nil {
		return nil, fmt.Errorf("creating NRI stub: %w", err)
	}

	h, events, err := setupHandlers(p)
	if err != nil {
		return nil, fmt.Errorf("creating NRI stub for plugin %s: %w", s.Name(), err)
	}
	s.h, s.events = h, events
	s.ready = newReadiness(s.logger, s.Name(), s.readyFile, s.readyFileContent)

	s.logger.Infof(context.Background(), "created plugin %s (%s, version %s, instance %q, generation %d), handles %s",
		s.Name(), filepath.Base(os.Args[0]), s.pluginVersion, s.instanceID, s.generation, maskString(events))
	if s.handover && s.instanceID == "" && s.generation == 0 {
		s.logger.Warnf(context.Background(), "plugin %s opts into handover without an instance id or rollout generation: "+
			"a superseded instance that restarts cannot be told from a successor; set $%s and $%s (deploy/daemonset.yaml) or WithInstanceID and WithGeneration",
			s.Name(), InstanceIDEnvVar, GenerationEnvVar)
	}
	if s.handover && s.h.syncRound == nil {
		// The runtime says so too, when it matters (it has a standby
		// grace), but in its own log, which the plugin's author may never
		// read. Most runtimes keep no standby: once per process, at debug.
		deltaHintOnce.Do(func() {
			s.logger.Debugf(context.Background(), "plugin %s opted into handover without delta rounds, so outside a pod a runtime with "+
				"adaptation.WithStandbyGrace cannot keep it as a standby: implement stub.SynchronizeRoundInterface", s.Name())
		})
	}
	return s, nil
}

// deltaHintOnce logs the hint about delta rounds once per process.
var deltaHintOnce sync.Once

// checkNeedsHandover refuses the options that do nothing without
// WithHandover: only a plugin that opted in is told it was superseded, and
// only the handover rules use an instance id and a generation. Silently
// ignored, their author would not know.
func (s *stub) checkNeedsHandover() error {
	if s.optedIn() {
		return nil
	}
	var opts, why []string
	if s.instanceIDSet {
		opts = append(opts, "WithInstanceID")
	}
	if s.generationSet {
		opts = append(opts, "WithGeneration")
	}
	if len(opts) > 0 {
		why = append(why, "the runtime uses an instance id and a generation only for handover")
	}
	if s.exitOnSuperseded {
		opts = append(opts, "WithExitOnSuperseded")
		why = append(why, "the runtime tells only a plugin that opted into handover that it was superseded")
	}
	switch len(opts) {
	case 0:
		return nil
	case 1:
		return fmt.Errorf("%s needs WithHandover: %s", opts[0], strings.Join(why, "; "))
	}
	return fmt.Errorf("%s need WithHandover: %s", strings.Join(opts, " and "), strings.Join(why, "; "))
}

// NewHandoverStub is New returning the stub as a HandoverStub. It changes
// nothing else: handover is still opted into with WithHandover.
func NewHandoverStub(p Plugin, opts ...Option) (HandoverStub, error) {
	s, err := newStub(p, opts...)
	if err != nil {
		return nil, err
	}
	return s, nil
}

func (s *stub) Name() string { return s.idx + "-" + s.name }

// optedIn tells whether the plugin called WithHandover, even if the kill
// switch turned it off: only such a plugin reads the handover environment or
// differs from upstream's stub in how it takes its identity.
func (s *stub) optedIn() bool { return s.handover || s.handoverOff }
func (s *stub) Logger() Logger {
	// The logger itself, not the forwarder: a plugin may wrap it and Set the
	// wrapper, which must not end up calling itself.
	if _, ok := s.logger.(processLogger); ok {
		return nrilog.Get()
	}
	return s.logger
}
func (s *stub) PluginVersion() string { return s.pluginVersion }
func (s *stub) InstanceID() string    { return s.instanceID }
func (s *stub) Generation() uint64    { return s.generation }
func (s *stub) PluginNRIVersion() string {
	return libraryVersion()
}

func (s *stub) RegistrationTimeout() time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.registrationTimeout
}

func (s *stub) RequestTimeout() time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.requestTimeout
}

func (s *stub) RuntimeNRIVersion() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.runtimeNRIVersion
}

func (s *stub) HandoverAvailable() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cur != nil && s.cur.handover
}

// Role is UNSPECIFIED once the runtime shut the instance down or the
// connection ended: a superseded instance is not told STANDBY (by a
// successor with handover turned off, for one), and must not go on
// reporting ACTIVE.
func (s *stub) Role() api.PluginRole {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cur == nil || s.cur.shutdown != nil || s.cur.closed {
		return api.PluginRole_PLUGIN_ROLE_UNSPECIFIED
	}
	return s.cur.role
}

func (s *stub) Ready() bool {
	ready, _ := s.ready.get()
	return ready
}

func (s *stub) WaitReady(ctx context.Context) error { return s.ready.wait(ctx) }
func (s *stub) ReadyzHandler() http.Handler         { return s.ready }

// readyFileContent says who is ready, for people looking at the file.
func (s *stub) readyFileContent() string {
	return fmt.Sprintf("plugin=%s\nversion=%s\ninstance=%s\ngeneration=%d\n",
		s.Name(), s.pluginVersion, s.instanceID, s.generation)
}
