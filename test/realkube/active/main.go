// Command active tells which instance of the plugin containerd had active
// when, from containerd's own log, for the real-Kubernetes e2e
// (test/realkube/run.sh):
//
//	active -containerd-log $R/containerd.log -ev $R/ev -scenario SC created
//	active -containerd-log $R/containerd.log -ev $R/ev -scenario s3 [-bound 8s] premises
//
// created prints SC.created (scenario.sh): per container containerd created
// while SC ran, its id and every instance active from its CreateContainer
// request to its reply, "none" for a time none was.
//
// premises checks what scenario 3 claims to exercise, from the same log
// and its marks (SC.marks: "kill -9 active pid P", "delete candidate
// pod/NAME"): one line per check, "ok TEXT" or "FAIL TEXT", then "result
// KEY VALUE" lines for the run's results. The checks:
//   - the killed pid was the active instance when its connection closed
//     (the adaptation's "removed" line for that pid, after the kill);
//   - the deleted pod's instance registered, and was active or not (which
//     one the run exercised is a result, deleted-instance);
//   - every period with no active instance began with the active
//     instance's loss and ended at the next activation, whoever that is,
//     within the scenario: the only time a container may go unadjusted;
//   - an instance whose successor was lost serves again next, within
//     -bound, if it was superseded by that successor and its pod was not
//     being deleted (the kubelet had stopped none of its containers).
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

func main() {
	clog := flag.String("containerd-log", "", "containerd's log")
	ev := flag.String("ev", "", "the scenarios' records ($R/ev)")
	sc := flag.String("scenario", "", "the scenario")
	name := flag.String("plugin", "50-annotator", "the plugin's index and name")
	bound := flag.Duration("bound", 8*time.Second, "bound of a loss → the superseded instance active again")
	flag.Parse()
	if *clog == "" || *ev == "" || *sc == "" || flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: active -containerd-log FILE -ev DIR -scenario SC [-plugin NAME] [-bound D] created|premises")
		os.Exit(2)
	}
	h, err := read(*clog, *ev, *sc, *name)
	switch {
	case err != nil && flag.Arg(0) == "premises":
		fmt.Printf("FAIL reading containerd's log: %v\n", err) // a check that fails, not a silent one
	case err != nil:
		fmt.Fprintln(os.Stderr, "active:", err)
		os.Exit(1)
	case flag.Arg(0) == "created":
		for _, c := range h.created {
			fmt.Println(c.id, strings.Join(c.active, " "))
		}
	case flag.Arg(0) == "premises":
		marks, err := readMarks(filepath.Join(*ev, *sc+".marks"))
		if err != nil {
			fmt.Printf("FAIL reading the marks: %v\n", err)
			return
		}
		h.premises(os.Stdout, marks, *bound)
	default:
		fmt.Fprintf(os.Stderr, "active: %q is neither created nor premises\n", flag.Arg(0))
		os.Exit(2)
	}
}

// read parses containerd's log for scenario sc's lines (SC.lines: the log's
// line count at its start and stop).
func read(clog, ev, sc, name string) (*history, error) {
	b, err := os.ReadFile(filepath.Join(ev, sc+".lines"))
	if err != nil {
		return nil, err
	}
	f := strings.Fields(string(b))
	if len(f) < 2 {
		return nil, fmt.Errorf("%s.lines: want the start and stop line numbers", sc)
	}
	from, err1 := strconv.Atoi(f[0])
	to, err2 := strconv.Atoi(f[1])
	if err1 != nil || err2 != nil {
		return nil, fmt.Errorf("%s.lines: %q", sc, b)
	}
	r, err := os.Open(clog)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	h, err := parse(r, name, from, to)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", clog, err)
	}
	return h, nil
}

// marks are what the scenario did, and when (SC.marks, epoch seconds).
type marks struct {
	kill, del time.Time
	pid, pod  string
}

func readMarks(path string) (marks, error) {
	var m marks
	b, err := os.ReadFile(path)
	if err != nil {
		return m, err
	}
	for _, l := range strings.Split(string(b), "\n") {
		f := strings.Fields(l)
		if len(f) < 2 {
			continue
		}
		s, err := strconv.ParseFloat(strings.Replace(f[0], ",", ".", 1), 64) // $EPOCHREALTIME follows the locale
		if err != nil {
			return m, fmt.Errorf("%s: %q: %v", path, l, err)
		}
		t := time.Unix(0, int64(s*1e9))
		switch w := f[1:]; {
		case len(w) == 5 && strings.Join(w[:4], " ") == "kill -9 active pid":
			m.kill, m.pid = t, w[4]
		case len(w) == 3 && strings.Join(w[:2], " ") == "delete candidate":
			m.del, m.pod = t, strings.TrimPrefix(w[2], "pod/")
		}
	}
	if m.kill.IsZero() || m.del.IsZero() {
		return m, fmt.Errorf("%s: no kill or no deletion marked", path)
	}
	return m, nil
}

