// Command takeovers reports, for one scenario of the real-Kubernetes e2e
// (test/realkube/run.sh), how long each plugin instance that registered
// during it took to become the active one, and how busy BlockPluginSync was
// meanwhile, from containerd's own log and the plugin pods' logs:
//
//	go run ./test/realkube/takeovers -containerd-log $R/containerd.log -ev $R/ev -scenario s1 [-bound 8s]
//
// Per instance (its pod UID), every time from containerd's log, so that the
// differences are on one clock: registered ("registered (version"),
// synchronized (the end of its first full round, "synchronized (full
// round)"; a log without that line falls back to the plugin's own log, on
// the pod's clock, and says so), active ("superseded by ... instance UID",
// or its connection's "connected and synchronized" if it replaced nobody), and
// the longest gap in [registered, active]. A gap is an interval with none of
// the CRI calls that take BlockPluginSync in flight (RunPodSandbox,
// CreateContainer, StartContainer, StopContainer, StopPodSandbox,
// RemoveContainer, RemovePodSandbox: containerd logs each one's start and
// end); containerd takes the block inside each call, near the start of the
// stop-side ones (which hold it across a whole graceful stop) and late in
// RunPodSandbox and CreateContainer, so the stop-side gap is also reported:
// an upper bound of the block's own idle intervals.
//
// The last line is "summary: takeovers=N within=M max-synced-active=S
// max-registered-active=S gap=S stop-gap=S" for run.sh's checks; within
// counts the instances whose synchronized → active is at most -bound.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "takeovers:", err)
		os.Exit(1)
	}
}

var (
	reTime       = regexp.MustCompile(`^time="([^"]+)"`)
	reRegistered = regexp.MustCompile(`external:50-annotator\[(\d+)\] registered \(version \\"[^\\]*\\", instance \\"([^\\]*)\\"`)
	reConnected  = regexp.MustCompile(`external:50-annotator\[(\d+)\] connected and synchronized`)
	reFullRound  = regexp.MustCompile(`external:50-annotator\[(\d+)\] synchronized \(full round\)`)
	reSuperseded = regexp.MustCompile(` superseded by .* instance ([^ "\\]+) generation `)
	// the CRI calls that take BlockPluginSync: start and end, keyed by what
	// follows the method name
	reCall = regexp.MustCompile(`msg="(RunPodSandbox|StopPodSandbox|RemovePodSandbox|CreateContainer|StartContainer|StopContainer|RemoveContainer) ((?:[^"\\]|\\.)*)"`)
)

var stopSide = map[string]bool{"StopPodSandbox": true, "RemovePodSandbox": true, "StopContainer": true, "RemoveContainer": true}

type instance struct {
	uid                        string
	registered, synced, active time.Time
	podClock                   bool // synced is from the plugin's log
}

type call struct {
	method     string
	start, end time.Time
}

func run() error {
	clog := flag.String("containerd-log", "", "containerd's log")
	ev := flag.String("ev", "", "the scenarios' records ($R/ev)")
	sc := flag.String("scenario", "", "the scenario")
	bound := flag.Duration("bound", 8*time.Second, "bound of synchronized → active")
	flag.Parse()
	if *clog == "" || *ev == "" || *sc == "" {
		return fmt.Errorf("usage: takeovers -containerd-log FILE -ev DIR -scenario SC [-bound D]")
	}
	return report(os.Stdout, *clog, *ev, *sc, *bound)
}

