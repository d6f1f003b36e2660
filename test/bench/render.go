package main

import (
	_ "embed"
	"fmt"
	"maps"
	"math"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strings"
	"text/template"
	"time"
)

//go:embed benchmarks.md.tmpl
var defaultTemplate string

// machine describes where and on what the report was measured.
type machine struct {
	CPU, GoVersion, Commit, Upstream, Date string
	Cores                                  int
	Duration                               time.Duration
	LoadMin, LoadMax                       float64
}

func readMachine(root string) machine {
	m := machine{CPU: "unknown", Cores: runtime.NumCPU(), Date: time.Now().UTC().Format("2006-01-02 15:04 UTC")}
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if k, v, ok := strings.Cut(l, ":"); ok && strings.TrimSpace(k) == "model name" {
				m.CPU = strings.TrimSpace(v)
				break
			}
		}
	}
	cmdOut := func(name string, args ...string) string {
		cmd := exec.Command(name, args...)
		cmd.Dir = root
		b, err := cmd.Output()
		if err != nil {
			return "unknown"
		}
		return strings.TrimSpace(string(b))
	}
	m.GoVersion = cmdOut("go", "env", "GOVERSION")
	m.Upstream = cmdOut("go", "list", "-m", "-f", "{{.Version}}", "github.com/containerd/nri")
	m.Commit = cmdOut("git", "rev-parse", "--short", "HEAD")
	if st := cmdOut("git", "status", "--porcelain", "--untracked-files=no"); st != "" && st != "unknown" {
		m.Commit += " (with uncommitted changes)"
	}
	return m
}

// doc is what the template renders.
type doc struct {
	Machine machine
	res     map[string]*expResult
	sizes   []int
	micro   []microResult
}

func (d *doc) render(path string) (string, error) {
	text := defaultTemplate
	if path != "" {
		b, err := os.ReadFile(path)
		if err != nil {
			return "", err
		}
		text = string(b)
	}
	t, err := template.New("benchmarks").Parse(text)
	if err != nil {
		return "", err
	}
	var sb strings.Builder
	if err := t.Execute(&sb, d); err != nil {
		return "", err
	}
	return sb.String(), nil
}

// Section renders the table and the reading of one part of the report.
func (d *doc) Section(id string) (string, error) {
	sections := map[string]func() string{
		"summary": d.summary, "events": d.events, "blocksync": d.blockSync, "idle": d.idle,
		"handover": d.handover, "stall": d.stall, "longstop": d.longStop, "busy": d.busy, "fanout": d.fanOut, "sync": d.sync,
		"micro": d.microTable, "failures": d.failureList,
	}
	if f, ok := sections[id]; ok {
		return f(), nil
	}
	return "", fmt.Errorf("no section %q", id)
}

// num prints v with about three significant digits.
func num(v float64) string {
	switch a := math.Abs(v); {
	case math.IsNaN(v):
		return "–"
	case v == math.Trunc(v) && a < 1e15:
		return fmt.Sprintf("%.0f", v)
	case a >= 100:
		return fmt.Sprintf("%.0f", v)
	case a >= 10:
		return fmt.Sprintf("%.1f", v)
	case a >= 1:
		return fmt.Sprintf("%.2f", v)
	default:
		return fmt.Sprintf("%.3f", v)
	}
}

// cell prints a median scaled by k and its range over the runs.
func cell(s stat, k float64) string {
	if !s.ok() {
		return "–"
	}
	if s.n == 1 || s.min == s.max {
		return num(s.med * k)
	}
	return fmt.Sprintf("%s (%s–%s)", num(s.med*k), num(s.min*k), num(s.max*k))
}

// med prints a median scaled by k, "–" without runs.
func med(s stat, k float64) string {
	if !s.ok() {
		return "–"
	}
	return num(s.med * k)
}

// table renders a markdown table, its first column left-aligned and the
// others right-aligned.
func table(head []string, rows [][]string) string { return alignedTable(1, head, rows) }

// alignedTable renders a markdown table, its first left columns
// left-aligned and the others right-aligned.
func alignedTable(left int, head []string, rows [][]string) string {
	var sb strings.Builder
	sb.WriteString("| " + strings.Join(head, " | ") + " |\n|")
	for i := range head {
		if i < left {
			sb.WriteString("---|")
		} else {
			sb.WriteString("---:|")
		}
	}
	sb.WriteString("\n")
	for _, r := range rows {
		sb.WriteString("| " + strings.Join(r, " | ") + " |\n")
	}
	return sb.String()
}

