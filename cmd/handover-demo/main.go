// Command handover-demo shows a make-before-break plugin rollout on one node:
// an in-memory runtime keeps creating containers while instances of the
// example plugin (examples/annotator) are rolled out, rolled back and
// restarted, first without handover (as upstream NRI behaves today) and then
// with it. Every container records which instance handled its creation, so the
// result can be checked: exactly one instance per container, no gap.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/nri-handover/nri/pkg/adaptation"
	testruntime "github.com/nri-handover/nri/test/runtime"
)

const handledBy = "annotator.nri-handover.io/handled-by" // examples/annotator.HandledBy

func main() {
	if err := run(); err != nil {
		fmt.Fprintf(os.Stderr, "handover-demo: %v\n", err)
		os.Exit(1)
	}
}

func run() error {
	dir, err := os.MkdirTemp("/tmp", "nri-demo")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)

	say("building the example plugin (examples/annotator)")
	bin := filepath.Join(dir, "annotator")
	if out, err := exec.Command("go", "build", "-o", bin, "./examples/annotator").CombinedOutput(); err != nil {
		return fmt.Errorf("build plugin: %v\n%s", err, out)
	}

	say("")
	say("== 1. Without handover (upstream NRI today), maxSurge=1 ==")
	if err := scenario(dir, bin, false); err != nil {
		return err
	}
	say("")
	say("== 2. With handover ==")
	return scenario(dir, bin, true)
}

// scenario rolls the plugin out, restarts the superseded pod, and rolls back,
// while containers keep being created.
func scenario(dir, bin string, handover bool) error {
	m := &metrics{}
	sub := filepath.Join(dir, fmt.Sprintf("handover-%v", handover))
	if err := os.MkdirAll(sub, 0o700); err != nil {
		return err
	}
	rt, err := testruntime.New(testruntime.WithDir(sub), testruntime.WithName("demo-runtime", "v1"),
		testruntime.WithAdaptationOptions(adaptation.WithPluginHandover(handover), adaptation.WithMetrics(m),
			adaptation.WithLogger(quietLogger{})))
	if err != nil {
		return err
	}
	if err := rt.Start(); err != nil {
		return err
	}
	defer rt.Stop()

	pods := &fleet{bin: bin, socket: rt.SocketPath(), dir: sub}
	defer pods.killAll()

	say("  start pod A: annotator v1 (instance pod-a, generation 1)")
	a := pods.start("v1", "pod-a", 1)
	if !a.waitReady() {
		return errors.New("pod A never became ready")
	}
	w := startWorkload(rt, "A is ready: containers are being created")
	step := func(label string) { w.phase(label); say("  %s", label) }
	say("  A is ready: containers are being created")
	w.waitCreated(30)

	step("rollout: pod B starts next to A: annotator v2 (instance pod-b, generation 2)")
	b := pods.start("v2", "pod-b", 2)
	readyB := b.waitReady()
	say("    B ready: %v; A ready: %v", readyB, a.ready())
	w.waitCreated(30)

	if handover {
		step("the DaemonSet controller deletes A (SIGTERM) once B is ready")
		a.term()
		step("the superseded pod-a container restarts (kubelet) and registers again")
		a2 := pods.start("v1", "pod-a", 1)
		a2.waitExit()
		say("    pod-a restart: %s", a2.lastLine())
		w.waitCreated(30)

		step("rollback: pod C runs annotator v1 again (instance pod-c, generation 3)")
		c := pods.start("v1", "pod-c", 3)
		say("    C ready: %v", c.waitReady())
		w.waitCreated(30)
		step("the DaemonSet controller deletes B")
		b.term()
		w.waitCreated(30)
	} else {
		w.waitCreated(30)
	}
	w.stop()

	w.report(handover)
	if handover {
		m.report()
	}
	return nil
}

// workload creates pods with one container each until stopped.
type workload struct {
	rt *testruntime.Runtime

	mu      sync.Mutex
	label   string
	created []created
	failed  []string
	changed chan struct{}

	done, stopped chan struct{}
}

type created struct {
	phase, id, stamp string
}

func startWorkload(rt *testruntime.Runtime, label string) *workload {
	w := &workload{rt: rt, label: label, changed: make(chan struct{}, 1), done: make(chan struct{}), stopped: make(chan struct{})}
	go w.loop()
	return w
}

func (w *workload) loop() {
	defer close(w.stopped)
	ctx := context.Background()
	for i := 0; ; i++ {
		select {
		case <-w.done:
			return
		case <-time.After(5 * time.Millisecond):
		}
		pod := fmt.Sprintf("pod-%04d", i)
		ctr := fmt.Sprintf("ctr-%04d", i)
		if err := w.rt.RunPod(ctx, testruntime.NewPod(pod)); err != nil {
			continue
		}
		adj, err := w.rt.CreateContainer(ctx, testruntime.NewContainer(pod, ctr))
		w.mu.Lock()
		if err != nil {
			w.failed = append(w.failed, fmt.Sprintf("%s (%s): %v", ctr, w.label, err))
		} else {
			w.created = append(w.created, created{phase: w.label, id: ctr, stamp: adj.GetAnnotations()[handledBy]})
		}
		w.mu.Unlock()
		select {
		case w.changed <- struct{}{}:
		default:
		}
		// Keep the node small: retire the pod again.
		_ = w.rt.StopContainer(ctx, ctr)
		_ = w.rt.RemoveContainer(ctx, ctr)
		_ = w.rt.StopPod(ctx, pod)
		_ = w.rt.RemovePod(ctx, pod)
	}
}

