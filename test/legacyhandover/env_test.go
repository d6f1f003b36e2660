// Package legacyhandover tests handover for plugins written for upstream,
// opted in by their pod's annotation (pkg/adaptation: groupKey, admission's newer row):
// plugins on upstream's stub (test/upstream/plugin) at v0.12.5, v0.10.0 and
// v0.8.0, every case once per release, each plugin a process of its own
// placed in a cgroup of its own, which the runtime (our adaptation in
// test/runtime) lists as the container of a pod with the labels and
// annotations a DaemonSet's pod has. The runtime reads each peer's cgroup
// from the kernel, as on a node: nothing of the placement is faked but the
// pods' records. Needs root and a writable cgroupfs; skips without.
package legacyhandover

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/nri-handover/nri/api"
	"github.com/nri-handover/nri/pkg/adaptation"
	"github.com/nri-handover/nri/test/e2e/harness"
	"github.com/nri-handover/nri/test/plugins/record"
	testruntime "github.com/nri-handover/nri/test/runtime"
)

var sigUSR1 = syscall.SIGUSR1

// stubs are test/upstream/plugin built on upstream's stub at each release
// the cases run with: v0.12.5 (go.mod's pin) from this module, the older
// ones in modules of their own (harness.BuildSkewPlugins). v0.10.0 is CRI-O
// v1.34's, v0.8.0 containerd v1.7's, v2.0's and v2.1's: the plugins people
// run today were built on them.
var stubs []harness.SkewPeer

// olderStubs are the older releases the cases run with.
var olderStubs = []string{"v0.10.0", "v0.8.0"}

func TestMain(m *testing.M) {
	code, err := buildAndRun(m)
	if err != nil {
		fmt.Fprintln(os.Stderr, "build the upstream plugins:", err)
		os.Exit(1)
	}
	os.Exit(code)
}

func buildAndRun(m *testing.M) (int, error) {
	dir, err := os.MkdirTemp("", "legacyho")
	if err != nil {
		return 0, err
	}
	defer os.RemoveAll(dir)
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return 0, fmt.Errorf("go env GOMOD: %w", err)
	}
	current := filepath.Join(dir, "upstream-plugin")
	cmd := exec.Command("go", "build", "-o", current, "./test/upstream/plugin")
	cmd.Dir = filepath.Dir(strings.TrimSpace(string(out)))
	if b, err := cmd.CombinedOutput(); err != nil {
		return 0, fmt.Errorf("%w: %s", err, b)
	}
	older, err := harness.BuildSkewPlugins(context.Background(), dir, olderStubs)
	if err != nil {
		return 0, err
	}
	stubs = append([]harness.SkewPeer{{Version: "v0.12.5", Plugin: current}}, older...)
	return m.Run(), nil
}

// eachStub runs f once for each upstream stub release, as subtests named
// after it, in parallel: each has a runtime, pods and cgroups of its own.
func eachStub(t *testing.T, f func(t *testing.T, stub harness.SkewPeer)) {
	for _, s := range stubs {
		t.Run(s.Version, func(t *testing.T) {
			t.Parallel()
			f(t, s)
		})
	}
}

const (
	wait = 20 * time.Second
	tick = 20 * time.Millisecond
)

// eventually fails t unless cond holds within wait.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.NewTimer(wait)
	defer deadline.Stop()
	poll := time.NewTicker(tick)
	defer poll.Stop()
	for !cond() {
		select {
		case <-deadline.C:
			t.Fatalf("timed out waiting until %s", what)
		case <-poll.C:
		}
	}
}

// cgroups creates cgroups below the test process's own, in the hierarchy
// whose path the runtime reads for a peer (the unified one if the process
// is in a non-root cgroup there, else the first v1 hierarchy that places it
// below its root, as pkg/adaptation's parseProcCgroup).
type cgroups struct {
	fsDir   string // the directory in the cgroup filesystem
	rtPath  string // the same cgroup as the runtime reads it
	created []string
}