// verdict says whether v meets a goal: at most limit (atMost) or at least.
func verdict(s stat, limit float64, atMost bool) string {
	switch {
	case !s.ok():
		return "not measured"
	case atMost && s.med <= limit, !atMost && s.med >= limit:
		return "**met**"
	default:
		return "not met"
	}
}

func (d *doc) get(id string) *expResult { return d.res[id] }

func (d *doc) load(id string) string {
	if r := d.get(id); r != nil {
		return num(r.load())
	}
	return "–"
}

const (
	nsToUs = 1e-3
	nsToMs = 1e-6
)

func (d *doc) events() string {
	var rows [][]string
	for _, n := range []int{1, 4, 16} {
		id := fmt.Sprintf("events/plugins=%d", n)
		r := d.get(id)
		rows = append(rows, []string{
			fmt.Sprint(n),
			cell(r.fig(ours, "dispatch.p50Ns"), nsToUs), cell(r.fig(upstream, "dispatch.p50Ns"), nsToUs),
			cell(r.ratio(ours, upstream, "dispatch.p50Ns"), 1),
			pair(r, "dispatch.allocsPerOp", 1), pair(r, "dispatch.bytesPerOp", 1), pair(r, "dispatch.cpuNsPerOp", nsToUs),
			d.load(id),
		})
	}
	out := table([]string{"plugins", "ours p50 µs", "upstream p50 µs", "ours/upstream", "allocs/op ours / upstream (ratio)",
		"B/op ours / upstream (ratio)", "runtime CPU µs/op ours / upstream (ratio)", "load1"}, rows)
	r := d.get("events/plugins=1")
	var floorRows [][]string
	for _, a := range []struct{ label, name string }{
		{floorArm, "bare ttrpc floor"},
		{floorMuxArm, "the floor over our multiplexer"},
		{ours, "ours"},
		{oursLegacy, "our runtime, upstream's plugin"},
		{upstreamOurs, "upstream's runtime, our plugin"},
		{upstream, "upstream"},
	} {
		floorRows = append(floorRows, []string{a.name, cell(r.fig(a.label, "dispatch.p50Ns"), nsToUs), cell(r.ratio(a.label, floorArm, "dispatch.p50Ns"), 1)})
	}
	out += "\n" + table([]string{"1 plugin", "p50 µs", "÷ floor"}, floorRows)
	var ratios []string
	for _, n := range []int{1, 4, 16} {
		ratios = append(ratios, med(d.get(fmt.Sprintf("events/plugins=%d", n)).ratio(ours, upstream, "dispatch.p50Ns"), 1))
	}
	floor := r.ratio(ours, floorArm, "dispatch.p50Ns")
	out += fmt.Sprintf("\nReading: ours/upstream p50 is %s at 1 / 4 / 16 plugins (target 2, at most 0.9: %s at 1 plugin); "+
		"with one plugin ours takes %s× the bare ttrpc floor, upstream %s× (target at most 1.2×: %s). "+
		"The multiplexer alone takes the floor to %s×; each runtime with the other's plugin: ours with upstream's %s×, upstream's with ours %s×. "+
		"Allocations and CPU time are the runtime process's per operation (the plugins are other processes).\n",
		strings.Join(ratios, " / "), verdict(r.ratio(ours, upstream, "dispatch.p50Ns"), 0.9, true),
		med(floor, 1), med(r.ratio(upstream, floorArm, "dispatch.p50Ns"), 1), verdict(floor, 1.2, true),
		med(r.ratio(floorMuxArm, floorArm, "dispatch.p50Ns"), 1), med(r.ratio(oursLegacy, floorArm, "dispatch.p50Ns"), 1),
		med(r.ratio(upstreamOurs, floorArm, "dispatch.p50Ns"), 1))
	return out
}