// report writes the scenario's takeovers and its summary line to w.
func report(w io.Writer, clog, ev, sc string, bound time.Duration) error {
	b, err := os.ReadFile(filepath.Join(ev, sc+".lines"))
	if err != nil {
		return err
	}
	lines := strings.Fields(string(b))
	if len(lines) < 2 {
		return fmt.Errorf("%s.lines: want the start and stop line numbers", sc)
	}
	from, _ := strconv.Atoi(lines[0])
	to, _ := strconv.Atoi(lines[1])

	f, err := os.Open(clog)
	if err != nil {
		return err
	}
	defer f.Close()
	var (
		insts  []*instance
		byPID  = map[string]*instance{}
		byUID  = map[string]*instance{}
		open   = map[string]*call{}
		calls  []*call
		t0, t1 time.Time // the scenario's first and last line's time
	)
	sc2 := bufio.NewScanner(f)
	sc2.Buffer(make([]byte, 1<<20), 1<<24)
	n := 0
	for sc2.Scan() {
		n++
		line := sc2.Text()
		m := reTime.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		t, err := time.Parse(time.RFC3339Nano, m[1])
		if err != nil {
			continue
		}
		in := n > from && n <= to
		if in {
			if t0.IsZero() {
				t0 = t
			}
			t1 = t
		}
		if m := reRegistered.FindStringSubmatch(line); m != nil {
			x := &instance{uid: m[2], registered: t}
			byPID[m[1]] = x
			if in {
				insts = append(insts, x)
				byUID[x.uid] = x
			}
			continue
		}
		if m := reSuperseded.FindStringSubmatch(line); m != nil {
			if x := byUID[m[1]]; x != nil && x.active.IsZero() {
				x.active = t
			}
			continue
		}
		if m := reFullRound.FindStringSubmatch(line); m != nil {
			if x := byPID[m[1]]; x != nil && x.synced.IsZero() {
				x.synced = t
			}
			continue
		}
		if m := reConnected.FindStringSubmatch(line); m != nil {
			if x := byPID[m[1]]; x != nil && x.active.IsZero() {
				x.active = t
			}
			continue
		}
		if m := reCall.FindStringSubmatch(line); m != nil {
			method, rest := m[1], m[2]
			key, done := callKey(method, rest)
			if done {
				if c := open[key]; c != nil {
					c.end = t
					delete(open, key)
				}
			} else {
				c := &call{method: method, start: t}
				open[key] = c
				calls = append(calls, c)
			}
		}
	}
	if err := sc2.Err(); err != nil {
		return err
	}
	for _, c := range open { // still in flight at the log's end
		c.end = t1
	}
	for _, x := range insts {
		if x.synced.IsZero() {
			x.synced, x.podClock = syncedAt(ev, x.uid), true
		}
	}

	gap := func(a, b time.Time, only map[string]bool) (time.Duration, time.Time) {
		return longestGap(calls, a, b, only)
	}
	var within, act, timed int
	var maxSA, maxRA time.Duration
	for _, x := range insts {
		short := x.uid
		if len(short) > 8 {
			short = short[:8]
		}
		if x.active.IsZero() {
			fmt.Fprintf(w, "  instance %s registered at %s, never active (deleted or refused before its switch)\n", short, x.registered.Format("15:04:05.000"))
			continue
		}
		act++
		ra := x.active.Sub(x.registered)
		maxRA = max(maxRA, ra)
		g, _ := gap(x.registered, x.active, nil)
		gs, _ := gap(x.registered, x.active, stopSide)
		sa := "?"
		if !x.synced.IsZero() {
			// A negative difference is printed as it is: it means the
			// two ends are not on one clock, or not the events named.
			d := x.active.Sub(x.synced)
			sa = secs(d)
			if x.podClock {
				sa += " (the plugin's clock)"
			}
			if timed++; timed == 1 || d > maxSA {
				maxSA = d
			}
			if d <= bound {
				within++
			}
		}
		rs := "?"
		if !x.synced.IsZero() {
			rs = secs(x.synced.Sub(x.registered))
		}
		fmt.Fprintf(w, "  instance %s: registered → synchronized %ss, synchronized → active %ss, registered → active %ss; longest gap meanwhile %ss (stop-side calls only %ss)\n",
			short, rs, sa, secs(ra), secs(g), secs(gs))
	}
	g, at := gap(t0, t1, nil)
	gs, ats := gap(t0, t1, stopSide)
	inSC := 0
	for _, c := range calls {
		if c.end.After(t0) && c.start.Before(t1) {
			inSC++
		}
	}
	fmt.Fprintf(w, "  %s: %d calls taking BlockPluginSync in %ss; longest gap with none in flight %ss (at %s), stop-side calls only %ss (at %s)\n",
		sc, inSC, secs(t1.Sub(t0)), secs(g), at.Format("15:04:05.000"), secs(gs), ats.Format("15:04:05.000"))
	fmt.Fprintf(w, "summary: takeovers=%d within=%d max-synced-active=%s max-registered-active=%s gap=%s stop-gap=%s\n",
		act, within, secs(maxSA), secs(maxRA), secs(g), secs(gs))
	return nil
}

func secs(d time.Duration) string { return strconv.FormatFloat(d.Seconds(), 'f', 3, 64) }

// callKey names a call from its start or end line, and tells which.
func callKey(method, rest string) (key string, end bool) {
	for _, suffix := range []string{" returns successfully", " failed, error", " failed"} {
		if strings.HasSuffix(rest, suffix) {
			rest, end = strings.TrimSuffix(rest, suffix), true
		}
	}
	if i := strings.Index(rest, " returns "); i >= 0 {
		rest, end = rest[:i], true
	}
	if method == "CreateContainer" { // start: "... for container M", end: "... for M"
		rest = strings.Replace(rest, " for container ", " for ", 1)
	}
	if method == "StopContainer" { // start: "for ID with timeout N (s)"
		if i := strings.Index(rest, " with timeout "); i >= 0 {
			rest = rest[:i]
		}
	}
	if method == "RemovePodSandbox" { // end: "RemovePodSandbox ID returns successfully"
		rest = strings.TrimPrefix(rest, "for ")
	}
	return method + " " + rest, end
}

// longestGap is the longest interval in [a, b] with none of calls (of the
// methods in only, if set) in flight, and where it starts.
func longestGap(calls []*call, a, b time.Time, only map[string]bool) (time.Duration, time.Time) {
	var iv []*call
	for _, c := range calls {
		if (only == nil || only[c.method]) && c.end.After(a) && c.start.Before(b) {
			iv = append(iv, c)
		}
	}
	sort.Slice(iv, func(i, j int) bool { return iv[i].start.Before(iv[j].start) })
	cur, best, at := a, time.Duration(0), a
	for _, c := range iv {
		if c.start.After(cur) {
			if d := c.start.Sub(cur); d > best {
				best, at = d, cur
			}
		}
		if c.end.After(cur) {
			cur = c.end
		}
	}
	if b.After(cur) && b.Sub(cur) > best {
		best, at = b.Sub(cur), cur
	}
	return best, at
}

// syncedAt is when instance uid's plugin logged its full round ("taking
// over" or "synchronized"), from the CRI time stamp of its pod's log line.
func syncedAt(ev, uid string) time.Time {
	files, _ := filepath.Glob(filepath.Join(ev, "logs", "*_"+uid, "*", "*.log"))
	for _, p := range files {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		for _, l := range strings.Split(string(b), "\n") {
			if strings.Contains(l, `msg="taking over"`) || strings.Contains(l, `msg=synchronized`) || strings.Contains(l, `msg="synchronized"`) {
				if t, err := time.Parse(time.RFC3339Nano, strings.Fields(l)[0]); err == nil {
					return t
				}
			}
		}
	}
	return time.Time{}
}
