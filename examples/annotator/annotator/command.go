package annotator

import (
	"context"
	"errors"
	"flag"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/nri-handover/nri/api"
	"github.com/nri-handover/nri/pkg/stub"
)

// Option changes how Main runs the plugin. The sample's own main passes
// none; a harness that instruments the plugin (test/realcontainerd/annotator
// pauses synchronization rounds so that a test can kill an instance there)
// passes WithFlags and WithHandler, so that what it runs is this code.
type Option func(*options)

type options struct {
	flags   []func(*flag.FlagSet)
	handler func(*Plugin, *slog.Logger) stub.Plugin
}

// WithFlags registers more flags on Main's flag set before it parses the
// command line.
func WithFlags(register func(*flag.FlagSet)) Option {
	return func(o *options) { o.flags = append(o.flags, register) }
}

// WithHandler makes the stub call what wrap returns instead of the plugin
// itself, typically a type that embeds *Plugin and overrides a handler.
// wrap is called once, after the flags are parsed and before the stub is
// created (which finds the handlers on what wrap returns); the plugin learns
// its identity from the stub afterwards.
func WithHandler(wrap func(p *Plugin, log *slog.Logger) stub.Plugin) Option {
	return func(o *options) { o.handler = wrap }
}

// Main runs the annotator with the command line args (without the program
// name) until SIGTERM or until the runtime ends the connection, and returns
// the process's exit code (exit.go). It logs to stderr, one structured line
// per fact an operator (or a test) looks for: the identity it starts with,
// every synchronization round, every container it stamps, every change of
// the state file's owner, and why it stopped.
func Main(args []string, opts ...Option) int {
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	fs := flag.NewFlagSet("annotator", flag.ContinueOnError)
	socket := fs.String("socket", api.DefaultSocketPath, "NRI socket")
	version := fs.String("version", "", "plugin version (default: the module version)")
	instance := fs.String("instance", "", "instance id (default: $"+stub.InstanceIDEnvVar+")")
	generation := fs.Uint64("generation", 0, "rollout generation (default: $"+stub.GenerationEnvVar+")")
	readyFile := fs.String("ready-file", "", "file that exists while this instance is the active one")
	readyzAddr := fs.String("readyz-addr", "", "address to serve /readyz on for an httpGet readinessProbe, e.g. :8080 (off when empty)")
	statePath := fs.String("state-file", "", "state file on the host, written only while this instance is active (off when empty)")
	leaveStamped := fs.Bool("leave-stamped", false, "on a runtime without handover, leave a container another instance already stamped (upstream fails a creation two instances set one field on)")
	stampEnv := fs.Bool("stamp-env", false, "stamp the environment variable "+HandledByEnv+" instead of the annotation (for Docker Engine, which refuses annotation adjustments)")
	shutdownTimeout := fs.Duration("shutdown-timeout", 5*time.Second, "bound on stopping after SIGTERM; keep terminationGracePeriodSeconds above it")
	// The stub's /readyz now stays 200 after a handover by itself; the flag
	// stays so that manifests that pass it keep starting.
	_ = fs.Bool("ready-after-handover", true, "deprecated, no effect: the stub's /readyz answers 200 once this instance handed over, until it is stopped")
	for _, register := range o.flags {
		register(fs)
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitOK
		}
		return exitFailed
	}

	log := slog.New(slog.NewTextHandler(os.Stderr, nil))
	stubOpts := []stub.Option{stub.WithPluginName("annotator"), stub.WithPluginIdx("50"), stub.WithSocketPath(*socket),
		stub.WithLogger(stub.NewSlogLogger(log)), stub.WithHandover()}
	if *version != "" {
		stubOpts = append(stubOpts, stub.WithPluginVersion(*version))
	}
	if *instance != "" {
		stubOpts = append(stubOpts, stub.WithInstanceID(*instance))
	}
	if *generation != 0 {
		stubOpts = append(stubOpts, stub.WithGeneration(*generation))
	}
	if *readyFile != "" {
		stubOpts = append(stubOpts, stub.WithReadyFile(*readyFile))
	}
	var state *stateFile
	if *statePath != "" {
		state = &stateFile{path: *statePath}
	}
	p := newPlugin(log, state)
	p.leave = *leaveStamped
	if *stampEnv {
		p.stampKind = StampEnv
	}
	var handler stub.Plugin = p
	if o.handler != nil {
		handler = o.handler(p, log)
	}
	s, err := stub.NewHandoverStub(handler, stubOpts...)
	if err != nil {
		log.Error("annotator: cannot start", "error", err)
		return exitFailed
	}
	// The identity is settled by stub.New (flags, environment or defaults).
	p.identify(s)
	log.Info("annotator: starting", "plugin", s.Name(), "version", s.PluginVersion(), "instance", s.InstanceID(),
		"generation", s.Generation(), "pid", os.Getpid())

	if *readyzAddr != "" {
		_, stopReadyz, err := serveReadyz(log, *readyzAddr, s.ReadyzHandler())
		if err != nil {
			log.Error("annotator: cannot serve /readyz", "error", err)
			return exitFailed
		}
		defer stopReadyz()
	}

	sig, stopSignals := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stopSignals()
	// The watchdog bounds the stop: SIGTERM to exit within -shutdown-timeout.
	unwatch := context.AfterFunc(sig, func() {
		time.AfterFunc(*shutdownTimeout, func() {
			log.Error("annotator: stopping took longer than -shutdown-timeout", "timeout", *shutdownTimeout)
			os.Exit(exitFailed)
		})
	})
	defer unwatch()

	err = runUntil(sig, s, p)
	code := exitCode(err)
	var sd *stub.ShutdownError
	switch {
	case errors.As(err, &sd) && sd.Superseded():
		log.Info("annotator: superseded", "successor", peerName(sd.SuccessorVersion, sd.SuccessorInstance), "exit", code)
	case code == exitOK:
		log.Info("annotator: stopped", "exit", code)
	case errors.Is(err, stub.ErrRegistrationRejected):
		// The runtime's decision, not a fault of this process: typically a
		// superseded pod whose container restarted before its deletion.
		log.Warn("annotator: refused by the runtime", "error", err, "exit", code)
	default:
		log.Error("annotator: stopped", "error", err, "exit", code)
	}
	return code
}

