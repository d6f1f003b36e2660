package main

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
)

// The records of one scenario, as scenario.sh writes them (see its header
// comment). Times are epoch seconds, the clock of $EPOCHREALTIME and of
// containerd's log alike (one host).
type scenario struct {
	name, title string
	t0, t1      float64 // its start mark, its stop mark or last record
	pods        []podEvent
	load        []loadPod
	ds          []dsEvent
	marks       []mark
	createErrs  int // CreateContainer calls containerd failed (SC.create-errors)
}

// podEvent is one watch event of a plugin pod.
type podEvent struct {
	t               float64
	name, gen, uid  string
	ready, deleting bool
}

// loadPod is one pod of the load loop; uid is the uid of the instance
// that stamped its container, "" when that is not one known instance.
type loadPod struct {
	t       float64
	name    string
	ok      bool
	id, uid string
}

type dsEvent struct {
	t                  float64
	available, desired int
}

type mark struct {
	t    float64
	what string
	kind string // "mark", "kill" or "switch"
}

// takeover is one of containerd's lines that switch a plugin to instance,
// from instance from. The adaptation (switch.go) logs "OLD superseded by NEW"
// at the switch itself ("takes over from", logged when the successor starts
// catching up, is not the switch: on a busy node the predecessor served for
// seconds after it) and "reactivated after" when the instance standing by
// is active again.
type takeover struct {
	t                         float64
	plugin, version, instance string
	gen, fromVersion, from    string
	reactivated               bool
	joined, closed            bool // active without a predecessor; none active
}

// eachLine calls fn for every line of path; an error names the file and line.
func eachLine(path string, fn func(line string) error) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64*1024), 16<<20) // containerd's lines can be long
	for n := 1; sc.Scan(); n++ {
		if err := fn(sc.Text()); err != nil {
			l := sc.Text()
			if len(l) > 200 {
				l = l[:200] + "..."
			}
			return fmt.Errorf("%s:%d: %v (line %q)", path, n, err, l)
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("%s: %v", path, err)
	}
	return nil
}

// fields splits a record line at single spaces: jsonpath prints an unset
// field as nothing, so "1  1" has an empty second field, not two fields.
func fields(line string, n int) ([]string, float64, error) {
	f := strings.SplitN(line, " ", n)
	if len(f) < n {
		return nil, 0, fmt.Errorf("want %d fields, have %d", n, len(f))
	}
	t, err := strconv.ParseFloat(strings.Replace(f[0], ",", ".", 1), 64) // $EPOCHREALTIME follows the locale
	if err != nil {
		return nil, 0, fmt.Errorf("time %q is not epoch seconds", f[0])
	}
	return f, t, nil
}

func count(s string) (int, error) {
	if s == "" {
		return 0, nil // the API server omits zero counts
	}
	return strconv.Atoi(s)
}

var stampRE = regexp.MustCompile(`"annotator\.nri-handover\.io/handled-by": *"([^"]*)"`)

// stampOf gives the uid in the one distinct stamp ("VERSION/UID") of
// container id's record, "" without a record or with none or several.
func stampOf(dir, id string) string {
	b, err := os.ReadFile(filepath.Join(dir, "inspect", id+".json"))
	if err != nil {
		return ""
	}
	seen := map[string]bool{}
	for _, m := range stampRE.FindAllStringSubmatch(string(b), -1) {
		seen[m[1]] = true
	}
	for s := range seen {
		if _, uid, ok := strings.Cut(s, "/"); ok && len(seen) == 1 {
			return uid
		}
	}
	return ""
}

// readScenario reads DIR/SC.{pods,load,ds,marks}.
func readScenario(dir, sc string) (*scenario, error) {
	s := &scenario{name: sc, title: sc}
	p := func(ext string) string { return filepath.Join(dir, sc+"."+ext) }
	// Failed CreateContainer calls: the kubelet retries them, so a pod may
	// turn Ready anyway, later; what upstream NRI does during a surge.
	if b, err := os.ReadFile(p("create-errors")); err == nil {
		s.createErrs = strings.Count(string(b), "\n")
	}
	for _, r := range []struct {
		ext   string
		n     int // fields, the time included
		parse func(f []string, t float64) error
	}{
		{"pods", 6, func(f []string, t float64) error { // time name gen uid Ready del=...
			if !strings.HasPrefix(f[5], "del=") {
				return fmt.Errorf("sixth field %q is not del=...", f[5])
			}
			s.pods = append(s.pods, podEvent{t, f[1], f[2], f[3], f[4] == "True" && f[5] == "del=", f[5] != "del="})
			return nil
		}},
		{"load", 4, func(f []string, t float64) error { // time name ok|FAILED id [seconds]
			if f[2] != "ok" && f[2] != "FAILED" {
				return fmt.Errorf("third field %q is neither ok nor FAILED", f[2])
			}
			id, _, _ := strings.Cut(f[3], " ") // then seconds to Ready
			s.load = append(s.load, loadPod{t, f[1], f[2] == "ok", id, stampOf(dir, id)})
			return nil
		}},
		{"ds", 6, func(f []string, t float64) error { // time available unavailable ready updated desired
			a, err1 := count(f[1])
			d, err2 := count(f[5])
			if err1 != nil || err2 != nil {
				return fmt.Errorf("available %q or desired %q is not a count", f[1], f[5])
			}
			s.ds = append(s.ds, dsEvent{t, a, d})
			return nil
		}},
		{"marks", 2, func(f []string, t float64) error { // time what...
			kind := "mark"
			if strings.HasPrefix(f[1], "kill") {
				kind = "kill"
			}
			s.marks = append(s.marks, mark{t, f[1], kind})
			switch f[1] {
			case "start":
				s.t0 = t
			case "stop":
				s.t1 = t
			}
			return nil
		}},
	} {
		err := eachLine(p(r.ext), func(l string) error {
			f, t, err := fields(l, r.n)
			if err != nil {
				return err
			}
			return r.parse(f, t)
		})
		if err != nil {
			return nil, err
		}
	}
	if s.t0 == 0 {
		return nil, fmt.Errorf("%s: no start mark", p("marks"))
	}
	// To the last record: the load loop ends its current pod after the
	// stop mark, and a run cut short has no stop mark.
	for _, l := range s.load {
		s.t1 = max(s.t1, l.t)
	}
	s.t1 = max(s.t1, s.t0, s.marks[len(s.marks)-1].t)
	return s, nil
}

