// Command plugin is the NRI plugin that run.sh starts against a real
// containerd. It is built on our pkg/stub and speaks to whatever NRI the
// runtime embeds (containerd v2.4.2 ships upstream NRI v0.12.3), so a run
// shows our plugin side working as a plain NRI plugin on a deployed runtime.
//
// It prints one line per fact the script checks, on stdout:
//
//	HANDOVER available=<bool> role=<role> runtime-nri=<version>  after registration
//	READY                                                        once the stub reports ready
//	ROLE <role>                                                  when the runtime changes its role
//	EVENT <Name> ...                                             for every request or event
//	ADJUST pod=<pod> container=<name> instance=<id>              for every adjustment it returns
//	HOLD round=<full|delta>, RELEASED round=<...>                 -hold-sync: stopped in a sync round
//	EXIT                                                         when the connection is gone
//	START-FAILED <reason>: <error>                               when Start failed (e.g. refused)
//	RECONNECT after="<why>"                                      -reconnect: connecting again
//
// and adds an environment variable NRI_<NAME>=injected-by-<name> and an
// annotation nri-handover.test/<name>=adjusted-by-<name> to every container it
// sees created, so the script can prove the adjustment reached the container.
//
// With -instance-adjust the variable is NRI_INSTANCE and the annotation
// nri-handover.test/instance, both set to the instance id
// (NRI_PLUGIN_INSTANCE_ID, as a DaemonSet pod gets it from the downward API),
// so that the surge test can tell which instance adjusted a container.
//
// Run by hand it takes -socket, -name and -idx; launched by the runtime from
// its plugin directory it takes all three from the environment, as upstream
// plugins do. -handover opts into handover, -ready-file keeps a readiness
// file, -version sets the plugin version it registers with.
//
// The stub does not reconnect by itself. With -reconnect the plugin does,
// when the runtime restarts (SHUTDOWN_REASON_RUNTIME_SHUTDOWN) or the
// connection ends without a reason (a crash, an upstream runtime): a plugin
// that outlives its runtime comes back when the runtime does. Anything the
// runtime says about the instance itself (superseded, rejected, removed,
// timed out, failed to synchronize, protocol error) ends the process
// instead: a superseded instance would be refused, and for the others a
// fresh process is the supervisor's call.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/nri-handover/nri/api"
	"github.com/nri-handover/nri/pkg/stub"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintf(os.Stderr, "realcontainerd plugin: %v\n", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	fs := flag.NewFlagSet("plugin", flag.ContinueOnError)
	socket := fs.String("socket", "", "the runtime's NRI socket (default: NRI's default path)")
	name := fs.String("name", "", "plugin name (default: $NRI_PLUGIN_NAME, as a runtime-launched plugin gets it)")
	idx := fs.String("idx", "", "plugin index (default: $NRI_PLUGIN_IDX)")
	adjust := fs.Bool("adjust", true, "adjust created containers (false lets run.sh prove its checks can fail)")
	handover := fs.Bool("handover", false, "opt into handover, as a DaemonSet plugin rolled out with surge would")
	byInstance := fs.Bool("instance-adjust", false, "name the instance (not the plugin) in the adjustment, so surge.sh can tell instances apart")
	readyFile := fs.String("ready-file", "", "keep a file that exists while the plugin is ready (a readinessProbe's view)")
	version := fs.String("version", "", "plugin version to register with (default: the module's)")
	reconnect := fs.Bool("reconnect", false, "connect again when the runtime restarts or goes away (see retryable)")
	holdSync := fs.String("hold-sync", "", "stop in every synchronization round until PREFIX.full or PREFIX.delta exists")
	if err := fs.Parse(args); err != nil {
		return err
	}

	var opts []stub.Option
	if *name != "" {
		opts = append(opts, stub.WithPluginName(*name))
	}
	if *idx != "" {
		opts = append(opts, stub.WithPluginIdx(*idx))
	}
	if *socket != "" {
		opts = append(opts, stub.WithSocketPath(*socket))
	}
	if *handover {
		opts = append(opts, stub.WithHandover())
	}
	if *readyFile != "" {
		opts = append(opts, stub.WithReadyFile(*readyFile))
	}
	if *version != "" {
		opts = append(opts, stub.WithPluginVersion(*version))
	}
	p := &plugin{out: newPrinter(os.Stdout), adjust: *adjust, byInstance: *byInstance, holdSync: *holdSync}
	st, err := stub.New(p, opts...)
	if err != nil {
		return err
	}
	// The stub settled the identity (flags, environment or executable name);
	// the adjustment is keyed by it so that several instances do not collide.
	_, p.name, _ = strings.Cut(st.Name(), "-")
	p.instance = st.InstanceID()

	ctx, cancel := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer cancel()
	go func() {
		<-ctx.Done()
		st.Stop()
	}()

	for {
		served, err := p.session(ctx, st)
		switch {
		case ctx.Err() != nil:
			return nil
		case !*reconnect && served:
			return nil // the connection ended: so does a plugin that does not reconnect
		case !*reconnect || !retryable(err):
			return err
		}
		p.out.line("RECONNECT after=%q", describe(err))
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(reconnectDelay):
		}
	}
}

// reconnectDelay spaces connection attempts while the runtime is away.
const reconnectDelay = 200 * time.Millisecond

// session runs one connection: it registers, reports, serves until the
// connection ends and returns whether it served and why it ended. A
// superseded instance stays in it, not ready, until it is stopped (the stub
// holds Wait).
func (p *plugin) session(ctx context.Context, st stub.Stub) (bool, error) {
	p.lastReason()
	// Start returns once the runtime answered the registration and configured
	// the plugin, so whether it offered handover is known by then.
	if err := st.Start(ctx); err != nil {
		p.out.line("START-FAILED %s", describe(err))
		return false, err
	}
	p.out.line("HANDOVER available=%t role=%s runtime-nri=%s plugin=%s instance=%s generation=%d pid=%d",
		st.HandoverAvailable(), st.Role(), st.RuntimeNRIVersion(), st.Name(), st.InstanceID(), st.Generation(), os.Getpid())

	sctx, done := context.WithCancel(ctx)
	defer done()
	go func() {
		if st.WaitReady(sctx) == nil {
			p.out.line("READY handover=%t", st.HandoverAvailable())
		}
	}()

	st.Wait()
	p.out.line("EXIT")
	if reason := p.lastReason(); reason != api.ShutdownReason_SHUTDOWN_REASON_UNSPECIFIED {
		return true, &stub.ShutdownError{Plugin: st.Name(), Reason: reason}
	}
	return true, fmt.Errorf("plugin %s: %w", st.Name(), stub.ErrDisconnected)
}

// retryable tells whether a plugin that keeps itself connected (-reconnect)
// connects again after err. It does when the runtime went away, said it is
// shutting down (a restart) or could not be reached; it does not when the
// runtime said something about this instance: superseded (the stub holds it
// until stopped; coming back would be refused), rejected, removed, timed out,
// failed to synchronize or broke the protocol. Those end the process, and its
// supervisor decides whether a fresh one should start.
func retryable(err error) bool {
	var sd *stub.ShutdownError
	if errors.As(err, &sd) {
		return errors.Is(sd, stub.ErrRuntimeShutdown)
	}
	return err != nil // disconnected, or the runtime's socket is not there (yet)
}

// describe names the shutdown reason behind err, or the error itself.
func describe(err error) string {
	var sd *stub.ShutdownError
	if errors.As(err, &sd) {
		return sd.Reason.String() + ": " + err.Error()
	}
	if err == nil {
		return "stopped"
	}
	return err.Error()
}
