package main

import (
	"bufio"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// history is what containerd's log says about one plugin's instances: who
// was active when, and the containers created meanwhile.
type history struct {
	changes   []change             // activations and losses, in the log's order
	pidInst   map[string]string    // connection pid → the instance it registered as
	instPod   map[string]string    // instance → its pod's name ("admitted: pod NS/NAME")
	uidPod    map[string]string    // pod uid → pod name (RunPodSandbox)
	switches  []switched           // "OLD superseded by NEW", in order
	mismatch  []string             // losses of a pid the activations did not name active
	closed    map[string]closing   // connection pid → its close
	podStop   map[string]event     // pod name → the first stop of its containers or sandbox
	regs      []registration       // every registration, in order
	created   []creation           // containers created, in order of their replies
	sandboxes map[string]string    // sandbox id → pod name
	ctrPod    map[string]string    // container id → pod name
	open      map[string]*creation // CreateContainer calls in flight, by sandbox and container name
	from, to  int                  // the scenario's lines: (from, to]
}

// switched is a switch from old to new.
type switched struct {
	event
	old, new string
}

// event is a line of the log: its number and time.
type event struct {
	n int
	t time.Time
}

// closing is the end of a connection: closed by the plugin (how "",
// its process gone) or disconnected by the adaptation (how: the reason).
type closing struct {
	event
	how string
}

// change makes inst active (lost false) or ends pid's instance inst being
// active (lost true: nobody is active until the next activation).
type change struct {
	event
	inst, pid string
	lost      bool
}

type registration struct {
	event
	pid, inst string
}

// creation is one container containerd created: the instances active
// from its CreateContainer request to its reply, "none" for a time none was.
type creation struct {
	id     string
	active []string
}

// describe matches adaptation's plugin.describe(): NAME [version V]
// [instance I] [generation G].
const describe = `(\S+)(?: version (\S+))?(?: instance ([^\s,]+))?(?: generation (\d+))?`

var (
	timeRE = regexp.MustCompile(`^time="([^"]+)"`)
	// the adaptation's lines (msg, unquoted) that name who is active
	registeredRE  = regexp.MustCompile(`^plugin external:(\S+)\[(\d+)\] registered \(version "[^"]*", instance "([^"]*)"`)
	admittedRE    = regexp.MustCompile(`^plugin ` + describe + ` admitted: pod [^/ ]+/(\S+) `)
	joinedRE      = regexp.MustCompile(`^plugin external:(\S+)\[(\d+)\] connected and synchronized$`)
	supersededRE  = regexp.MustCompile(`^plugin ` + describe + ` superseded by ` + describe + `(?:, which does not use handover: .*)?$`)
	reactivatedRE = regexp.MustCompile(`^plugin ` + describe + ` reactivated after .* (?:left|failed to join)$`)
	legacyRE      = regexp.MustCompile(`^plugin ` + describe + ` takes over from external:\S+\[\d+\], which does not support handover$`)
	removedRE     = regexp.MustCompile(`^plugin external:(\S+)\[(\d+)\] removed$`)
	closedRE      = regexp.MustCompile(`^connection to plugin external:(\S+)\[(\d+)\] closed$`)
	disconnectRE  = regexp.MustCompile(`^disconnecting plugin external:(\S+)\[(\d+)\] \(SHUTDOWN_REASON_(\w+)\)`)
	// containerd's CRI lines
	sandboxRE   = regexp.MustCompile(`^RunPodSandbox for name:"([^"]*)"\s+uid:"([^"]*)"\s.* returns sandbox id "([^"]*)"$`)
	createRE    = regexp.MustCompile(`^CreateContainer within sandbox "([^"]*)" for container name:"([^"]*)"`)
	createdRE   = regexp.MustCompile(`^CreateContainer within sandbox "([^"]*)" for name:"([^"]*)".* returns container id "([^"]*)"$`)
	createErrRE = regexp.MustCompile(`^CreateContainer within sandbox "([^"]*)" for name:"([^"]*)".* failed`)
	stopCtrRE   = regexp.MustCompile(`^StopContainer for "([^"]*)" with timeout`)
	stopPodRE   = regexp.MustCompile(`^StopPodSandbox for "([^"]*)"$`)
)

// parse reads containerd's log (logrus text: time="..." ... msg="...", msg
// Go-quoted) for plugin name's instances. An instance is active from the
// adaptation's line for its activation: its switch ("OLD superseded by
// NEW"), its join with nobody to supersede ("[PID] connected and
// synchronized"), its reactivation ("reactivated after"), its takeover
// from a plugin without handover ("takes over from external:...[PID],
// which does not support handover"). It stops being active at its
// successor's activation, or at its loss: "plugin external:NAME[PID]
// removed", which the adaptation logs only for the active instance
// (lifecycle.go's remove), whatever removed it (its connection closed, or
// disconnected). Lines before from count for who is active; creations count
// from line from+1 to to (0: to the end).
func parse(r io.Reader, name string, from, to int) (*history, error) {
	h := &history{
		pidInst: map[string]string{}, instPod: map[string]string{}, uidPod: map[string]string{},
		closed: map[string]closing{}, podStop: map[string]event{},
		sandboxes: map[string]string{}, ctrPod: map[string]string{}, open: map[string]*creation{},
	}
	cur := change{}
	set := func(c change) {
		cur = c
		h.changes = append(h.changes, c)
		who := c.inst
		if c.lost {
			who = "none"
		}
		for _, o := range h.open {
			o.active = append(o.active, who)
		}
	}
	activate := func(e event, inst, pid string) {
		if inst == "" {
			return
		}
		if pid == "" {
			pid = h.pidOf(inst)
		}
		if !cur.lost && cur.inst == inst && cur.pid == pid {
			return // (a switch's "superseded by" and its join's "connected")
		}
		set(change{event: e, inst: inst, pid: pid})
	}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 16<<20) // containerd's lines can be long
	for n := 1; sc.Scan(); n++ {
		l := sc.Text()
		tm := timeRE.FindStringSubmatch(l)
		i := strings.Index(l, ` msg="`)
		if tm == nil || i < 0 {
			continue // not logrus' (a child's output)
		}
		t, err := time.Parse(time.RFC3339Nano, tm[1])
		if err != nil {
			return nil, fmt.Errorf("line %d: %v", n, err)
		}
		q, err := strconv.QuotedPrefix(l[i+5:])
		if err == nil {
			q, err = strconv.Unquote(q)
		}
		if err != nil {
			return nil, fmt.Errorf("line %d: msg is not a quoted string: %v", n, err)
		}
		e := event{n, t}
		in := n > from && (to == 0 || n <= to)
		if m := registeredRE.FindStringSubmatch(q); m != nil && m[1] == name {
			h.pidInst[m[2]] = m[3]
			h.regs = append(h.regs, registration{e, m[2], m[3]})
		} else if m := admittedRE.FindStringSubmatch(q); m != nil && m[1] == name && m[3] != "" {
			h.instPod[m[3]] = m[5]
		} else if m := joinedRE.FindStringSubmatch(q); m != nil && m[1] == name {
			activate(e, h.pidInst[m[2]], m[2])
		} else if m := supersededRE.FindStringSubmatch(q); m != nil && m[5] == name {
			h.switches = append(h.switches, switched{e, m[3], m[7]})
			activate(e, m[7], "")
		} else if m := reactivatedRE.FindStringSubmatch(q); m != nil && m[1] == name {
			activate(e, m[3], "")
		} else if m := legacyRE.FindStringSubmatch(q); m != nil && m[1] == name {
			activate(e, m[3], "")
		} else if m := removedRE.FindStringSubmatch(q); m != nil && m[1] == name {
			if cur.lost || cur.pid != m[2] {
				h.mismatch = append(h.mismatch, fmt.Sprintf("line %d: pid %s removed as the active instance while %s", n, m[2], h.who(cur)))
			}
			set(change{event: e, inst: h.pidInst[m[2]], pid: m[2], lost: true})
		} else if m := closedRE.FindStringSubmatch(q); m != nil && m[1] == name {
			if _, ok := h.closed[m[2]]; !ok {
				h.closed[m[2]] = closing{e, ""}
			}
		} else if m := disconnectRE.FindStringSubmatch(q); m != nil && m[1] == name {
			if _, ok := h.closed[m[2]]; !ok {
				h.closed[m[2]] = closing{e, strings.ToLower(m[3])}
			}
		} else if m := sandboxRE.FindStringSubmatch(q); m != nil {
			h.sandboxes[m[3]], h.uidPod[m[2]] = m[1], m[1]
		} else if m := createRE.FindStringSubmatch(q); m != nil {
			who := cur.inst
			if who == "" || cur.lost {
				who = "none"
			}
			h.open[m[1]+"/"+m[2]] = &creation{active: []string{who}}
		} else if m := createdRE.FindStringSubmatch(q); m != nil {
			h.ctrPod[m[3]] = h.sandboxes[m[1]]
			if c := h.open[m[1]+"/"+m[2]]; c != nil {
				delete(h.open, m[1]+"/"+m[2])
				c.id = m[3]
				if in {
					h.created = append(h.created, *c)
				}
			}
		} else if m := createErrRE.FindStringSubmatch(q); m != nil {
			delete(h.open, m[1]+"/"+m[2])
		} else if m := stopCtrRE.FindStringSubmatch(q); m != nil {
			h.stopped(h.ctrPod[m[1]], e)
		} else if m := stopPodRE.FindStringSubmatch(q); m != nil {
			h.stopped(h.sandboxes[m[1]], e)
		}
	}
	h.from, h.to = from, to
	return h, sc.Err()
}

