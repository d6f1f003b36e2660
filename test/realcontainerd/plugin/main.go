// Command plugin is the NRI plugin that run.sh starts against a real
// containerd (surge.sh runs the sample plugin, examples/annotator, instead:
// see ../README.md for why this one stays). It is built on our pkg/stub and
// speaks to whatever NRI the runtime embeds (containerd v2.4.2 ships upstream NRI v0.12.3), so a run
// shows our plugin side working as a plain NRI plugin on a deployed runtime.
//
// It prints one line per fact the script checks, on stdout:
//
//	HANDOVER available=<bool> role=<role> runtime-nri=<version>  after registration
//	READY                                                        once the stub reports ready
//	ROLE <role>                                                  when the runtime changes its role
//	EVENT <Name> ...                                             for every request or event
//	SYNC pod=<pod>                                               for each pod in Synchronize
//	EXIT                                                         when the connection is gone
//	START-FAILED <error>                                         when Start failed
//
// and adds an environment variable NRI_<NAME>=injected-by-<name> and an
// annotation nri-handover.test/<name>=adjusted-by-<name> to every container it
// sees created, so the script can prove the adjustment reached the container.
//
// Run by hand it takes -socket, -name and -idx; launched by the runtime from
// its plugin directory it takes all three from the environment, as upstream
// plugins do. -handover opts into handover, -ready-file keeps a readiness
// file, -version sets the plugin version it registers with. It ends when
// the connection does.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"

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
	readyFile := fs.String("ready-file", "", "keep a file that exists while the plugin is ready (a readinessProbe's view)")
	version := fs.String("version", "", "plugin version to register with (default: the module's)")
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
	p := &plugin{out: newPrinter(os.Stdout), adjust: *adjust}
	st, err := stub.NewHandoverStub(p, opts...)
	if err != nil {
		return err
	}
	// The stub settled the identity (flags, environment or executable name);
	// the adjustment is keyed by it so that several plugins do not collide.
	_, p.name, _ = strings.Cut(st.Name(), "-")

	ctx, cancel := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer cancel()
	go func() {
		<-ctx.Done()
		st.Stop()
	}()

	// Start returns once the runtime answered the registration and configured
	// the plugin, so whether it offered handover is known by then.
	if err := st.Start(ctx); err != nil {
		p.out.line("START-FAILED %v", err)
		return err
	}
	p.out.line("HANDOVER available=%t role=%s runtime-nri=%s plugin=%s instance=%s generation=%d pid=%d",
		st.HandoverAvailable(), st.Role(), st.RuntimeNRIVersion(), st.Name(), st.InstanceID(), st.Generation(), os.Getpid())
	go func() {
		if st.WaitReady(ctx) == nil {
			p.out.line("READY handover=%t", st.HandoverAvailable())
		}
	}()
	st.Wait()
	p.out.line("EXIT")
	return nil
}
