package main

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/nri-handover/nri/test/bench/loadgen"
)

// arm is one side of an experiment: a label and the command line of one run.
type arm struct {
	label string
	argv  []string
}

// experiment runs its arms for a number of rounds, rotating their order
// every round so that neither always runs first (after the other's plugins
// exited, or while the machine is busier).
type experiment struct {
	id     string
	rounds int
	arms   []arm
}

// Arm labels.
const (
	ours           = "ours"
	upstream       = "upstream"
	floorArm       = "floor"
	floorMuxArm    = "floor-mux"            // the floor over our multiplexer
	upstreamOurs   = "upstream-our-plugin"  // upstream's runtime, a plugin on our stub
	oursLegacy     = "ours-upstream-plugin" // our runtime, a plugin on upstream's stub
	oursSequential = "ours-sequential"
	oursFanOut     = "ours-fan-out"
	oursDeltaFull  = "ours-delta-full-cost" // a takeover whose plugin redoes its whole reconciliation in the delta round
	oursTakeover   = "ours-takeover"
	oursNoDelta    = "ours-no-delta-rounds" // a takeover whose plugin takes no delta rounds: its full round in the switch's hold
)

// Experiment sizes.
const (
	blockSyncOps = 2_000_000
	idlePlugins  = 100
	fanOutWork   = "200us"
	// changeEvery: in the handover rows one operation in so many creates a
	// container (one every 100 ms at the 2 ms pace), the others start one:
	// a small delta, whatever the node's size.
	changeEvery = "50"
	// longStopHold is how long an operation holds BlockPluginSync in the
	// longstop row: a graceful stop (containerd holds the block across a
	// whole StopContainer).
	longStopHold = "10s"
	// busy row: BlockPluginSync is never idle. Holders take it every
	// busyHoldEvery and keep it busyHoldFor (four overlap at any moment),
	// one more holds it longStopHold (a graceful stop) from right before
	// the launch, and every operation creates a container.
	busyHoldEvery = "5ms"
	busyHoldFor   = "20ms"
	// busyMaxSize: the busy row runs at the node sizes up to this one.
	busyMaxSize = 10000
)

// eventOps is how many operations an event path run times, by plugins.
func eventOps(plugins int) int {
	switch {
	case plugins >= 16:
		return 300
	case plugins >= 4:
		return 800
	default:
		return 2000
	}
}

// pluginCmd is the command line of impl's plugin: ours or upstream,
// optionally followed by plugin flags.
func (x *binaries) pluginCmd(impl string) string {
	stub, flags, _ := strings.Cut(impl, " ")
	cmd := x.plugin
	if stub == upstream {
		cmd = x.upstream + " plugin"
	}
	return strings.TrimSpace(cmd + " " + flags)
}

func (x *binaries) runtime(impl string) string {
	if impl == upstream {
		return x.upstream
	}
	return x.ours
}

// on builds the arm of impl running mode with args, with impl's plugin
// unless plugin names another stub.
func (x *binaries) on(label, impl, plugin, mode string, args ...string) arm {
	argv := append([]string{x.runtime(impl), mode}, args...)
	if plugin != "" {
		argv = append(argv, "-plugin", x.pluginCmd(plugin))
	}
	return arm{label: label, argv: argv}
}

// heavy is the number of rounds of an experiment whose runs take seconds.
func heavy(rounds, ctrs int) int {
	if ctrs >= 20000 {
		return max(1, (rounds+1)/2)
	}
	return rounds
}

