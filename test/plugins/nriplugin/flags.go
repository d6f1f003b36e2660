package main

import (
	"flag"
	"fmt"
	"strings"
	"time"
)

// kvFlags collects repeated key=value flags.
type kvFlags map[string]string

func (k kvFlags) String() string { return fmt.Sprint(map[string]string(k)) }

func (k kvFlags) Set(s string) error {
	key, val, ok := strings.Cut(s, "=")
	if !ok || key == "" {
		return fmt.Errorf("want key=value, got %q", s)
	}
	k[key] = val
	return nil
}

// options are the plugin's command line. Steps are "register", "configure",
// "synchronize", "shutdown" or an event's pretty name ("CreateContainer").
type options struct {
	socket     string
	name, idx  string
	version    string
	instance   string
	generation uint64
	events     string
	record     string

	annotate    kvFlags
	env         kvFlags
	memoryLimit int64

	hangAt    string // block at this step, not answering, until the connection ends
	delayAt   string // wait delay at this step
	delay     time.Duration
	failAt    string // return an error at this step
	onlyCtr   string // restrict hang/delay/fail to events on this container
	hangCount int    // hang only this many times (0: always)

	stopReadingAfter string // stop reading the connection once this step was handled (until SIGUSR2)

	unsolicitedOn  string // "synchronize", an event pretty name, or "signal" (SIGUSR1)
	unsolicitedMem int64

	readyFile        string // stub readiness file
	exitOnSuperseded bool
	handover         bool

	validate         bool   // act as a validator too
	rejectAnnotation string // as a validator, reject adjustments setting this annotation
	reconnect        bool   // run again after the connection closes (runtime restarts)

	updateMemory  int64 // in UpdateContainer, answer with this memory limit instead
	failRequest   bool  // failure policy: fail requests this plugin fails to handle
	keepConnected bool  // failure policy: stay connected after a timeout
}

func parseFlags(args []string) (*options, error) {
	o := &options{annotate: kvFlags{}, env: kvFlags{}}
	fs := flag.NewFlagSet("nriplugin", flag.ContinueOnError)
	fs.StringVar(&o.socket, "socket", "", "NRI socket path (default: stub default or environment)")
	fs.StringVar(&o.name, "name", "", "plugin name (default: environment or executable name)")
	fs.StringVar(&o.idx, "idx", "", "plugin index")
	fs.StringVar(&o.version, "version", "", "plugin version reported at registration")
	fs.StringVar(&o.instance, "instance", "", "instance id reported at registration")
	fs.Uint64Var(&o.generation, "generation", 0, "rollout generation reported at registration")
	fs.StringVar(&o.events, "events", "", "events to subscribe (ParseEventMask syntax; default: every handled event)")
	fs.StringVar(&o.record, "record", "-", "event record file ('-' for stdout)")
	fs.Var(o.annotate, "annotate", "key=value annotation to add in CreateContainer (repeatable)")
	fs.Var(o.env, "env", "key=value environment variable to add in CreateContainer (repeatable)")
	fs.Int64Var(&o.memoryLimit, "memory-limit", 0, "memory limit to set in CreateContainer")
	fs.StringVar(&o.hangAt, "hang", "", "step to hang at")
	fs.StringVar(&o.delayAt, "delay-at", "", "step to delay at")
	fs.DurationVar(&o.delay, "delay", 0, "how long to delay at -delay-at")
	fs.StringVar(&o.failAt, "fail", "", "step to fail at")
	fs.StringVar(&o.onlyCtr, "only-container", "", "apply -hang/-delay/-fail only to this container")
	fs.IntVar(&o.hangCount, "hang-count", 0, "hang at most this many times (0: every time)")
	fs.StringVar(&o.stopReadingAfter, "stop-reading-after", "", "stop reading the connection at this step, its reply still goes out (SIGUSR2 resumes)")
	fs.StringVar(&o.unsolicitedOn, "unsolicited-on", "", "when to send an unsolicited memory update")
	fs.Int64Var(&o.unsolicitedMem, "unsolicited-memory", 0, "memory limit of the unsolicited update")
	fs.StringVar(&o.readyFile, "ready-file", "", "file the stub keeps while this instance is the active one")
	fs.BoolVar(&o.handover, "handover", false, "opt into handover (stub.WithHandover)")
	fs.BoolVar(&o.exitOnSuperseded, "exit-on-superseded", false, "let Run return when superseded")
	fs.BoolVar(&o.validate, "validate", false, "also validate container adjustments")
	fs.StringVar(&o.rejectAnnotation, "reject-annotation", "", "as a validator, reject adjustments setting this annotation")
	fs.BoolVar(&o.reconnect, "reconnect", false, "reconnect after the runtime goes away, until stopped")
	fs.Int64Var(&o.updateMemory, "update-memory", 0, "in UpdateContainer, replace the requested update with this memory limit")
	fs.BoolVar(&o.failRequest, "fail-request", false, "failure policy: the runtime fails requests this plugin fails to handle")
	fs.BoolVar(&o.keepConnected, "keep-connected", false, "failure policy: the runtime keeps this plugin after a timeout")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	return o, nil
}