// runUntil runs the stub until the connection ends or stop is done (SIGTERM).
// On stop the state file is released before the connection closes, hence
// before the runtime can make a successor active; then the stub stops.
func runUntil(stop context.Context, s stub.HandoverStub, p *Plugin) error {
	ctx, cancel := context.WithCancel(context.Background())
	released := make(chan struct{})
	go func() {
		defer close(released)
		select {
		case <-stop.Done():
			p.release("terminating")
			cancel()
		case <-ctx.Done():
		}
	}()
	err := s.Run(ctx)
	cancel()
	<-released
	return err
}

// serveReadyz answers /readyz from the stub's readiness: 200 while this
// instance is the active one and after it handed over (until it is
// stopped), 503 with the reason otherwise. It listens on
// the pod's network, not the host's, so that two pods of a surge do not
// compete for one port.
func serveReadyz(log *slog.Logger, addr string, h http.Handler) (bound string, stop func(), err error) {
	lis, err := net.Listen("tcp", addr)
	if err != nil {
		return "", nil, err
	}
	mux := http.NewServeMux()
	mux.Handle("/readyz", h)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := srv.Serve(lis); !errors.Is(err, http.ErrServerClosed) {
			log.Error("annotator: /readyz server", "error", err)
		}
	}()
	log.Info("annotator: serving /readyz", "address", lis.Addr().String())
	return lis.Addr().String(), func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
		<-done
	}, nil
}