func experiments(x *binaries, rounds int, sizes []int) []experiment {
	var out []experiment
	for _, n := range []int{1, 4, 16} {
		args := []string{"-plugins", fmt.Sprint(n), "-n", fmt.Sprint(eventOps(n))}
		e := experiment{id: fmt.Sprintf("events/plugins=%d", n), rounds: rounds, arms: []arm{
			x.on(ours, ours, ours, "events", args...),
			x.on(upstream, upstream, upstream, "events", args...),
		}}
		if n == 1 { // where the time goes: the floor, then each side's share
			floor := []string{x.floor, "events", "-n", fmt.Sprint(eventOps(1))}
			e.arms = append(e.arms,
				arm{label: floorArm, argv: floor},
				arm{label: floorMuxArm, argv: append(slices.Clone(floor), "-mux")},
				x.on(oursLegacy, ours, upstream, "events", args...),
				x.on(upstreamOurs, upstream, ours, "events", args...))
		}
		out = append(out, e)
	}
	out = append(out, experiment{id: "blocksync", rounds: rounds, arms: []arm{
		x.on(ours, ours, "", "blocksync", "-n", fmt.Sprint(blockSyncOps)),
		x.on(upstream, upstream, "", "blocksync", "-n", fmt.Sprint(blockSyncOps)),
	}})
	// a small node: each of the idle plugins is synchronized once, one
	// after the other
	idle := []string{"-plugins", fmt.Sprint(idlePlugins), "-containers", "100"}
	out = append(out, experiment{id: "idle", rounds: max(1, (rounds+1)/2), arms: []arm{
		x.on(ours, ours, ours, "idle", idle...),
		x.on(upstream, upstream, upstream, "idle", idle...),
	}})
	for _, n := range sizes {
		ctrs := fmt.Sprint(n)
		// all rounds at every size: gate-held is one sample per run, and a
		// run takes seconds even at 50 000 containers
		out = append(out, experiment{id: "handover/ctrs=" + ctrs, rounds: rounds, arms: []arm{
			x.on(ours, ours, ours, "stall", "-containers", ctrs, "-sync-delay", "0s", "-predecessor", "-change-every", changeEvery),
			x.on(oursNoDelta, ours, ours+" -delta-cost none", "stall", "-containers", ctrs, "-sync-delay", "0s", "-predecessor", "-change-every", changeEvery),
			x.on(upstream, upstream, upstream, "stall", "-containers", ctrs, "-sync-delay", "0s", "-change-every", changeEvery),
		}})
	}
	stall := []string{"-containers", "1000", "-sync-delay", "200ms"}
	out = append(out, experiment{id: "stall200", rounds: rounds, arms: []arm{
		x.on(ours, ours, ours, "stall", append(stall, "-predecessor")...),
		x.on(oursDeltaFull, ours, ours+" -delta-cost full", "stall", append(stall, "-predecessor")...),
		x.on(oursLegacy, ours, upstream, "stall", stall...),
		x.on(upstream, upstream, upstream, "stall", stall...),
	}})
	// a plugin joins or takes over beside a 10 s stop; each run lasts the
	// stop, so a third of the rounds (the figure is all or nothing)
	ls := []string{"-containers", "1000", "-hold", longStopHold}
	out = append(out, experiment{id: "longstop", rounds: max(1, (rounds+2)/3), arms: []arm{
		x.on(ours, ours, ours, "longstop", ls...),
		x.on(oursTakeover, ours, ours, "longstop", append(ls, "-predecessor")...),
		x.on(oursLegacy, ours, upstream, "longstop", ls...),
		x.on(upstream, upstream, upstream, "longstop", ls...),
	}})
	// a takeover (ours) or a join (upstream) while BlockPluginSync is never
	// idle; upstream's runs last the stop, so a third of the rounds
	for _, n := range sizes {
		if n > busyMaxSize {
			continue
		}
		b := []string{"-containers", fmt.Sprint(n), "-sync-delay", "0s", "-hold", longStopHold,
			"-hold-every", busyHoldEvery, "-hold-for", busyHoldFor, "-change-every", "1"}
		out = append(out, experiment{id: fmt.Sprintf("busy/ctrs=%d", n), rounds: max(1, (rounds+2)/3), arms: []arm{
			x.on(ours, ours, ours, "busy", append(b, "-predecessor")...),
			x.on(upstream, upstream, upstream, "busy", b...),
		}})
	}
	fan := []string{"-plugins", "16", "-n", "100", "-event", "start", "-work", fanOutWork}
	out = append(out, experiment{id: "fanout", rounds: max(1, (rounds+1)/2), arms: []arm{
		x.on(oursSequential, ours, ours, "events", fan...),
		x.on(oursFanOut, ours, ours, "events", append(fan, "-fanout")...),
		x.on(upstream, upstream, upstream, "events", fan...),
	}})
	for _, n := range sizes {
		ctrs := fmt.Sprint(n)
		out = append(out, experiment{id: "sync/ctrs=" + ctrs, rounds: heavy(rounds, n), arms: []arm{
			x.on(ours, ours, ours, "sync", "-containers", ctrs),
			x.on(oursLegacy, ours, upstream, "sync", "-containers", ctrs),
			x.on(upstream, upstream, upstream, "sync", "-containers", ctrs),
		}})
	}
	return out
}

// figures are one run's measurements, flattened from its result line:
// "dispatch.p50Ns", "stall.extra.gateHeldMs", ...; "load1" is the machine's
// load average when the run started.
type figures map[string]float64

// parseFigures decodes a benchmark binary's result line.
func parseFigures(out []byte) (figures, error) {
	res, err := loadgen.ParseResult(out)
	if err != nil {
		return nil, err
	}
	buf, err := json.Marshal(res)
	if err != nil {
		return nil, err
	}
	var tree map[string]any
	if err := json.Unmarshal(buf, &tree); err != nil {
		return nil, err
	}
	f := figures{}
	flatten("", tree, f)
	return f, nil
}

func flatten(prefix string, v any, into figures) {
	switch v := v.(type) {
	case map[string]any:
		for k, sub := range v {
			if prefix != "" {
				k = prefix + "." + k
			}
			flatten(k, sub, into)
		}
	case float64:
		into[prefix] = v
	}
}

// armResult holds an arm's runs, in round order.
type armResult struct {
	runs []figures
	errs []string
}

// expResult holds an experiment's arms by label.
type expResult struct {
	exp  experiment
	arms map[string]*armResult
}

func runExperiment(e experiment) *expResult {
	r := &expResult{exp: e, arms: map[string]*armResult{}}
	for _, a := range e.arms {
		r.arms[a.label] = &armResult{}
	}
	for round := 0; round < e.rounds; round++ {
		for i := range e.arms {
			a := e.arms[(i+round)%len(e.arms)]
			load := loadgen.LoadAvg()
			f, err := runOnce(a)
			if err != nil {
				// one retry: a run can lose to a machine busy enough to miss
				// a registration timeout; a second failure is reported
				fmt.Fprintf(os.Stderr, "retrying after: %v\n", err)
				load = loadgen.LoadAvg()
				f, err = runOnce(a)
			}
			ar := r.arms[a.label]
			if err != nil {
				ar.errs = append(ar.errs, err.Error())
				continue
			}
			f["load1"] = load
			f["round"] = float64(round)
			ar.runs = append(ar.runs, f)
		}
	}
	return r
}

// loadRange is the lowest and highest load average any run started at.
func loadRange(res map[string]*expResult) (lo, hi float64) {
	first := true
	for _, r := range res {
		for _, a := range r.arms {
			for _, f := range a.runs {
				l := f["load1"]
				if first || l < lo {
					lo = l
				}
				if first || l > hi {
					hi = l
				}
				first = false
			}
		}
	}
	return lo, hi
}
