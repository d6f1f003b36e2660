// Command nriplugin is the configurable NRI plugin the integration suites run
// as real processes. It is built on pkg/stub, subscribes to the events named
// by -events, records every request it handles (see test/plugins/record), and
// can be told to adjust containers, hang, delay or fail at a given step, or to
// send unsolicited container updates.
//
// Launched as a pre-installed plugin it takes its identity and connection
// from the environment; a wrapper script can pass flags.
package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/nri-handover/nri/api"
	"github.com/nri-handover/nri/pkg/stub"
	"github.com/nri-handover/nri/test/plugins/record"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintf(os.Stderr, "nriplugin: %v\n", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	o, err := parseFlags(args)
	if err != nil {
		return err
	}
	rec, err := record.Open(o.record, record.Line{
		Name: o.name, Idx: o.idx, Instance: o.instance, Version: o.version,
		Gen: o.generation, Pid: os.Getpid(),
	})
	if err != nil {
		return err
	}
	rec.SetIdentity(os.Getenv(api.PluginNameEnvVar), os.Getenv(api.PluginIdxEnvVar))
	if o.name != "" || o.idx != "" {
		rec.SetIdentity(o.name, o.idx)
	}

	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGUSR1, syscall.SIGUSR2)

	if is(o.hangAt, "register") {
		return hangInRegistration(o, rec, sigs)
	}

	p := newPlugin(o, rec)
	var impl stub.Plugin = p
	if o.validate {
		impl = validator{p}
	}
	opts := append(stubOptions(o), stub.WithOnClose(p.connectionEnded))
	if o.stopReadingAfter != "" {
		p.dialer = &stallingDialer{}
		opts = append(opts, stub.WithDialer(p.dialer.dial))
	}
	st, err := stub.New(impl, opts...)
	if err != nil {
		return fmt.Errorf("create stub: %w", err)
	}
	p.stub = st

	stopped := make(chan struct{})
	go func() {
		for s := range sigs {
			if s == syscall.SIGUSR1 {
				go p.sendUnsolicited(nil)
				continue
			}
			if s == syscall.SIGUSR2 {
				if c := p.dialer.current(); c != nil {
					c.resume()
				}
				continue
			}
			select {
			case <-stopped:
			default:
				close(stopped)
			}
			st.Stop()
		}
	}()

	for {
		err = st.Run(context.Background())
		l := record.Line{Ev: record.Exit}
		if err != nil {
			l.Err = err.Error()
		}
		rec.Add(l)
		if !o.reconnect || !waitToReconnect(stopped) {
			return nil
		}
	}
}

// waitToReconnect pauses before the next connection attempt; it reports
// false once the plugin was told to stop.
func waitToReconnect(stopped <-chan struct{}) bool {
	select {
	case <-stopped:
		return false
	case <-time.After(50 * time.Millisecond):
		return true
	}
}

func stubOptions(o *options) []stub.Option {
	var opts []stub.Option
	if o.name != "" {
		opts = append(opts, stub.WithPluginName(o.name))
	}
	if o.idx != "" {
		opts = append(opts, stub.WithPluginIdx(o.idx))
	}
	if o.socket != "" {
		opts = append(opts, stub.WithSocketPath(o.socket))
	}
	if o.version != "" {
		opts = append(opts, stub.WithPluginVersion(o.version))
	}
	if o.instance != "" {
		opts = append(opts, stub.WithInstanceID(o.instance))
	}
	if o.generation != 0 {
		opts = append(opts, stub.WithGeneration(o.generation))
	}
	if o.readyFile != "" {
		opts = append(opts, stub.WithReadyFile(o.readyFile))
	}
	switch {
	case o.handover:
		opts = append(opts, stub.WithHandover())
	case o.instance != "" || o.generation != 0:
		// The stub takes an identity only from a plugin that opted in: an
		// instance with one but no handover is a plugin whose handover the
		// operator turned off, which registers it without the feature.
		os.Setenv(stub.HandoverEnvVar, "off")
		opts = append(opts, stub.WithHandover())
	}
	if o.exitOnSuperseded {
		opts = append(opts, stub.WithExitOnSuperseded())
	}
	if o.failRequest || o.keepConnected {
		opts = append(opts, stub.WithFailurePolicy(&api.FailurePolicy{
			FailRequest: o.failRequest, KeepConnected: o.keepConnected,
		}))
	}
	return opts
}

// hangInRegistration connects and then never registers, until told to stop.
func hangInRegistration(o *options, rec *record.Recorder, sigs <-chan os.Signal) error {
	socket := o.socket
	if socket == "" {
		socket = api.DefaultSocketPath
	}
	conn, err := net.Dial("unix", socket)
	if err != nil {
		return fmt.Errorf("connect %s: %w", socket, err)
	}
	defer conn.Close()
	rec.Add(record.Line{Ev: record.Connected})
	for s := range sigs {
		if s != syscall.SIGUSR1 {
			break
		}
	}
	rec.Add(record.Line{Ev: record.Exit})
	return nil
}