var cgSeq atomic.Int64

func newCgroups(t *testing.T) *cgroups {
	t.Helper()
	data, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		t.Skipf("no /proc/self/cgroup: %v", err)
	}
	var ctrls, cgPath string
	unified := ""
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		parts := strings.SplitN(line, ":", 3)
		if len(parts) != 3 {
			continue
		}
		switch {
		case parts[0] == "0" && parts[1] == "":
			unified = parts[2]
		case cgPath == "" && parts[2] != "/":
			ctrls, cgPath = parts[1], parts[2]
		}
	}
	if unified != "" && (unified != "/" || cgPath == "") {
		ctrls, cgPath = "", unified
	}
	mnt, root, ok := cgroupMount(ctrls)
	if !ok {
		t.Skipf("no mount of the cgroup hierarchy %q", ctrls)
	}
	rel, ok := strings.CutPrefix(cgPath, root)
	if root == "/" {
		rel, ok = cgPath, true
	}
	if !ok {
		t.Skipf("cgroup %s is not below its mount's root %s", cgPath, root)
	}
	name := fmt.Sprintf("legacyho-%d-%d", os.Getpid(), cgSeq.Add(1))
	c := &cgroups{fsDir: filepath.Join(mnt, rel, name), rtPath: path.Join(cgPath, name)}
	if err := os.Mkdir(c.fsDir, 0o755); err != nil {
		t.Skipf("cannot create a cgroup (needs root and a writable cgroupfs): %v", err)
	}
	c.created = append(c.created, c.fsDir)
	t.Cleanup(func() {
		for i := len(c.created) - 1; i >= 0; i-- {
			if err := os.Remove(c.created[i]); err != nil {
				t.Logf("remove cgroup: %v", err)
			}
		}
	})
	return c
}

// cgroupMount finds where the hierarchy of controllers ("" for the unified
// one) is mounted, and the cgroup that mount shows as its root.
func cgroupMount(ctrls string) (mnt, root string, ok bool) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return "", "", false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		pre, post, found := strings.Cut(sc.Text(), " - ")
		if !found {
			continue
		}
		fields, tail := strings.Fields(pre), strings.Fields(post)
		if len(fields) < 5 || len(tail) < 3 {
			continue
		}
		switch {
		case ctrls == "" && tail[0] == "cgroup2":
			return fields[4], fields[3], true
		case ctrls != "" && tail[0] == "cgroup":
			opts := strings.Split(tail[2], ",")
			all := true
			for _, c := range strings.Split(ctrls, ",") {
				found := false
				for _, o := range opts {
					found = found || o == c
				}
				all = all && found
			}
			if all {
				return fields[4], fields[3], true
			}
		}
	}
	return "", "", false
}

// mkdir creates a cgroup below c (parents first) and returns it as the
// runtime reads it and its cgroup.procs file.
func (c *cgroups) mkdir(t *testing.T, rel string) (rtPath, procs string) {
	t.Helper()
	dir := c.fsDir
	for _, part := range strings.Split(rel, "/") {
		dir = filepath.Join(dir, part)
		if err := os.Mkdir(dir, 0o755); err != nil && !os.IsExist(err) {
			t.Fatalf("create cgroup: %v", err)
		} else if err == nil {
			c.created = append(c.created, dir)
		}
	}
	return path.Join(c.rtPath, rel), filepath.Join(dir, "cgroup.procs")
}

// env is a runtime on our adaptation (handover and the workload rule on, as
// by default), the cgroups its plugin pods get and the plugin binary (one
// upstream stub release) its plugins run.
type env struct {
	t   *testing.T
	bin string
	rt  *testruntime.Runtime
	cg  *cgroups
	ctx context.Context
	dir string
	n   int
}