func (d *doc) blockSync() string {
	r := d.get("blocksync")
	row := func(label string) []string {
		return []string{label, cell(r.fig(label, "dispatch.nsPerOp"), 1), med(r.fig(label, "dispatch.bytesPerOp"), 1), med(r.fig(label, "dispatch.allocsPerOp"), 1)}
	}
	out := table([]string{"BlockPluginSync()+Unblock()", "ns/op", "B/op", "allocs/op"}, [][]string{row(ours), row(upstream)})
	ns := r.ratio(ours, upstream, "dispatch.nsPerOp")
	noMore := r.fig(ours, "dispatch.allocsPerOp").med <= r.fig(upstream, "dispatch.allocsPerOp").med &&
		r.fig(ours, "dispatch.bytesPerOp").med <= r.fig(upstream, "dispatch.bytesPerOp").med
	alloc := "not met"
	if noMore {
		alloc = "**met**"
	}
	out += fmt.Sprintf("\nReading: ours/upstream %s in time (no slower: %s), allocations no more than upstream's: %s "+
		"(target 4). Both run the same loop in their runtime binaries (load %s).\n",
		cell(ns, 1), verdict(ns, 1, true), alloc, d.load("blocksync"))
	return out
}

func (d *doc) idle() string {
	r := d.get("idle")
	row := func(key string, label string) []string {
		return []string{label, cell(r.fig(ours, key), 1), cell(r.fig(upstream, key), 1), cell(r.ratio(ours, upstream, key), 1)}
	}
	out := table([]string{fmt.Sprintf("%d idle plugins, KB each", idlePlugins), "ours", "upstream", "ours/upstream"}, [][]string{
		row("idle.runtimeHeapKB", "runtime heap per plugin"),
		row("idle.runtimeRSSKB", "runtime RSS per plugin"),
		row("idle.stubHeapKB", "stub heap per stub"),
		row("idle.stubRSSKB", "stub RSS per stub"),
	})
	out += fmt.Sprintf("\nReading: a connected idle plugin costs the runtime %s KB of heap with ours and %s KB with upstream; "+
		"a stub costs its process %s KB of RSS with ours and %s KB with upstream (all %d stubs in one process, growth "+
		"after GC from before they connected; load %s).\n",
		med(r.fig(ours, "idle.runtimeHeapKB"), 1), med(r.fig(upstream, "idle.runtimeHeapKB"), 1),
		med(r.fig(ours, "idle.stubRSSKB"), 1), med(r.fig(upstream, "idle.stubRSSKB"), 1), idlePlugins, d.load("idle"))
	return out
}

func (d *doc) handover() string {
	var rows [][]string
	var held []string
	worst := stat{}
	for _, n := range d.sizes {
		id := fmt.Sprintf("handover/ctrs=%d", n)
		r := d.get(id)
		rows = append(rows, []string{
			fmt.Sprint(n),
			cell(r.fig(ours, "stall.extra.gateHeldMs"), 1),
			cell(r.fig(ours, "stall.p99Ms"), 1), cell(r.fig(ours, "stall.maxMs"), 1),
			med(r.fig(ours, "stall.extra.deltaObjects"), 1),
			cell(r.fig(ours, "stall.extra.handoverMs"), 1),
			cell(r.fig(upstream, "stall.p99Ms"), 1), cell(r.fig(upstream, "stall.maxMs"), 1),
			d.load(id),
		})
		g := r.fig(ours, "stall.extra.gateHeldMs")
		held = append(held, med(g, 1))
		if g.ok() && (!worst.ok() || g.med > worst.med) {
			worst = g
		}
	}
	out := table([]string{"containers", "ours gate-held ms", "ours op p99 ms", "ours op max ms", "delta objects",
		"ours handover ms", "upstream join p99 ms", "upstream join max ms", "load1"}, rows)
	out += fmt.Sprintf("\nReading: while a takeover commits, ours holds runtime operations for %s ms at %s containers "+
		"(target 1, at most 1 ms at every size: %s). Upstream has no handover: a plugin joining holds every runtime "+
		"operation for its whole synchronization, the upstream columns.\n",
		strings.Join(held, " / "), joinInts(d.sizes, " / "), verdict(worst, 1, true))
	return out + "\n" + d.takeoverTime()
}

