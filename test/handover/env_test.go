package handover_test

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/nri-handover/nri/api"
	"github.com/nri-handover/nri/pkg/adaptation"
	"github.com/nri-handover/nri/test/e2e/harness"
	"github.com/nri-handover/nri/test/plugins/record"
	testruntime "github.com/nri-handover/nri/test/runtime"
)

// env is one spec's world: a test runtime with a wire trace, a captured log
// and metrics, and the plugin processes the spec started.
type env struct {
	rt      *testruntime.Runtime
	trace   *wireTrace
	logs    *logCapture
	metrics *metricsCapture
	dir     string

	mu    sync.Mutex
	insts []*instance
}

// newEnv starts a test runtime with the given adaptation options, stopped
// at cleanup.
func newEnv(opts ...adaptation.Option) *env { return newEnvWith(nil, opts...) }

// newEnvWith is newEnv with test runtime options too (containerd locking).
func newEnvWith(rtOpts []testruntime.Option, opts ...adaptation.Option) *env {
	e := &env{trace: newWireTrace(), logs: &logCapture{}, metrics: &metricsCapture{}, dir: shortDir()}
	all := append([]adaptation.Option{e.trace.option(), adaptation.WithLogger(e.logs),
		adaptation.WithMetrics(e.metrics)}, opts...)
	rtOpts = append([]testruntime.Option{testruntime.WithDir(e.dir), testruntime.WithAdaptationOptions(all...)}, rtOpts...)
	rt, err := testruntime.New(rtOpts...)
	Expect(err).NotTo(HaveOccurred())
	Expect(rt.Start()).To(Succeed())
	DeferCleanup(rt.Stop)
	e.rt = rt
	return e
}

// instSpec describes one handover-plugin process.
type instSpec struct {
	Name, Idx        string // default "p", "10"
	Version          string
	Instance         string
	Generation       uint64
	DieAt, CrashAt   string
	FailAt, HangAt   string
	DieRecorded      bool
	Record           string // default: a file of its own
	Socket           string // default: the env's runtime
	UnsolicitedBytes int64
	// UID runs the process as that user and group (0: as the suite); see
	// shareWith for the files it needs.
	UID uint32
	// Env is added to the process's environment (KEY=value).
	Env []string
}

func (s instSpec) args() []string {
	a := []string{"-name=" + s.Name, "-idx=" + s.Idx, "-socket=" + s.Socket, "-record=" + s.Record}
	add := func(flag, v string) {
		if v != "" {
			a = append(a, "-"+flag+"="+v)
		}
	}
	add("version", s.Version)
	add("instance", s.Instance)
	if s.Generation != 0 {
		add("generation", strconv.FormatUint(s.Generation, 10))
	}
	add("die-at", s.DieAt)
	add("crash-at", s.CrashAt)
	add("fail-at", s.FailAt)
	add("hang-at", s.HangAt)
	if s.DieRecorded {
		a = append(a, "-die-recorded")
	}
	if s.UnsolicitedBytes != 0 {
		add("unsolicited-memory", strconv.FormatInt(s.UnsolicitedBytes, 10))
	}
	return a
}

// instance is a running (or finished) plugin process and its record.
type instance struct {
	spec      instSpec
	proc      *harness.Proc
	readyFile string
	// startedAfter is the runtime's last sequence number before the process
	// was started: no event up to it may reach this instance.
	startedAfter uint64
	// activeBy are the runtime's last sequence numbers taken right after the
	// suite saw this instance confirmed active: every later event belongs to
	// it or to a later instance.
	activeBy []uint64
}

// start runs a handover-plugin process on the env's runtime.
func (e *env) start(spec instSpec) *instance {
	if spec.Socket == "" {
		spec.Socket = e.rt.SocketPath()
	}
	e.mu.Lock()
	n := len(e.insts)
	e.mu.Unlock()
	in := startInstance(e.dir, n, spec, e.rt.LastSeq())
	e.mu.Lock()
	e.insts = append(e.insts, in)
	e.mu.Unlock()
	return in
}