// stopped records the first stop of one of pod's containers or of its
// sandbox: the kubelet stops a pod's containers when the pod is deleted (a
// container killed is restarted, not stopped).
func (h *history) stopped(pod string, e event) {
	if _, ok := h.podStop[pod]; pod != "" && !ok {
		h.podStop[pod] = e
	}
}

// pidOf is the connection that last registered as inst: one process per
// instance (a pod's uid) is connected at a time.
func (h *history) pidOf(inst string) string {
	for i := len(h.regs) - 1; i >= 0; i-- {
		if h.regs[i].inst == inst {
			return h.regs[i].pid
		}
	}
	return ""
}

// podOf is the name of inst's pod: from its admission, or the pod whose
// uid it is (the annotator's instance is its pod's uid).
func (h *history) podOf(inst string) string {
	if p := h.instPod[inst]; p != "" {
		return p
	}
	return h.uidPod[inst]
}

// supersededBy is the instance inst last superseded before line n.
func (h *history) supersededBy(inst string, n int) string {
	old := ""
	for _, s := range h.switches {
		if s.n < n && s.new == inst {
			old = s.old
		}
	}
	return old
}

// activeAt is the last change at or before line n (zero if none).
func (h *history) activeAt(n int) change {
	var c change
	for _, x := range h.changes {
		if x.n > n {
			break
		}
		c = x
	}
	return c
}