// takeoverTime is the handover rows' time to take over: from the
// successor's registration to its switch (HandoverMetrics), with and
// without delta rounds, and on the plugin's own timeline from its start to
// ACTIVE, beside upstream's join from the plugin's start to the end of its
// Synchronize (its first operation comes next: the window's end is the
// next operation that creates a container, every 100 ms here).
func (d *doc) takeoverTime() string {
	var rows [][]string
	var with, without, up []string
	for _, n := range d.sizes {
		id := fmt.Sprintf("handover/ctrs=%d", n)
		r := d.get(id)
		rows = append(rows, []string{
			fmt.Sprint(n),
			cell(r.fig(ours, "stall.extra.handoverMs"), 1), cell(r.fig(ours, "stall.extra.startToActiveMs"), 1),
			cell(r.fig(oursNoDelta, "stall.extra.handoverMs"), 1), cell(r.fig(oursNoDelta, "stall.extra.gateHeldMs"), 1),
			cell(r.fig(oursNoDelta, "stall.extra.startToActiveMs"), 1),
			cell(r.fig(upstream, "stall.extra.startToSyncedMs"), 1),
			d.load(id),
		})
		with = append(with, med(r.fig(ours, "stall.extra.handoverMs"), 1))
		without = append(without, med(r.fig(oursNoDelta, "stall.extra.handoverMs"), 1))
		up = append(up, med(r.fig(upstream, "stall.extra.startToSyncedMs"), 1))
	}
	out := table([]string{"containers", "ours: registration → switch ms", "ours: plugin start → active ms",
		"ours, no delta rounds: registration → switch ms", "its gate-held ms", "its start → active ms",
		"upstream join: plugin start → synchronized ms", "load1"}, rows)
	out += fmt.Sprintf("\nReading: a successor takes over %s ms after it registered at %s containers with delta rounds "+
		"(synchronized from the ledger while its predecessor serves), %s ms without them (its one full round in the "+
		"switch's hold, which then holds operations that long); a plugin joining upstream's runtime is synchronized "+
		"%s ms after its start, holding every operation meanwhile.\n",
		strings.Join(with, " / "), joinInts(d.sizes, " / "), strings.Join(without, " / "), strings.Join(up, " / "))
	return out
}

func joinInts(v []int, sep string) string {
	var s []string
	for _, n := range v {
		s = append(s, fmt.Sprint(n))
	}
	return strings.Join(s, sep)
}

func (d *doc) stall() string {
	r := d.get("stall200")
	row := func(label, what string) []string {
		return []string{what, cell(r.fig(label, "stall.p50Ms"), 1), cell(r.fig(label, "stall.p99Ms"), 1),
			cell(r.fig(label, "stall.maxMs"), 1), cell(r.fig(label, "stall.windowMs"), 1), cell(r.fig(label, "stall.extra.gateHeldMs"), 1)}
	}
	out := table([]string{"1 000 containers, 200 ms Synchronize", "op p50 ms", "op p99 ms", "op max ms", "window ms", "gate-held ms"}, [][]string{
		row(ours, "ours: takeover by a handover plugin"),
		row(oursDeltaFull, "ours: takeover, plugin redoes its whole reconciliation in the delta round"),
		row(oursLegacy, "ours: plugin on upstream's stub joins"),
		row(upstream, "upstream: plugin joins"),
	})
	out += fmt.Sprintf("\nReading: runtime operations wait at most %s ms while a handover plugin takes over, against %s ms "+
		"while a plugin joins upstream's runtime (its whole Synchronize); a plugin without the handover feature gets "+
		"upstream's behaviour from ours (%s ms), and so does a plugin that ignores SyncInfo.Delta (%s ms; load %s).\n",
		med(r.fig(ours, "stall.maxMs"), 1), med(r.fig(upstream, "stall.maxMs"), 1), med(r.fig(oursLegacy, "stall.maxMs"), 1),
		med(r.fig(oursDeltaFull, "stall.maxMs"), 1), d.load("stall200"))
	return out
}

func (d *doc) longStop() string {
	r := d.get("longstop")
	row := func(label, what string) []string {
		return []string{what, cell(r.fig(label, "longStop.maxWaitMs"), 1), cell(r.fig(label, "longStop.p99WaitMs"), 1),
			cell(r.fig(label, "longStop.afterStopMs"), 1), cell(r.fig(label, "longStop.extra.gateHeldMs"), 1)}
	}
	out := table([]string{"1 000 containers, one operation holds BlockPluginSync " + longStopHold, "others' longest wait ms", "p99 wait ms",
		"stop end → plugin handles ms", "gate-held ms"}, [][]string{
		row(ours, "ours: a handover plugin joins (no predecessor)"),
		row(oursTakeover, "ours: a handover plugin takes over"),
		row(oursLegacy, "ours: a plugin on upstream's stub joins"),
		row(upstream, "upstream: a plugin joins"),
	})
	out += fmt.Sprintf("\nReading: beside a %s stop, other BlockPluginSync round trips wait at most %s ms while a plugin takes over "+
		"from an active instance with ours, against %s ms while a plugin joins upstream's runtime, whose queued join keeps every "+
		"operation out until the stop ends; ours joins a first instance the same way (%s ms), as it does a plugin that did not "+
		"opt in (%s ms; load %s).\n",
		longStopHold, med(r.fig(oursTakeover, "longStop.maxWaitMs"), 1),
		med(r.fig(upstream, "longStop.maxWaitMs"), 1), med(r.fig(ours, "longStop.maxWaitMs"), 1),
		med(r.fig(oursLegacy, "longStop.maxWaitMs"), 1), d.load("longstop"))
	return out
}

