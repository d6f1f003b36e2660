package main

import (
	"flag"
	"fmt"
	"strconv"
	"strings"
)

// Record entry kinds of this plugin besides the event pretty names and the
// kinds of test/plugins/record (Configure, Synchronize, Shutdown, RoleChange,
// Unsolicited, Exit, Hang).
const (
	Exit   = "Exit"   // Run returned; Detail "is=<sentinel>;reason=..;succ=..;succver=.."
	Ready  = "Ready"  // the stub became ready; Detail "handover=<bool>"
	Closed = "Closed" // the connection to the runtime ended
	Die    = "Die"    // about to SIGKILL itself; Detail is the step
	Armed  = "Armed"  // SIGHUP received: dies when superseded
)

// options are the plugin's command line.
//
// Steps: "configure", "synchronize" (a full round), "delta" (a delta round),
// "active" and "standby" (role changes), "shutdown", "supersede" (a
// Shutdown(SUPERSEDED) or RoleChange(STANDBY)), and "event:N" (the N-th pod
// or container event this instance handles, counting from 1); "active:N" and
// "standby:N" are the N-th role change of that kind.
type options struct {
	socket, name, idx string
	version, instance string
	generation        uint64
	record            string
	readyFile         string

	dieAt       string // SIGKILL itself at this step
	dieRecorded bool   // at "event:N": record the event before dying
	crashAt     string // exit(3) at this step
	failAt      string // return an error at this step
	hangAt      string // hold at this step until SIGUSR2 or the request is cancelled (events: the connection ends)

	unsolicitedMem int64 // memory limit sent by SIGUSR1

	legacy  bool // do not opt into handover (a plugin written for upstream)
	noDelta bool // opt into handover without delta-aware synchronization
}

func parseFlags(args []string) (*options, error) {
	o := &options{}
	fs := flag.NewFlagSet("handover-plugin", flag.ContinueOnError)
	fs.StringVar(&o.socket, "socket", "", "NRI socket path")
	fs.StringVar(&o.name, "name", "p", "plugin name")
	fs.StringVar(&o.idx, "idx", "10", "plugin index")
	fs.StringVar(&o.version, "version", "", "plugin version reported at registration")
	fs.StringVar(&o.instance, "instance", "", "instance id reported at registration")
	fs.Uint64Var(&o.generation, "generation", 0, "rollout generation reported at registration")
	fs.StringVar(&o.record, "record", "-", "record file ('-' for stdout)")
	fs.StringVar(&o.readyFile, "ready-file", "", "ready file kept by the stub")
	fs.StringVar(&o.dieAt, "die-at", "", "step at which to SIGKILL itself")
	fs.BoolVar(&o.dieRecorded, "die-recorded", false, "at event:N, record the event before dying")
	fs.StringVar(&o.crashAt, "crash-at", "", "step at which to exit(3)")
	fs.StringVar(&o.failAt, "fail-at", "", "step at which to return an error")
	fs.StringVar(&o.hangAt, "hang-at", "", "step at which to hold until SIGUSR2")
	fs.Int64Var(&o.unsolicitedMem, "unsolicited-memory", 1<<30, "memory limit of the SIGUSR1 update")
	fs.BoolVar(&o.legacy, "legacy", false, "do not opt into handover, as a plugin written for upstream")
	fs.BoolVar(&o.noDelta, "no-delta", false, "opt into handover with upstream's Synchronize only (no delta rounds)")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	for _, s := range []string{o.dieAt, o.crashAt, o.failAt, o.hangAt} {
		if err := checkStep(s); err != nil {
			return nil, err
		}
	}
	return o, nil
}

var steps = map[string]bool{
	"": true, "configure": true, "synchronize": true, "delta": true, "active": true,
	"standby": true, "shutdown": true, "supersede": true,
}

func checkStep(s string) error {
	if steps[s] {
		return nil
	}
	for _, prefix := range []string{"event:", "active:", "standby:"} {
		if n, ok := strings.CutPrefix(s, prefix); ok {
			if v, err := strconv.Atoi(n); err == nil && v > 0 {
				return nil
			}
		}
	}
	return fmt.Errorf("unknown step %q", s)
}

// kv renders one key=value pair of a Detail field; pairs are joined with ';'.
func kv(k, v string) string { return k + "=" + v }
