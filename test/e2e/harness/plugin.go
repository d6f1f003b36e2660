package harness

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/nri-handover/nri/test/plugins/record"
)

// PluginSpec describes one nriplugin process; zero fields are left to the
// plugin's defaults. Steps are "register", "configure", "synchronize" or an
// event's pretty name ("CreateContainer").
type PluginSpec struct {
	Name, Idx  string
	Version    string
	Instance   string
	Generation uint64
	Events     string // ParseEventMask syntax; default all

	Socket string
	Record string // record file; required

	Annotate    map[string]string
	Env         map[string]string
	MemoryLimit int64

	HangAt        string
	HangCount     int
	DelayAt       string
	Delay         time.Duration
	FailAt        string
	OnlyContainer string
	// StopReadingAfter stops the plugin's reader once it handled this step
	// (its reply still goes out); SIGUSR2 resumes reading.
	StopReadingAfter string

	UnsolicitedOn     string // "synchronize", an event, or "signal" (send SIGUSR1)
	UnsolicitedMemory int64

	ReadyFile        string
	ExitOnSuperseded bool
	Handover         bool // opt into handover (stub.WithHandover)

	Validate         bool   // also act as a validator
	RejectAnnotation string // as a validator, reject adjustments setting it
	Reconnect        bool   // run again after the runtime goes away

	UpdateMemory  int64 // UpdateContainer answers with this memory limit
	FailRequest   bool  // failure policy fields
	KeepConnected bool

	Extra []string
}