// premises writes the checks (see the command's doc) to w.
func (h *history) premises(w io.Writer, m marks, bound time.Duration) {
	check := func(ok bool, f string, a ...any) {
		st := "FAIL"
		if ok {
			st = "ok"
		}
		fmt.Fprintf(w, "%s %s\n", st, fmt.Sprintf(f, a...))
	}
	result := func(k string, v any) { fmt.Fprintf(w, "result %s %v\n", k, v) }

	// The kill.
	kill := h.lossOf(m.pid, m.kill)
	if kill != nil {
		since := h.activeAt(kill.n - 1)
		check(true, "the killed pid %s was the active instance when its connection closed: instance %s, active since %s, lost %s the kill",
			m.pid, short(kill.inst), clock(since.t), rel(kill.t.Sub(m.kill)))
	} else {
		check(false, "the killed pid %s was the active instance when its connection closed: %s", m.pid, h.notLost(m.pid, m.kill))
	}

	// The deletion.
	inst := h.instOfPod(m.pod)
	switch {
	case inst == "":
		check(false, "the deleted pod %s had an instance: it never registered (neither an active nor a candidate instance deleted)", m.pod)
		result("deleted-instance", "none")
	default:
		if a := h.activeSpans(inst); len(a) > 0 {
			check(true, "the deleted pod %s's instance %s was active: %s; the pod deleted at %s", m.pod, short(inst), strings.Join(a, ", "), clock(m.del))
			result("deleted-instance", "active")
		} else {
			check(true, "the deleted pod %s's instance %s was not active: %s; the pod deleted at %s", m.pod, short(inst), h.lifeOf(inst), clock(m.del))
			result("deleted-instance", "not-active")
		}
	}

	// The periods with no active instance, and who serves after a loss.
	gaps, other := h.gaps()
	other = append(other, h.mismatch...)
	check(len(other) == 0,
		"every period with no active instance began with the active instance's loss and ended at the next activation (%d)%s",
		len(gaps), list(append(describeGaps(gaps), other...)))
	result("no-active-periods", len(gaps))
	var again []string
	ok := true
	for _, g := range gaps {
		prev := h.supersededBy(g.loss.inst, g.loss.n)
		if prev == "" || prev == g.loss.inst {
			continue
		}
		pod := h.podOf(prev)
		if s, stopped := h.podStop[pod]; stopped && s.n < g.loss.n {
			again = append(again, fmt.Sprintf("instance %s lost at %s had superseded %s, whose pod %s was being deleted", short(g.loss.inst), clock(g.loss.t), short(prev), pod))
			continue
		}
		d := g.next.t.Sub(g.loss.t)
		ok = ok && g.next.inst == prev && d <= bound
		again = append(again, fmt.Sprintf("instance %s lost at %s had superseded %s, whose pod %s was not deleted; next active: %s, %ss later",
			short(g.loss.inst), clock(g.loss.t), short(prev), pod, short(g.next.inst), secs(d)))
	}
	if len(again) == 0 {
		again = []string{"no instance lost had superseded another"}
	}
	check(ok, "a superseded instance whose pod was not deleted served again within %v when its successor was lost%s", bound, list(again))
}

// gap is a period with no active instance, from loss to next.
type gap struct {
	loss, next change
}

// gaps are the periods with no active instance that end in the scenario,
// each from the active instance's loss to the next activation; other
// describes those that are not: none known active at the scenario's start
// with no loss before, or a loss with no activation before its end.
func (h *history) gaps() (gaps []gap, other []string) {
	if c := h.activeAt(h.from); c.inst == "" && !c.lost {
		other = append(other, "none known active at the scenario's start, and none lost before it")
	}
	var open *change // the loss that began the period with no active instance
	for i := range h.changes {
		c := &h.changes[i]
		if c.n > h.to {
			break
		}
		switch {
		case c.lost && open == nil:
			open = c
		case !c.lost && open != nil:
			if c.n > h.from {
				gaps = append(gaps, gap{*open, *c})
			}
			open = nil
		}
	}
	if open != nil {
		other = append(other, fmt.Sprintf("from %s (instance %s, pid %s, lost) to the scenario's end", clock(open.t), short(open.inst), open.pid))
	}
	return gaps, other
}