func newEnv(t *testing.T, stub harness.SkewPeer) *env {
	t.Helper()
	cg := newCgroups(t)
	rt, err := testruntime.New(testruntime.WithAdaptationOptions(adaptation.WithStandbyGrace(0)))
	if err != nil {
		t.Fatal(err)
	}
	if err := rt.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(rt.Stop)
	e := &env{t: t, bin: stub.Plugin, rt: rt, cg: cg, ctx: context.Background(), dir: t.TempDir()}
	// A workload pod whose containers the tests create.
	if err := rt.RunPod(e.ctx, testruntime.NewPod("work")); err != nil {
		t.Fatal(err)
	}
	return e
}

// podSpec is a plugin pod: its namespace, app label, pod-template-generation
// and whether it carries the handover annotation.
type podSpec struct {
	name, ns, app string
	gen           int
	annotated     bool
}

// ds is a pod of the DaemonSet "lho" in kube-system at generation gen.
func ds(name string, gen int, annotated bool) podSpec {
	return podSpec{name: name, ns: "kube-system", app: "lho", gen: gen, annotated: annotated}
}

// pod is a running plugin pod: its container's cgroup.procs.
type pod struct {
	spec  podSpec
	procs string
}

// runPod runs the pod and creates and starts its plugin container, as the
// kubelet does before the plugin's process runs: the runtime lists the
// container with its cgroup from then on.
func (e *env) runPod(s podSpec) *pod {
	t := e.t
	t.Helper()
	podPath, _ := e.cg.mkdir(t, s.name)
	ctrPath, procs := e.cg.mkdir(t, s.name+"/plugin")
	labels := map[string]string{"app": s.app, "pod-template-generation": strconv.Itoa(s.gen),
		"controller-revision-hash": "rev" + strconv.Itoa(s.gen)}
	annotations := map[string]string{}
	if s.annotated {
		annotations[adaptation.HandoverAnnotation] = adaptation.HandoverWorkload
	}
	p := &api.PodSandbox{Id: "sb-" + s.name, Name: s.name, Uid: "uid-" + s.name, Namespace: s.ns,
		Labels: labels, Annotations: annotations, Linux: &api.LinuxPodSandbox{CgroupParent: podPath}}
	if err := e.rt.RunPod(e.ctx, p); err != nil {
		t.Fatal(err)
	}
	c := testruntime.NewContainer(p.Id, "ctr-"+s.name)
	c.Linux.CgroupsPath = ctrPath
	if _, err := e.rt.CreateContainer(e.ctx, c); err != nil {
		t.Fatal(err)
	}
	if err := e.rt.StartContainer(e.ctx, c.Id); err != nil {
		t.Fatal(err)
	}
	return &pod{spec: s, procs: procs}
}

// plug is a plugin process on upstream's stub.
type plug struct {
	name string
	cmd  *exec.Cmd
	rec  string
	done chan struct{}
}

// start runs the upstream plugin, named 10-lho, in pod's container cgroup
// (it moves itself there before exec, so the process that connects is in
// it from its start).
func (e *env) start(p *pod, extra ...string) *plug {
	t := e.t
	t.Helper()
	e.n++
	name := fmt.Sprintf("%s#%d", p.spec.name, e.n)
	rec := filepath.Join(e.dir, fmt.Sprintf("rec-%d", e.n))
	args := append([]string{"-c", `echo $$ > "$0" && exec "$@"`, p.procs, e.bin,
		"-socket", e.rt.SocketPath(), "-name", "lho", "-idx", "10", "-record", rec}, extra...)
	cmd := exec.Command("/bin/sh", args...)
	out, err := os.Create(rec + ".log")
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pl := &plug{name: name, cmd: cmd, rec: rec, done: make(chan struct{})}
	go func() {
		_ = cmd.Wait()
		out.Close()
		close(pl.done)
	}()
	t.Cleanup(func() { pl.kill() })
	return pl
}

func (p *plug) kill() {
	_ = p.cmd.Process.Kill()
	<-p.done
}

func (p *plug) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

func (p *plug) lines() []record.Line {
	lines, err := record.Read(p.rec)
	if err != nil && !os.IsNotExist(err) {
		panic(fmt.Sprintf("plugin %s: %v", p.name, err))
	}
	return lines
}