// Args renders the spec as nriplugin flags.
func (s PluginSpec) Args() []string {
	var a []string
	add := func(flag, v string) {
		if v != "" {
			a = append(a, "-"+flag+"="+v)
		}
	}
	add("name", s.Name)
	add("idx", s.Idx)
	add("version", s.Version)
	add("instance", s.Instance)
	if s.Generation != 0 {
		add("generation", strconv.FormatUint(s.Generation, 10))
	}
	add("events", s.Events)
	add("socket", s.Socket)
	add("record", s.Record)
	for _, k := range sortedKeys(s.Annotate) {
		add("annotate", k+"="+s.Annotate[k])
	}
	for _, k := range sortedKeys(s.Env) {
		add("env", k+"="+s.Env[k])
	}
	if s.MemoryLimit != 0 {
		add("memory-limit", strconv.FormatInt(s.MemoryLimit, 10))
	}
	add("hang", s.HangAt)
	if s.HangCount != 0 {
		add("hang-count", strconv.Itoa(s.HangCount))
	}
	add("delay-at", s.DelayAt)
	if s.Delay != 0 {
		add("delay", s.Delay.String())
	}
	add("fail", s.FailAt)
	add("only-container", s.OnlyContainer)
	add("stop-reading-after", s.StopReadingAfter)
	add("unsolicited-on", s.UnsolicitedOn)
	if s.UnsolicitedMemory != 0 {
		add("unsolicited-memory", strconv.FormatInt(s.UnsolicitedMemory, 10))
	}
	add("ready-file", s.ReadyFile)
	for _, b := range []struct {
		flag string
		on   bool
	}{
		{"exit-on-superseded", s.ExitOnSuperseded}, {"handover", s.Handover}, {"validate", s.Validate}, {"reconnect", s.Reconnect},
		{"fail-request", s.FailRequest}, {"keep-connected", s.KeepConnected},
	} {
		if b.on {
			a = append(a, "-"+b.flag)
		}
	}
	add("reject-annotation", s.RejectAnnotation)
	if s.UpdateMemory != 0 {
		add("update-memory", strconv.FormatInt(s.UpdateMemory, 10))
	}
	return append(a, s.Extra...)
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// Plugin is a running nriplugin process with its record.
type Plugin struct {
	*Proc
	Spec PluginSpec
}

// StartPlugin runs the test plugin binary with spec.
func (b *Binaries) StartPlugin(spec PluginSpec, out io.Writer) (*Plugin, error) {
	if spec.Record == "" {
		return nil, fmt.Errorf("plugin %s: no record file", spec.Name)
	}
	p, err := StartProc("plugin "+spec.Idx+"-"+spec.Name, b.Plugin, spec.Args(), out)
	if err != nil {
		return nil, err
	}
	return &Plugin{Proc: p, Spec: spec}, nil
}

// Lines returns this plugin process's record entries (by pid: several
// processes may share one record file). A record that does not parse
// panics, failing the spec (also from inside Eventually): read as empty, it
// would make every "the plugin got no such event" expectation pass.
func (p *Plugin) Lines() []record.Line {
	lines, err := record.Read(p.Spec.Record)
	if err != nil {
		panic(fmt.Sprintf("plugin %s-%s: %v", p.Spec.Idx, p.Spec.Name, err))
	}
	return record.Filter(lines, func(l record.Line) bool { return l.Pid == p.Pid() })
}

// Count returns how many entries of kind ev this process recorded.
func (p *Plugin) Count(ev string) int {
	n := 0
	for _, l := range p.Lines() {
		if l.Ev == ev {
			n++
		}
	}
	return n
}

// Synchronized reports whether the plugin has handled Synchronize. Against a
// runtime without handover (upstream's), which synchronizes under the sync
// lock, an operation holding BlockPluginSync that starts after this is true
// is relayed to the plugin. Against ours the first synchronization runs
// outside the lock: wait for Active instead.
func (p *Plugin) Synchronized() bool { return p.Count(record.Synchronize) > 0 }

// StoppedReading reports whether the plugin's reader has stopped as told
// (StopReadingAfter).
func (p *Plugin) StoppedReading() bool { return p.hung("stop-reading:") }

// Unread reports whether, after its reader stopped, the runtime has sent the
// plugin a large message (64 KiB and more wait unread in its socket): a
// write larger than the socket buffers is then blocked in the runtime.
func (p *Plugin) Unread() bool { return p.hung("unread:") }

func (p *Plugin) hung(prefix string) bool {
	for _, l := range p.Lines() {
		if l.Ev == record.Hang && strings.HasPrefix(l.Detail, prefix) {
			return true
		}
	}
	return false
}

// Activations counts the times the runtime told this process it is the
// active instance of its plugin (RoleChange ACTIVE).
func (p *Plugin) Activations() int {
	n := 0
	for _, l := range p.Lines() {
		if l.Ev == record.RoleChange && strings.HasSuffix(l.Detail, "ACTIVE") {
			n++
		}
	}
	return n
}

// Active reports whether the runtime has made this process the active
// instance. Our adaptation says so only after committing the plugin, so any
// runtime operation started after this is true is relayed to it.
func (p *Plugin) Active() bool { return p.Activations() > 0 }

// Events returns the pretty names of the events this process handled, with
// their container (or pod) ids, in order: "CreateContainer:c1".
func (p *Plugin) Events() []string {
	var out []string
	for _, l := range p.Lines() {
		if !record.IsEvent(l.Ev) {
			continue
		}
		target := l.Ctr
		if target == "" {
			target = l.Pod
		}
		out = append(out, l.Ev+":"+target)
	}
	return out
}

// PreinstalledPlugin writes an executable NN-name wrapper into dir that
// runs the test plugin with spec's flags (the adaptation launches
// pre-installed plugins without arguments), and the plugin's drop-in config
// into confDir when config is not empty.
func (b *Binaries) PreinstalledPlugin(dir, confDir string, spec PluginSpec, config string) (string, error) {
	flags := spec
	flags.Name, flags.Idx, flags.Socket = "", "", "" // identity and connection come from the environment
	return Preinstall(dir, confDir, spec.Idx+"-"+spec.Name, b.Plugin, flags.Args(), config)
}

// Preinstall writes dir/file, a shell wrapper that execs bin with args (so
// the launched process is bin itself, with the adaptation's environment and
// descriptors), and confDir/file.conf when config is not empty.
func Preinstall(dir, confDir, file, bin string, args []string, config string) (string, error) {
	quoted := []string{shellQuote(bin)}
	for _, a := range args {
		quoted = append(quoted, shellQuote(a))
	}
	script := "#!/bin/sh\nexec " + strings.Join(quoted, " ") + "\n"
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	path := filepath.Join(dir, file)
	if err := os.WriteFile(path, []byte(script), 0o755); err != nil {
		return "", err
	}
	if config != "" {
		if err := os.MkdirAll(confDir, 0o755); err != nil {
			return "", err
		}
		if err := os.WriteFile(filepath.Join(confDir, file+".conf"), []byte(config), 0o644); err != nil {
			return "", err
		}
	}
	return path, nil
}

func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
