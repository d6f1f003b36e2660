// Command handover-plugin is the plugin process of the handover suites
// (test/handover). It is built on pkg/stub, handles every pod and container
// event, and records in the shared record format (test/plugins/record) what
// the exactly-once proof needs from the plugin's own side: every event with
// the runtime's sequence number, each synchronization round with its
// takeover details, role changes, the typed shutdown reason, readiness,
// connection loss and how Run ended.
//
// To inject failures at an exact step of a handover it can kill itself with
// SIGKILL (-die-at), exit (-crash-at), fail (-fail-at) or hold (-hang-at) at
// a step. Signals steer it while it runs:
//
//	SIGUSR1  send an unsolicited UpdateContainers for every known container
//	SIGUSR2  release a step held by -hang-at
//	SIGHUP   arm a SIGKILL for the moment the runtime supersedes this instance
//	SIGTERM  stop the stub and exit
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/nri-handover/nri/pkg/stub"
	"github.com/nri-handover/nri/test/plugins/record"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintf(os.Stderr, "handover-plugin: %v\n", err)
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

	p := newPlugin(o, rec)
	st, err := stub.NewHandoverStub(p.stubPlugin(), p.stubOptions()...)
	if err != nil {
		return fmt.Errorf("create stub: %w", err)
	}
	p.stub = st

	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGUSR1, syscall.SIGUSR2, syscall.SIGHUP)
	go p.steer(sigs)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go p.watchReadiness(ctx)

	err = st.Run(ctx)
	rec.Add(record.Line{Ev: Exit, Detail: classify(err), Err: errString(err)})
	return nil
}

// steer reacts to the suite's signals.
func (p *plugin) steer(sigs <-chan os.Signal) {
	for s := range sigs {
		switch s {
		case syscall.SIGUSR1:
			go p.sendUnsolicited()
		case syscall.SIGUSR2:
			p.release()
		case syscall.SIGHUP:
			p.arm()
		default:
			p.stub.Stop()
		}
	}
}

// watchReadiness records each time the stub becomes ready, with whether the
// runtime offers handover on the connection.
func (p *plugin) watchReadiness(ctx context.Context) {
	for {
		if err := p.stub.WaitReady(ctx); err != nil {
			return
		}
		p.rec.Add(record.Line{Ev: Ready, Detail: kv("handover", fmt.Sprint(p.stub.HandoverAvailable()))})
		// Wait until readiness is lost again before watching for the next rise.
		if !p.waitUnready(ctx) {
			return
		}
	}
}

// classify names the sentinel Run's error matches, for the suites' checks.
func classify(err error) string {
	if err == nil {
		return kv("is", "nil")
	}
	sentinels := []struct {
		name string
		err  error
	}{
		{"superseded", stub.ErrSuperseded},
		{"rejected", stub.ErrRegistrationRejected},
		{"timeout", stub.ErrTimeout},
		{"sync-failed", stub.ErrSynchronizationFailed},
		{"runtime-shutdown", stub.ErrRuntimeShutdown},
		{"protocol", stub.ErrProtocolError},
		{"removed", stub.ErrRemoved},
		{"disconnected", stub.ErrDisconnected},
		{"unspecified", stub.ErrShutdownUnspecified},
	}
	is := "other"
	for _, s := range sentinels {
		if errors.Is(err, s.err) {
			is = s.name
			break
		}
	}
	out := kv("is", is)
	var se *stub.ShutdownError
	if errors.As(err, &se) {
		out += ";" + kv("reason", se.Reason.String()) + ";" + kv("succ", se.SuccessorInstance) +
			";" + kv("succver", se.SuccessorVersion)
	}
	return out
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