// busySizes are the node sizes the busy row ran at.
func (d *doc) busySizes() []int {
	var out []int
	for _, n := range d.sizes {
		if d.get(fmt.Sprintf("busy/ctrs=%d", n)) != nil {
			out = append(out, n)
		}
	}
	return out
}

func (d *doc) busy() string {
	sizes := d.busySizes()
	if len(sizes) == 0 {
		return "(not run: no node size up to " + fmt.Sprint(busyMaxSize) + " containers)\n"
	}
	var rows [][]string
	var oursAct, upAct, oursMax, upMax, gaps []string
	for _, n := range sizes {
		id := fmt.Sprintf("busy/ctrs=%d", n)
		r := d.get(id)
		row := func(label, what, active string) []string {
			return []string{fmt.Sprint(n), what,
				cell(r.fig(label, "busy.extra.launchToSyncedMs"), 1), cell(r.fig(label, active), 1),
				cell(r.fig(label, "busy.windowMs"), 1),
				cell(r.fig(label, "busy.p99Ms"), 1), cell(r.fig(label, "busy.maxMs"), 1),
				cell(r.fig(label, "busy.holdMaxMs"), 1), cell(r.fig(label, "busy.gapMs"), 1),
				cell(r.fig(label, "busy.extra.gateHeldMs"), 1), d.load(id)}
		}
		rows = append(rows,
			row(ours, "ours: takeover", "busy.extra.syncedToActiveMs"),
			row(upstream, "upstream: join", "busy.extra.syncedToHandledMs"))
		oursAct = append(oursAct, med(r.fig(ours, "busy.extra.syncedToActiveMs"), 1))
		upAct = append(upAct, med(r.fig(upstream, "busy.windowMs"), 1))
		oursMax = append(oursMax, med(r.fig(ours, "busy.maxMs"), 1))
		upMax = append(upMax, med(r.fig(upstream, "busy.maxMs"), 1))
		gaps = append(gaps, med(r.fig(ours, "busy.gapMs"), 1))
	}
	out := alignedTable(2, []string{"containers", "arm", "launch → synchronized ms", "synchronized → active ms",
		"launch → handles ms", "op p99 ms", "op max ms", "holders' longest wait ms", "longest gap ms", "gate-held ms", "load1"}, rows)
	out += fmt.Sprintf("\nReading: with BlockPluginSync never idle (longest gap %s ms with ours at %s containers) and a %s stop in flight, "+
		"ours goes from synchronized to active in %s ms and the new instance handles operations %s ms after its launch, "+
		"against upstream's join, whose plugin handles its first operation %s ms after its launch, the stop included; runtime "+
		"operations wait at most %s ms during our takeover against %s ms during upstream's join (at %s containers). "+
		"Upstream's synchronized → active is its first handled operation after Synchronize returned: its wait is before "+
		"it synchronizes, in the queue for the gate.\n",
		strings.Join(gaps, " / "), joinInts(sizes, " / "), longStopHold, strings.Join(oursAct, " / "),
		d.busyWindows(sizes, ours), strings.Join(upAct, " / "), strings.Join(oursMax, " / "), strings.Join(upMax, " / "),
		joinInts(sizes, " / "))
	return out
}

func (d *doc) busyWindows(sizes []int, label string) string {
	var w []string
	for _, n := range sizes {
		w = append(w, med(d.get(fmt.Sprintf("busy/ctrs=%d", n)).fig(label, "busy.windowMs"), 1))
	}
	return strings.Join(w, " / ")
}