// describe matches adaptation's plugin.describe(): NAME [version V]
// [instance I] [generation G].
const describe = `(\S+)(?: version (\S+))?(?: instance (\S+))?(?: generation (\d+))?`

var (
	timeRE = regexp.MustCompile(`^time="([^"]+)"`)
	// (a successor without handover, the kill switch rolled out, is
	// named with what that means)
	takeoverRE = regexp.MustCompile(`^plugin ` + describe + ` superseded by ` + describe + `(?:, which does not use handover: .*)?$`)
	// After kill -9 of the active instance, or its successor's failed
	// switch, the one standing by is active again.
	reactivatedRE = regexp.MustCompile(`^plugin ` + describe + ` reactivated after ` + describe + ` (?:left|failed to join)$`)
	// Without a predecessor (it was killed) an instance is active once it
	// joined; the connection's pid names it ("registered" gives its identity),
	// and when the active one's connection closes none is active.
	registeredRE = regexp.MustCompile(`^plugin external:(\S+)\[(\d+)\] registered \(version "([^"]*)", instance "([^"]*)", generation (\d+)`)
	joinedRE     = regexp.MustCompile(`^plugin external:(\S+)\[(\d+)\] connected and synchronized$`)
	closedRE     = regexp.MustCompile(`^connection to plugin external:(\S+)\[(\d+)\] closed$`)
)

// readTakeovers reads containerd's log (logrus text: time="..." ... msg="..."
// with msg Go-quoted) for the lines that switch the instance a plugin's
// events go to ("superseded by", "reactivated after"), in time
// order.
func readTakeovers(path string) ([]takeover, error) {
	var tks []takeover
	byPid := map[string]takeover{} // connection pid -> identity
	active := map[string]string{}  // plugin -> active instance
	err := eachLine(path, func(l string) error {
		// (the disconnect notice that follows a switch repeats "superseded
		// by" in a msg of its own: only msg="plugin ..." lines count)
		conn := strings.Contains(l, `] registered (version`) || strings.Contains(l, `] connected and synchronized"`) ||
			strings.Contains(l, ` msg="connection to plugin external:`)
		if !conn && (!strings.Contains(l, ` msg="plugin `) || !strings.Contains(l, " superseded by ") && !strings.Contains(l, " reactivated after ")) {
			return nil
		}
		tm := timeRE.FindStringSubmatch(l)
		if tm == nil {
			return fmt.Errorf(`no time="..." at the start`)
		}
		t, err := time.Parse(time.RFC3339Nano, tm[1])
		if err != nil {
			return err
		}
		i := strings.Index(l, ` msg="`)
		if i < 0 {
			return fmt.Errorf(`no msg="..."`)
		}
		q, err := strconv.QuotedPrefix(l[i+5:])
		if err == nil {
			q, err = strconv.Unquote(q)
		}
		if err != nil {
			return fmt.Errorf("msg is not a quoted string: %v", err)
		}
		tk := takeover{t: float64(t.UnixNano()) / 1e9}
		if m := registeredRE.FindStringSubmatch(q); m != nil {
			byPid[m[2]] = takeover{plugin: m[1], version: m[3], instance: m[4], gen: m[5]}
			return nil
		} else if m := joinedRE.FindStringSubmatch(q); m != nil {
			j, ok := byPid[m[2]]
			if !ok || j.instance == active[j.plugin] {
				return nil // a takeover's own "connected" line, or one we cannot name
			}
			tk.plugin, tk.version, tk.instance, tk.gen, tk.from = j.plugin, j.version, j.instance, j.gen, active[j.plugin]
			tk.joined = true
		} else if m := closedRE.FindStringSubmatch(q); m != nil {
			j, ok := byPid[m[2]]
			if !ok || j.instance != active[j.plugin] {
				return nil
			}
			tk.plugin, tk.from, tk.fromVersion, tk.closed = j.plugin, j.instance, j.version, true
		} else if m := takeoverRE.FindStringSubmatch(q); m != nil {
			tk.plugin, tk.fromVersion, tk.from = m[1], m[2], m[3]
			tk.version, tk.instance, tk.gen = m[6], m[7], m[8]
		} else if m := reactivatedRE.FindStringSubmatch(q); m != nil {
			tk.plugin, tk.version, tk.instance, tk.gen, tk.fromVersion, tk.from, tk.reactivated = m[1], m[2], m[3], m[4], m[6], m[7], true
		} else {
			return fmt.Errorf("msg %q is neither `plugin DESCR superseded by DESCR` nor `plugin DESCR reactivated after DESCR left` (or `failed to join`)", q)
		}
		active[tk.plugin] = tk.instance
		tks = append(tks, tk)
		return nil
	})
	sort.SliceStable(tks, func(i, j int) bool { return tks[i].t < tks[j].t })
	return tks, err
}