// startInstance runs a handover-plugin process, reaped at cleanup; its
// record and ready file go to dir. lastSeq is the runtime's last sequence
// number before the start.
func startInstance(dir string, n int, spec instSpec, lastSeq uint64) *instance {
	if spec.Name == "" {
		spec.Name = "p"
	}
	if spec.Idx == "" {
		spec.Idx = "10"
	}
	label := fmt.Sprintf("%d-%s-%s-%s", n, spec.Idx, spec.Name, spec.Instance)
	if spec.Record == "" {
		spec.Record = filepath.Join(dir, label+".rec")
	}
	in := &instance{spec: spec, readyFile: filepath.Join(dir, label+".ready"), startedAfter: lastSeq}
	args := append(spec.args(), "-ready-file="+in.readyFile)
	var (
		proc *harness.Proc
		err  error
	)
	switch {
	case spec.UID != 0:
		proc, err = harness.StartProcAs("plugin "+label, bins.Plugin, args, GinkgoWriter, spec.UID, spec.UID)
	case len(spec.Env) > 0:
		proc, err = harness.StartProcEnv("plugin "+label, bins.Plugin, args, GinkgoWriter, spec.Env)
	default:
		proc, err = harness.StartProc("plugin "+label, bins.Plugin, args, GinkgoWriter)
	}
	ExpectWithOffset(2, err).NotTo(HaveOccurred())
	in.proc = proc
	DeferCleanup(reap, proc)
	return in
}

// startUpstream runs the upstream v0.12.5 plugin binary as an instance of
// plugin name (it reports neither version nor instance).
func (e *env) startUpstream(name, idx string) *instance {
	spec := instSpec{Name: name, Idx: idx, Record: filepath.Join(e.dir, "upstream-"+name+".rec")}
	in := &instance{spec: spec, startedAfter: e.rt.LastSeq()}
	proc, err := harness.StartProc("upstream plugin "+name, bins.UpstreamPlugin,
		[]string{"-socket", e.rt.SocketPath(), "-name", name, "-idx", idx, "-record", spec.Record}, GinkgoWriter)
	Expect(err).NotTo(HaveOccurred())
	in.proc = proc
	DeferCleanup(reap, proc)
	return in
}

// reap stops a process and waits for it, killing it if it does not stop.
func reap(p *harness.Proc) {
	_ = p.Signal(syscall.SIGTERM)
	select {
	case <-p.Done():
	case <-time.After(10 * time.Second):
		_ = p.Kill()
		<-p.Done()
	}
}

func (in *instance) String() string {
	if in.spec.Instance != "" {
		return in.spec.Instance
	}
	return in.spec.Idx + "-" + in.spec.Name
}

// lines returns this process's record entries. A record that does not
// parse fails the spec: read as empty, it would make every "got no such
// event" expectation and the exactly-once checker's input vacuous.
func (in *instance) lines() []record.Line {
	lines, err := record.Read(in.spec.Record)
	ExpectWithOffset(1, err).NotTo(HaveOccurred(), "the record of %s", in)
	pid := in.proc.Pid()
	return record.Filter(lines, func(l record.Line) bool { return l.Pid == pid })
}

// find returns the entries of kind ev whose Detail has every k=v pair given.
func (in *instance) find(ev string, pairs ...string) []record.Line {
	return findLines(in.lines(), ev, pairs...)
}

func findLines(lines []record.Line, ev string, pairs ...string) []record.Line {
	return record.Filter(lines, func(l record.Line) bool {
		if l.Ev != ev {
			return false
		}
		d := details(l.Detail)
		for _, p := range pairs {
			k, v, _ := strings.Cut(p, "=")
			if d[k] != v {
				return false
			}
		}
		return true
	})
}

// has is find for use with Eventually.
func (in *instance) has(ev string, pairs ...string) func() bool {
	return func() bool { return len(in.find(ev, pairs...)) > 0 }
}

func (in *instance) count(ev string, pairs ...string) int { return len(in.find(ev, pairs...)) }

// events returns the pod and container events this process handled.
func (in *instance) events() []record.Line {
	return record.Filter(in.lines(), func(l record.Line) bool { return isEvent(l.Ev) })
}

func (in *instance) seqs() []uint64 {
	var out []uint64
	for _, l := range in.events() {
		out = append(out, l.Seq)
	}
	return out
}

// records describes instances' records lazily, for failure messages
// (Gomega calls a func() string description only when it fails).
func records(what string, ins ...*instance) func() string {
	return func() string {
		var b strings.Builder
		b.WriteString(what)
		for _, in := range ins {
			fmt.Fprintf(&b, "\n  %s (exited %v): %v", in, in.exited(), in.kinds())
		}
		return b.String()
	}
}

// kinds lists the record's entry kinds in order, for failure messages.
func (in *instance) kinds() []string {
	var out []string
	for _, l := range in.lines() {
		if !isEvent(l.Ev) {
			out = append(out, l.Ev+"("+l.Detail+")")
		}
	}
	return out
}

func (in *instance) exited() bool { return in.proc.Exited() }