// syncs are the Synchronize rounds p handled, in order.
func (p *plug) syncs() []record.Line {
	var out []record.Line
	for _, l := range p.lines() {
		if l.Ev == record.Synchronize {
			out = append(out, l)
		}
	}
	return out
}

func (p *plug) count(ev string) int {
	n := 0
	for _, l := range p.lines() {
		if l.Ev == ev {
			n++
		}
	}
	return n
}

// idleBehind waits until p registered and the runtime refuses its updates
// as an older instance's, naming newer's pod.
func (p *plug) idleBehind(t *testing.T, newer *pod) {
	t.Helper()
	var last string
	eventually(t, p.name+" is refused as the older instance", func() bool {
		last = p.unsolicited(t)
		return strings.Contains(last, "superseded by") && strings.Contains(last, newer.spec.ns+"/"+newer.spec.name)
	})
	t.Logf("%s: %s", p.name, last)
}

// created tells whether the plugin handled the creation of container id.
func (p *plug) created(id string) bool {
	for _, l := range p.lines() {
		if l.Ev == "CreateContainer" && l.Ctr == id {
			return true
		}
	}
	return false
}

// unsolicited sends an empty UpdateContainers from the plugin and returns
// the runtime's answer ("ok" or the error). The signal is sent only once
// the plugin's main has created its record file: before that the process
// may be the shell before its exec, or the plugin before the Go runtime
// installed its signal handlers, and either dies of SIGUSR1. It is sent
// again until the plugin answers: the Go runtime drops a SIGUSR1 that
// arrives before main's signal.Notify.
func (p *plug) unsolicited(t *testing.T) string {
	t.Helper()
	before := p.count(record.Unsolicited)
	deadline := time.Now().Add(wait)
	for p.count(record.Unsolicited) == before {
		if time.Now().After(deadline) || p.exited() {
			out, _ := os.ReadFile(p.rec + ".log")
			t.Fatalf("%s did not answer SIGUSR1 (exited: %v; %v); its output:\n%s", p.name, p.exited(), p.cmd.ProcessState, out)
		}
		if _, err := os.Stat(p.rec); err == nil {
			if err := p.cmd.Process.Signal(sigUSR1); err != nil {
				t.Fatal(err)
			}
		}
		poll := time.NewTicker(tick)
		for i := 0; i < 25 && p.count(record.Unsolicited) == before; i++ {
			<-poll.C
		}
		poll.Stop()
	}
	var last string
	for _, l := range p.lines() {
		if l.Ev == record.Unsolicited {
			last = l.Detail
		}
	}
	return last
}

// create creates a container in the workload pod and returns its id.
func (e *env) create() string {
	e.t.Helper()
	e.n++
	id := fmt.Sprintf("c%d", e.n)
	if _, err := e.rt.CreateContainer(e.ctx, testruntime.NewContainer("work", id)); err != nil {
		e.t.Fatal(err)
	}
	return id
}

// handledBy creates a container and fails t unless exactly the plugins in
// want handle it (each once) and none of the others.
func (e *env) handledBy(want []*plug, others ...*plug) string {
	t := e.t
	t.Helper()
	id := e.create()
	for _, p := range want {
		if !p.created(id) {
			t.Errorf("creation of %s did not reach %s", id, p.name)
		}
	}
	for _, p := range others {
		if p.created(id) {
			t.Errorf("creation of %s reached %s, which must receive no events", id, p.name)
		}
	}
	return id
}

// synchronized waits until p handled its n-th Synchronize, and then for
// the switch that follows it: a creation started after the record waits
// for the gate, which the join holds across its switch, so it is not
// started before either.
func (p *plug) synchronized(t *testing.T, n int) {
	t.Helper()
	eventually(t, fmt.Sprintf("%s handled Synchronize %d", p.name, n), func() bool { return p.count(record.Synchronize) >= n })
}
