// Package record is the event record shared by the test plugin processes
// (which write it) and the suites (which read it): one JSON object per line,
// appended with one write(2) each so several processes can share a file and
// its order is the order in which their handlers ran.
package record

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"sync"
)

// SeqAnnotation carries the test runtime's dispatch sequence number in the
// annotations of the pod and container sent with every event.
const SeqAnnotation = "nri-test.io/seq"

// SeqOf returns the sequence number stamped into annotations, or 0.
func SeqOf(annotations map[string]string) uint64 {
	n, err := strconv.ParseUint(annotations[SeqAnnotation], 10, 64)
	if err != nil {
		return 0
	}
	return n
}

// Entry kinds besides the event pretty names ("CreateContainer", ...).
const (
	Configure   = "Configure"
	Synchronize = "Synchronize"
	Shutdown    = "Shutdown"
	RoleChange  = "RoleChange"
	Connected   = "Connected"   // raw connection made (hang at register)
	Unsolicited = "Unsolicited" // UpdateContainers sent; Detail has the result
	Exit        = "Exit"        // Run returned; Err has why
	Hang        = "Hang"        // the plugin started hanging as told; Detail has the step
)

// meta are the entry kinds that are not pod or container events.
var meta = map[string]bool{
	Configure: true, Synchronize: true, Shutdown: true, RoleChange: true,
	Connected: true, Unsolicited: true, Exit: true, Hang: true,
}

// IsEvent reports whether an entry kind is a pod or container event.
func IsEvent(ev string) bool { return !meta[ev] }

// Line is one record entry.
type Line struct {
	Ev       string `json:"ev"`
	Pod      string `json:"pod,omitempty"`
	Ctr      string `json:"ctr,omitempty"`
	Seq      uint64 `json:"seq,omitempty"`
	Name     string `json:"name"`
	Idx      string `json:"idx"`
	Instance string `json:"inst,omitempty"`
	Version  string `json:"ver,omitempty"`
	Gen      uint64 `json:"gen,omitempty"`
	Pid      int    `json:"pid"`
	Pods     int    `json:"pods,omitempty"`
	Ctrs     int    `json:"ctrs,omitempty"`
	Config   string `json:"config,omitempty"`
	Runtime  string `json:"runtime,omitempty"`
	Detail   string `json:"detail,omitempty"`
	Err      string `json:"err,omitempty"`
}

// Recorder appends lines carrying a fixed identity.
type Recorder struct {
	mu   sync.Mutex
	f    *os.File
	base Line
}

// Open appends to path ("" or "-" is stdout); base's identity fields are
// copied into every line.
func Open(path string, base Line) (*Recorder, error) {
	r := &Recorder{base: base}
	if path == "" || path == "-" {
		r.f = os.Stdout
		return r, nil
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("open record %s: %w", path, err)
	}
	r.f = f
	return r, nil
}

// SetIdentity fills in name and index learnt late (e.g. from the environment).
func (r *Recorder) SetIdentity(name, idx string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if name != "" {
		r.base.Name = name
	}
	if idx != "" {
		r.base.Idx = idx
	}
}

// Add appends one line: l's event fields with the recorder's identity.
func (r *Recorder) Add(l Line) {
	r.mu.Lock()
	defer r.mu.Unlock()
	b := r.base
	b.Ev, b.Pod, b.Ctr, b.Seq = l.Ev, l.Pod, l.Ctr, l.Seq
	b.Pods, b.Ctrs, b.Config, b.Runtime, b.Detail, b.Err = l.Pods, l.Ctrs, l.Config, l.Runtime, l.Detail, l.Err
	buf, _ := json.Marshal(b)
	_, _ = r.f.Write(append(buf, '\n'))
}

// Read parses a record file; a missing file is an empty record. A torn last
// line (a writer in the middle of its write) is ignored.
func Read(path string) ([]Line, error) {
	buf, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return Parse(buf)
}

// Parse parses record lines.
func Parse(buf []byte) ([]Line, error) {
	var out []Line
	sc := bufio.NewScanner(bytes.NewReader(buf))
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		var l Line
		if len(bytes.TrimSpace(sc.Bytes())) == 0 {
			continue
		}
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			if !bytes.HasSuffix(buf, []byte("\n")) {
				break
			}
			return out, fmt.Errorf("bad record line %q: %w", sc.Text(), err)
		}
		out = append(out, l)
	}
	return out, sc.Err()
}

// Filter returns the lines matching keep.
func Filter(lines []Line, keep func(Line) bool) []Line {
	var out []Line
	for _, l := range lines {
		if keep(l) {
			out = append(out, l)
		}
	}
	return out
}