// died tells whether the process was killed by SIGKILL or crashed.
func (in *instance) died() bool {
	if !in.proc.Exited() {
		return false
	}
	var ee *exec.ExitError
	if !errors.As(in.proc.Err(), &ee) {
		return false
	}
	ws, ok := ee.Sys().(syscall.WaitStatus)
	if !ok {
		return false
	}
	return (ws.Signaled() && ws.Signal() == syscall.SIGKILL) || (ws.Exited() && ws.ExitStatus() == 3)
}

func (in *instance) kill() { _ = in.proc.Kill(); <-in.proc.Done() }

func (in *instance) signal(sig syscall.Signal) { _ = in.proc.Signal(sig) }

// isActive tells whether the instance's latest role is ACTIVE and it has
// not been told to shut down since.
func (in *instance) isActive() bool {
	state := ""
	for _, l := range in.lines() {
		switch l.Ev {
		case record.RoleChange:
			state = details(l.Detail)["role"]
		case record.Shutdown, Closed:
			state = "gone"
		}
	}
	return state == "ACTIVE"
}

// confirmActive waits until the instance has been told it is active n times
// in all and notes the runtime's sequence number right after.
func (e *env) confirmActive(in *instance, n int) {
	EventuallyWithOffset(1, func() int { return in.count(record.RoleChange, "role=ACTIVE") }).
		Should(BeNumerically(">=", n), records("never became active", in))
	in.activeBy = append(in.activeBy, e.rt.LastSeq())
}

// waitEvents waits until the runtime dispatched n more events.
func (e *env) waitEvents(n uint64) {
	from := e.rt.LastSeq()
	EventuallyWithOffset(1, e.rt.LastSeq).Should(BeNumerically(">=", from+n))
}

// instances lists the started instances in start order.
func (e *env) instances() []*instance {
	e.mu.Lock()
	defer e.mu.Unlock()
	return slices.Clone(e.insts)
}

// details parses a Detail field "k=v;k=v".
func details(s string) map[string]string {
	m := map[string]string{}
	for _, kv := range strings.Split(s, ";") {
		if k, v, ok := strings.Cut(kv, "="); ok {
			m[k] = v
		}
	}
	return m
}

// Record kinds of the handover plugin (see test/plugins/handover-plugin).
const (
	Exit   = "Exit"
	Ready  = "Ready"
	Closed = "Closed"
	Die    = "Die"
	Armed  = "Armed"
)

var eventNames = func() map[string]bool {
	m := map[string]bool{}
	for _, n := range api.EventPrettyNames {
		m[n] = true
	}
	return m
}()

// isEvent tells pod and container events from the other record entries.
func isEvent(ev string) bool { return eventNames[ev] }

// logCapture is the adaptation's logger: it keeps every line for specs that
// check what was logged, and echoes it to the spec's output.
type logCapture struct {
	mu    sync.Mutex
	lines []string
}

func (l *logCapture) add(level, f string, a ...any) {
	s := level + " " + fmt.Sprintf(f, a...)
	l.mu.Lock()
	l.lines = append(l.lines, s)
	l.mu.Unlock()
	fmt.Fprintln(GinkgoWriter, "nri:", s)
}

func (l *logCapture) Debugf(_ context.Context, f string, a ...any) {}
func (l *logCapture) Infof(_ context.Context, f string, a ...any)  { l.add("info", f, a...) }
func (l *logCapture) Warnf(_ context.Context, f string, a ...any)  { l.add("warn", f, a...) }
func (l *logCapture) Errorf(_ context.Context, f string, a ...any) { l.add("error", f, a...) }

// Lines returns what was logged so far.
func (l *logCapture) Lines() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.lines)
}

// metricsCapture keeps the handover measurements (adaptation.HandoverMetrics).
type metricsCapture struct {
	mu        sync.Mutex
	handovers []handoverMetric
	count     int
}

type handoverMetric struct {
	Plugin, Outcome string
}

func (m *metricsCapture) RecordPluginInvocation(string, string, error)      {}
func (m *metricsCapture) RecordPluginLatency(string, string, time.Duration) {}
func (m *metricsCapture) RecordPluginAdjustments(string, string, *adaptation.ContainerAdjustment, int, int) {
}
func (m *metricsCapture) UpdatePluginCount(n int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.count = n
}

// PluginCount is the adaptation's latest count of plugins receiving events.
func (m *metricsCapture) PluginCount() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.count
}

func (m *metricsCapture) RecordHandover(plugin, outcome string, _, _ time.Duration) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.handovers = append(m.handovers, handoverMetric{plugin, outcome})
}

// Outcomes lists the recorded handover outcomes of plugin.
func (m *metricsCapture) Outcomes(plugin string) []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []string
	for _, h := range m.handovers {
		if h.Plugin == plugin {
			out = append(out, h.Outcome)
		}
	}
	return out
}