func (d *doc) fanOut() string {
	r := d.get("fanout")
	row := func(label string) []string {
		return []string{label, cell(r.fig(label, "dispatch.p50Ns"), nsToUs), cell(r.ratio(oursSequential, label, "dispatch.p50Ns"), 1)}
	}
	out := table([]string{"StartContainer, 16 plugins, " + fanOutWork + " work each", "p50 µs", "speed-up over ours sequential"}, [][]string{
		row(oursSequential), row(oursFanOut), row(upstream),
	})
	sp := r.ratio(oursSequential, oursFanOut, "dispatch.p50Ns")
	out += fmt.Sprintf("\nReading: fanned out, a notification to 16 plugins is %s× faster than relayed one after the other "+
		"(target 3, at least 4×: %s; load %s). Each plugin answers after its own work, a timer.\n",
		med(sp, 1), verdict(sp, 4, false), d.load("fanout"))
	return out
}

func (d *doc) sync() string {
	var rows [][]string
	var reg []string
	worst := stat{}
	for _, n := range d.sizes {
		id := fmt.Sprintf("sync/ctrs=%d", n)
		r := d.get(id)
		rt := r.ratio(ours, upstream, "sync.registerMs")
		rows = append(rows, []string{
			fmt.Sprint(n),
			cell(r.fig(ours, "sync.registerMs"), 1), cell(r.fig(oursLegacy, "sync.registerMs"), 1), cell(r.fig(upstream, "sync.registerMs"), 1),
			cell(rt, 1),
			pair(r, "sync.heapPerCtrB", 1), pair(r, "sync.peakRSSGrowthMiB", 1), pair(r, "sync.runtimeCPUMs", 1),
			d.load(id),
		})
		reg = append(reg, med(rt, 1))
		if rt.ok() && (!worst.ok() || rt.med > worst.med) {
			worst = rt
		}
	}
	out := table([]string{"containers", "ours register ms", "ours, upstream-stub plugin ms", "upstream register ms", "ours/upstream",
		"heap B per container ours / upstream (ratio)", "peak RSS growth MiB ours / upstream (ratio)",
		"runtime CPU ms ours / upstream (ratio)", "load1"}, rows)
	out += fmt.Sprintf("\nReading: a plugin joining a node of %s containers (ten per pod) is registered and handling "+
		"events after ours/upstream %s of upstream's time (target 5, no worse: %s). Heap per container is the runtime's "+
		"heap growth after GC once the plugin handles events, divided by the containers: what synchronizing leaves "+
		"behind; the peak RSS growth is what it needed meanwhile; the runtime CPU is the runtime process's CPU time over "+
		"the same span, less disturbed than the time by other work on the machine.\n",
		joinInts(d.sizes, " / "), strings.Join(reg, " / "), verdict(worst, 1, true))
	return out
}

// pair shows key's medians, ours / upstream, and the median of their
// paired ratios.
func pair(r *expResult, key string, k float64) string {
	return med(r.fig(ours, key), k) + " / " + med(r.fig(upstream, key), k) + " (" + med(r.ratio(ours, upstream, key), 1) + ")"
}

func (d *doc) microTable() string {
	if len(d.micro) == 0 {
		return "(not run)\n"
	}
	var rows [][]string
	for _, m := range d.micro {
		rows = append(rows, []string{m.name, cell(m.units["ns/op"], 1), med(m.units["B/op"], 1), med(m.units["allocs/op"], 1)})
	}
	return table([]string{"benchmark (pkg/adaptation)", "ns/op", "B/op", "allocs/op"}, rows)
}