func (w *workload) phase(label string) {
	w.mu.Lock()
	w.label = label
	w.mu.Unlock()
}

// waitCreated lets n more containers be created (or fail).
func (w *workload) waitCreated(n int) {
	w.mu.Lock()
	target := len(w.created) + len(w.failed) + n
	w.mu.Unlock()
	for {
		w.mu.Lock()
		have := len(w.created) + len(w.failed)
		w.mu.Unlock()
		if have >= target {
			return
		}
		<-w.changed
	}
}

func (w *workload) stop() {
	close(w.done)
	<-w.stopped
}

func (w *workload) report(handover bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	say("")
	say("  containers created: %d, creations failed: %d", len(w.created), len(w.failed))
	byStamp := map[string]int{}
	missing := 0
	for _, c := range w.created {
		if c.stamp == "" {
			missing++
			continue
		}
		byStamp[c.stamp]++
	}
	stamps := make([]string, 0, len(byStamp))
	for s := range byStamp {
		stamps = append(stamps, s)
	}
	sort.Strings(stamps)
	for _, s := range stamps {
		say("    handled by %-12s %4d", s, byStamp[s])
	}
	say("    handled by nobody     %4d", missing)
	for i, f := range w.failed {
		if i == 3 {
			say("    ... %d more failures", len(w.failed)-3)
			break
		}
		say("    FAILED %s", f)
	}
	if handover && len(w.failed) == 0 && missing == 0 {
		say("  => every container was handled by exactly one instance, and none was missed")
	}
	if !handover && len(w.failed) > 0 {
		say("  => with both instances receiving every event, their adjustments conflict and container creation fails")
	}
}

// metrics keeps the handover measurements of the adaptation.
type metrics struct {
	mu   sync.Mutex
	rows []string
}

func (*metrics) RecordPluginInvocation(string, string, error)                                      {}
func (*metrics) RecordPluginLatency(string, string, time.Duration)                                 {}
func (*metrics) RecordPluginAdjustments(string, string, *adaptation.ContainerAdjustment, int, int) {}
func (*metrics) UpdatePluginCount(int)                                                             {}

func (m *metrics) RecordHandover(plugin, outcome string, duration, wait time.Duration) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.rows = append(m.rows, fmt.Sprintf("    %-10s %-10s took %-10s runtime events waited %s",
		plugin, outcome, duration.Round(time.Microsecond), wait.Round(time.Microsecond)))
}

func (m *metrics) report() {
	m.mu.Lock()
	defer m.mu.Unlock()
	say("  handovers (from the adaptation's HandoverMetrics):")
	for _, r := range m.rows {
		say("%s", r)
	}
}

// fleet runs plugin processes as a DaemonSet would.
type fleet struct {
	bin, socket, dir string
	mu               sync.Mutex
	procs            []*proc
}

type proc struct {
	name, readyFile, log string
	cmd                  *exec.Cmd
	exited               chan struct{}
}

func (f *fleet) start(version, instance string, generation uint64) *proc {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := len(f.procs)
	p := &proc{
		name:      instance,
		readyFile: filepath.Join(f.dir, fmt.Sprintf("%s-%d.ready", instance, n)),
		log:       filepath.Join(f.dir, fmt.Sprintf("%s-%d.log", instance, n)),
		exited:    make(chan struct{}),
	}
	logf, err := os.Create(p.log)
	if err != nil {
		panic(err)
	}
	p.cmd = exec.Command(f.bin, "-socket", f.socket, "-version", version, "-instance", instance,
		"-generation", fmt.Sprint(generation), "-ready-file", p.readyFile)
	p.cmd.Stdout, p.cmd.Stderr = logf, logf
	if err := p.cmd.Start(); err != nil {
		panic(err)
	}
	go func() {
		_ = p.cmd.Wait()
		logf.Close()
		close(p.exited)
	}()
	f.procs = append(f.procs, p)
	return p
}

func (f *fleet) killAll() {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, p := range f.procs {
		_ = p.cmd.Process.Kill()
		<-p.exited
	}
}

func (p *proc) ready() bool {
	_, err := os.Stat(p.readyFile)
	return err == nil
}

// waitReady polls the ready file as a kubelet readiness probe would.
func (p *proc) waitReady() bool {
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if p.ready() {
			return true
		}
		select {
		case <-p.exited:
			return false
		case <-time.After(10 * time.Millisecond):
		}
	}
	return false
}

func (p *proc) term() {
	_ = p.cmd.Process.Signal(os.Interrupt)
	<-p.exited
}

func (p *proc) waitExit() {
	select {
	case <-p.exited:
	case <-time.After(10 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.exited
	}
}

// lastLine is the last log line of the process, shortened.
func (p *proc) lastLine() string {
	b, _ := os.ReadFile(p.log)
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	l := lines[len(lines)-1]
	if len(l) > 160 {
		l = l[:160] + "..."
	}
	return l
}

func say(format string, args ...any) { fmt.Printf(format+"\n", args...) }

// quietLogger keeps the adaptation's own logs out of the demo's narrative.
type quietLogger struct{}

func (quietLogger) Debugf(context.Context, string, ...any) {}
func (quietLogger) Infof(context.Context, string, ...any)  {}
func (quietLogger) Warnf(context.Context, string, ...any)  {}
func (quietLogger) Errorf(context.Context, string, ...any) {}