func describeGaps(gaps []gap) []string {
	var s []string
	for _, g := range gaps {
		s = append(s, fmt.Sprintf("%s (instance %s, pid %s, lost) → %s (%s active): %ss",
			clock(g.loss.t), short(g.loss.inst), g.loss.pid, clock(g.next.t), short(g.next.inst), secs(g.next.t.Sub(g.loss.t))))
	}
	return s
}

// lossOf is pid's loss as the active instance at or after t, within the
// scenario (nil if there is none).
func (h *history) lossOf(pid string, t time.Time) *change {
	for i, c := range h.changes {
		if c.lost && c.pid == pid && c.n > h.from && c.n <= h.to && !c.t.Before(t) {
			return &h.changes[i]
		}
	}
	return nil
}

// notLost says why pid was not the active instance lost after t: who was
// active when its connection closed, and when its own instance stopped
// being active.
func (h *history) notLost(pid string, t time.Time) string {
	inst := h.pidInst[pid]
	if inst == "" {
		return "it never registered"
	}
	cl, ok := h.closed[pid]
	if !ok {
		return fmt.Sprintf("its connection (instance %s) did not close", short(inst))
	}
	how := "closed"
	if cl.how != "" {
		how = "was disconnected (" + cl.how + ")"
	}
	s := fmt.Sprintf("its connection %s at %s, %s the kill, when %s", how, clock(cl.t), rel(cl.t.Sub(t)), h.who(h.activeAt(cl.n)))
	for i := len(h.changes) - 1; i > 0; i-- {
		if c, prev := h.changes[i], h.changes[i-1]; c.n < cl.n && c.inst != inst && prev.inst == inst && !prev.lost {
			s += fmt.Sprintf(" (its instance %s had stopped being active at %s, %s the kill)", short(inst), clock(c.t), rel(c.t.Sub(t)))
			break
		}
	}
	return s
}

// who names a change's outcome: the instance active, or none.
func (h *history) who(c change) string {
	switch {
	case c.lost:
		return "none was active"
	case c.inst == "":
		return "none was known to be active"
	}
	return "instance " + short(c.inst) + " (pid " + c.pid + ") was active"
}

// instOfPod is the instance of pod name, if one registered.
func (h *history) instOfPod(name string) string {
	for _, r := range h.regs {
		if h.podOf(r.inst) == name {
			return r.inst
		}
	}
	return ""
}

// activeSpans are inst's periods as the active instance that began in the
// scenario.
func (h *history) activeSpans(inst string) []string {
	var s []string
	for i, c := range h.changes {
		if c.lost || c.inst != inst || c.n <= h.from || c.n > h.to || i > 0 && h.changes[i-1].inst == inst && !h.changes[i-1].lost {
			continue
		}
		end := "to the log's end"
		for _, d := range h.changes[i+1:] {
			if d.inst == inst && !d.lost {
				continue
			}
			if d.lost {
				end = fmt.Sprintf("to %s (lost)", clock(d.t))
			} else {
				end = fmt.Sprintf("to %s (superseded by %s)", clock(d.t), short(d.inst))
			}
			break
		}
		s = append(s, fmt.Sprintf("from %s %s", clock(c.t), end))
	}
	return s
}

// lifeOf tells when inst's connections registered and closed.
func (h *history) lifeOf(inst string) string {
	var s []string
	for _, r := range h.regs {
		if r.inst != inst {
			continue
		}
		x := fmt.Sprintf("pid %s registered at %s", r.pid, clock(r.t))
		if c, ok := h.closed[r.pid]; ok && c.how == "" {
			x += ", its connection closed at " + clock(c.t)
		} else if ok {
			x += ", disconnected (" + c.how + ") at " + clock(c.t)
		}
		s = append(s, x)
	}
	return strings.Join(s, "; ")
}

func list(s []string) string {
	if len(s) == 0 {
		return ""
	}
	return ": " + strings.Join(s, "; ")
}

func short(inst string) string {
	if len(inst) > 8 {
		return inst[:8]
	}
	if inst == "" {
		return "?"
	}
	return inst
}

// rel says d as "Ns after" or "Ns before".
func rel(d time.Duration) string {
	if d < 0 {
		return secs(-d) + "s before"
	}
	return secs(d) + "s after"
}

func clock(t time.Time) string { return t.UTC().Format("15:04:05.000") }

func secs(d time.Duration) string { return strconv.FormatFloat(d.Seconds(), 'f', 3, 64) }
