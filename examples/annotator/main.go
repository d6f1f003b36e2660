// Command annotator is a minimal NRI plugin that is safe to roll out with
// maxSurge (deploy/daemonset.yaml runs it). It stamps every container it sees
// created with the version and instance that handled it, and uses what a
// surging plugin needs from pkg/stub:
//
//   - opt-in to handover (stub.WithHandover);
//   - identity and rollout generation from the environment, which a
//     DaemonSet fills from the downward API ($NRI_PLUGIN_INSTANCE_ID,
//     $NRI_PLUGIN_GENERATION), flags for running it by hand;
//   - readiness that means "the runtime made this instance active": an HTTP
//     endpoint for an httpGet readinessProbe (-readyz-addr) or a ready file
//     (-ready-file);
//   - a delta-aware synchronization that skips containers a predecessor
//     already stamped (plugin.go);
//   - typed shutdown reasons mapped to exit codes (exit.go);
//   - optionally a state file on the host, written only while this instance
//     is the active one and handed over in the runtime's order (state.go).
package main

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

func main() { os.Exit(run()) }

func run() int {
	socket := flag.String("socket", api.DefaultSocketPath, "NRI socket")
	version := flag.String("version", "", "plugin version (default: the module version)")
	instance := flag.String("instance", "", "instance id (default: $"+stub.InstanceIDEnvVar+")")
	generation := flag.Uint64("generation", 0, "rollout generation (default: $"+stub.GenerationEnvVar+")")
	readyFile := flag.String("ready-file", "", "file that exists while this instance is the active one")
	readyzAddr := flag.String("readyz-addr", "", "address to serve /readyz on for an httpGet readinessProbe, e.g. :8080 (off when empty)")
	statePath := flag.String("state-file", "", "state file on the host, written only while this instance is active (off when empty)")
	shutdownTimeout := flag.Duration("shutdown-timeout", 5*time.Second, "bound on stopping after SIGTERM; keep terminationGracePeriodSeconds above it")
	flag.Parse()

	log := slog.New(slog.NewTextHandler(os.Stderr, nil))
	opts := []stub.Option{stub.WithPluginName("annotator"), stub.WithPluginIdx("50"), stub.WithSocketPath(*socket),
		stub.WithLogger(stub.NewSlogLogger(log)), stub.WithHandover()}
	if *version != "" {
		opts = append(opts, stub.WithPluginVersion(*version))
	}
	if *instance != "" {
		opts = append(opts, stub.WithInstanceID(*instance))
	}
	if *generation != 0 {
		opts = append(opts, stub.WithGeneration(*generation))
	}
	if *readyFile != "" {
		opts = append(opts, stub.WithReadyFile(*readyFile))
	}
	var state *stateFile
	if *statePath != "" {
		state = &stateFile{path: *statePath}
	}
	p := newPlugin(log, state)
	s, err := stub.New(p, opts...)
	if err != nil {
		log.Error("annotator: cannot start", "error", err)
		return exitFailed
	}
	p.identify(s)

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
	default:
		log.Error("annotator: stopped", "error", err, "exit", code)
	}
	return code
}

// runUntil runs the stub until the connection ends or stop is done (SIGTERM).
// On stop the state file is released before the connection closes, hence
// before the runtime can make a successor active; then the stub stops.
func runUntil(stop context.Context, s stub.Stub, p *plugin) error {
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
// instance is the active one, 503 with the reason otherwise. It listens on
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