func (d *doc) summary() string {
	ev1 := d.get("events/plugins=1")
	var evs []string
	evWorst := stat{}
	for _, n := range []int{1, 4, 16} {
		s := d.get(fmt.Sprintf("events/plugins=%d", n)).ratio(ours, upstream, "dispatch.p50Ns")
		evs = append(evs, med(s, 1))
		if s.ok() && (!evWorst.ok() || s.med > evWorst.med) {
			evWorst = s
		}
	}
	var held []string
	heldWorst := stat{}
	var reg []string
	regWorst := stat{}
	for _, n := range d.sizes {
		g := d.get(fmt.Sprintf("handover/ctrs=%d", n)).fig(ours, "stall.extra.gateHeldMs")
		held = append(held, med(g, 1))
		if g.ok() && (!heldWorst.ok() || g.med > heldWorst.med) {
			heldWorst = g
		}
		rt := d.get(fmt.Sprintf("sync/ctrs=%d", n)).ratio(ours, upstream, "sync.registerMs")
		reg = append(reg, med(rt, 1))
		if rt.ok() && (!regWorst.ok() || rt.med > regWorst.med) {
			regWorst = rt
		}
	}
	bs := d.get("blocksync")
	floor := ev1.ratio(ours, floorArm, "dispatch.p50Ns")
	fan := d.get("fanout").ratio(oursSequential, oursFanOut, "dispatch.p50Ns")
	sizes := joinInts(d.sizes, " / ")
	return alignedTable(2, []string{"target", "figure", "measured", "goal", "status"}, [][]string{
		{"1", "runtime operations held while a takeover commits (gate-held ms) at " + sizes + " containers", strings.Join(held, " / "), "≤ 1 ms", verdict(heldWorst, 1, true)},
		{"2", "event path p50 ours/upstream at 1 / 4 / 16 plugins", strings.Join(evs, " / "), "≤ 0.9", verdict(evWorst, 0.9, true)},
		{"2", "event path p50 at 1 plugin ÷ bare ttrpc floor", med(floor, 1) + " (upstream " + med(ev1.ratio(upstream, floorArm, "dispatch.p50Ns"), 1) + ")", "≤ 1.2", verdict(floor, 1.2, true)},
		{"3", "StartContainer to 16 plugins, sequential ÷ fanned out", med(fan, 1) + "×", "≥ 4×", verdict(fan, 4, false)},
		{"4", "BlockPluginSync()+Unblock() ns, B, allocs: ours vs upstream",
			fmt.Sprintf("%s ns, %s B, %s vs %s ns, %s B, %s", med(bs.fig(ours, "dispatch.nsPerOp"), 1), med(bs.fig(ours, "dispatch.bytesPerOp"), 1), med(bs.fig(ours, "dispatch.allocsPerOp"), 1),
				med(bs.fig(upstream, "dispatch.nsPerOp"), 1), med(bs.fig(upstream, "dispatch.bytesPerOp"), 1), med(bs.fig(upstream, "dispatch.allocsPerOp"), 1)),
			"ours ≤ upstream", verdict(bs.ratio(ours, upstream, "dispatch.nsPerOp"), 1, true)},
		{"5", "time to register a plugin, ours/upstream, at " + sizes + " containers", strings.Join(reg, " / "), "≤ 1", verdict(regWorst, 1, true)},
	})
}

// failures lists the runs that failed twice.
func (d *doc) failures() []string {
	var out []string
	for id, r := range d.res {
		for label, a := range r.arms {
			for _, e := range a.errs {
				out = append(out, fmt.Sprintf("%s/%s: %s", id, label, e))
			}
		}
	}
	return out
}

func (d *doc) failureList() string {
	f := d.failures()
	if len(f) == 0 {
		return "None: every run succeeded.\n"
	}
	var sb strings.Builder
	for _, e := range f {
		sb.WriteString("- " + strings.ReplaceAll(e, "\n", " ") + "\n")
	}
	return sb.String()
}

// figures lists the median of every figure of every experiment and arm,
// "ID.ARM.KEY VALUE" as the tables print a median, for the documents'
// figure check (hack/figures): a figure quoted elsewhere comes from here.
func (d *doc) figures() string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "# make bench: written by the run, read by hack/figures; do not edit\n")
	fmt.Fprintf(&sb, "commit %s\ndate %s\ncores %d\nload %s-%s\nminutes %.1f\n",
		strings.ReplaceAll(d.Machine.Commit, " (with uncommitted changes)", "+changes"), strings.Fields(d.Machine.Date + " -")[0],
		d.Machine.Cores, num(d.Machine.LoadMin), num(d.Machine.LoadMax), d.Machine.Duration.Minutes())
	for _, id := range slices.Sorted(maps.Keys(d.res)) {
		r := d.res[id]
		for _, arm := range slices.Sorted(maps.Keys(r.arms)) {
			keys := map[string]bool{}
			for _, run := range r.arms[arm].runs {
				for k := range run {
					keys[k] = true
				}
			}
			for _, k := range slices.Sorted(maps.Keys(keys)) {
				fmt.Fprintf(&sb, "%s.%s.%s %s\n", id, arm, k, med(r.fig(arm, k), 1))
				if arm != upstream && r.arms[upstream] != nil {
					if q := r.ratio(arm, upstream, k); q.ok() {
						fmt.Fprintf(&sb, "%s.%s/%s.%s %s\n", id, arm, upstream, k, med(q, 1))
					}
				}
			}
		}
	}
	return sb.String()
}
