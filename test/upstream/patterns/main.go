// Command patterns measures, on upstream containerd/nri v0.12.5 alone, what
// the zero-downtime patterns discussed in containerd/nri#167 do and cannot
// do: a plugin that pins CPUs, rolled out by surge without any pattern, with
// the rubber-stamp pattern (the new version at a lower index stamps the
// containers it handles; every instance skips containers stamped by a newer
// version), and restarted break-before-make with a catch-up in Synchronize.
//
// Runtime and plugins are upstream's adaptation and stub in one process, over
// a real unix socket; nothing of this module is linked (make check-deps).
// It prints one table row per measurement; docs/zero-downtime-on-upstream.md
// cites them. Every wait is bounded.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	nri "github.com/containerd/nri/pkg/adaptation"
	"github.com/containerd/nri/pkg/api"
	"github.com/containerd/nri/pkg/stub"
)

const (
	stampKey = "cpu.example.com/stamp" // the rubber stamp: the version that handled the container
	envKey   = "CPU_PLUGIN_CPUS"       // a creation-only adjustment: no update can add it later
	bound    = 10 * time.Second
)

// record counts, per event and container, which instances received it and
// which acted on it (adjusted, updated or released its CPUs).
type record struct {
	mu       sync.Mutex
	received map[string]map[string]bool // "Event ctr" -> instance
	acted    map[string]map[string]bool
}

func (r *record) note(m map[string]map[string]bool, ev, id, who string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	k := ev + " " + id
	if m[k] == nil {
		m[k] = map[string]bool{}
	}
	m[k][who] = true
}

// count returns how many of the event's keys had n instances in m.
func (r *record) count(m map[string]map[string]bool, ev string, ids []string, n int) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	c := 0
	for _, id := range ids {
		if len(m[ev+" "+id]) == n {
			c++
		}
	}
	return c
}

// cpuPlugin pins each container it handles to its CPUs. With stamps it
// follows the rubber-stamp pattern; adopt says whether it also takes over
// containers stamped by an older version (someone must, once the old one is
// gone).
type cpuPlugin struct {
	who     string // "v1", "v2"
	version int
	cpus    string
	stamps  bool
	adopt   bool
	rec     *record
	synced  chan []*api.Container
	stub    stub.Stub
	catchUp bool // reconcile in Synchronize: pin what it finds unpinned
}

func (p *cpuPlugin) mine(ctr *api.Container) bool {
	if !p.stamps {
		return true
	}
	v, ok := ctr.GetAnnotations()[stampKey]
	if !ok {
		return true
	}
	var n int
	_, _ = fmt.Sscanf(v, "v%d", &n)
	switch {
	case n == p.version:
		return true
	case n < p.version:
		return p.adopt
	}
	return false
}

func (p *cpuPlugin) Synchronize(_ context.Context, _ []*api.PodSandbox, ctrs []*api.Container) ([]*api.ContainerUpdate, error) {
	var updates []*api.ContainerUpdate
	if p.catchUp {
		for _, c := range ctrs {
			if _, pinned := c.GetAnnotations()[stampKey]; !pinned {
				u := &api.ContainerUpdate{ContainerId: c.Id}
				u.SetLinuxCPUSetCPUs(p.cpus)
				updates = append(updates, u)
			}
		}
	}
	p.synced <- ctrs
	return updates, nil
}

func (p *cpuPlugin) CreateContainer(_ context.Context, _ *api.PodSandbox, ctr *api.Container) (*api.ContainerAdjustment, []*api.ContainerUpdate, error) {
	p.rec.note(p.rec.received, "CreateContainer", ctr.Id, p.who)
	if !p.mine(ctr) {
		return nil, nil, nil
	}
	p.rec.note(p.rec.acted, "CreateContainer", ctr.Id, p.who)
	a := &api.ContainerAdjustment{}
	if p.stamps {
		a.AddAnnotation(stampKey, p.who)
	}
	a.AddEnv(envKey, p.cpus)
	a.SetLinuxCPUSetCPUs(p.cpus)
	return a, nil, nil
}

func (p *cpuPlugin) UpdateContainer(_ context.Context, _ *api.PodSandbox, ctr *api.Container, _ *api.LinuxResources) ([]*api.ContainerUpdate, error) {
	p.rec.note(p.rec.received, "UpdateContainer", ctr.Id, p.who)
	if !p.mine(ctr) {
		return nil, nil
	}
	p.rec.note(p.rec.acted, "UpdateContainer", ctr.Id, p.who)
	u := &api.ContainerUpdate{ContainerId: ctr.Id}
	u.SetLinuxCPUSetCPUs(p.cpus) // keep the pinning whatever the update asks
	return []*api.ContainerUpdate{u}, nil
}

func (p *cpuPlugin) RemoveContainer(_ context.Context, _ *api.PodSandbox, ctr *api.Container) error {
	p.rec.note(p.rec.received, "RemoveContainer", ctr.Id, p.who)
	if p.mine(ctr) {
		p.rec.note(p.rec.acted, "RemoveContainer", ctr.Id, p.who) // releases the container's CPUs
	}
	return nil
}

// runtime is a minimal in-memory runtime on upstream's adaptation that holds
// BlockPluginSync across each operation, as containerd does.
type runtime struct {
	mu       sync.Mutex
	nri      *nri.Adaptation
	pod      *nri.PodSandbox
	ctrs     map[string]*nri.Container
	order    []string
	caughtUp map[string]bool // containers a Synchronize reply updated
	synced   chan struct{}   // a plugin's synchronization returned to the runtime
}

func (r *runtime) sync(ctx context.Context, cb nri.SyncCB) error {
	r.mu.Lock()
	var ctrs []*nri.Container
	for _, id := range r.order {
		if c, ok := r.ctrs[id]; ok {
			ctrs = append(ctrs, c)
		}
	}
	r.mu.Unlock()
	updates, err := cb(ctx, []*nri.PodSandbox{r.pod}, ctrs)
	r.mu.Lock()
	for _, u := range updates {
		r.caughtUp[u.ContainerId] = true
	}
	r.mu.Unlock()
	r.synced <- struct{}{}
	return err
}

func (r *runtime) update(context.Context, []*nri.ContainerUpdate) ([]*nri.ContainerUpdate, error) {
	return nil, nil
}

// create runs CreateContainer; it returns the container's adjustment or the
// error that failed its creation.
func (r *runtime) create(ctx context.Context, id string) (*nri.ContainerAdjustment, error) {
	blk := r.nri.BlockPluginSync()
	defer blk.Unblock()
	ctr := &nri.Container{Id: id, PodSandboxId: r.pod.Id, Name: id, State: nri.ContainerState_CONTAINER_CREATED,
		Annotations: map[string]string{}}
	rpl, err := r.nri.CreateContainer(ctx, &nri.CreateContainerRequest{Pod: r.pod, Container: ctr})
	if err != nil {
		return nil, err
	}
	for k, v := range rpl.GetAdjust().GetAnnotations() {
		ctr.Annotations[k] = v
	}
	ctr.State = nri.ContainerState_CONTAINER_RUNNING
	r.mu.Lock()
	r.ctrs[id] = ctr
	r.order = append(r.order, id)
	r.mu.Unlock()
	return rpl.GetAdjust(), nil
}

func (r *runtime) updateResources(ctx context.Context, id string) error {
	blk := r.nri.BlockPluginSync()
	defer blk.Unblock()
	r.mu.Lock()
	ctr := r.ctrs[id]
	r.mu.Unlock()
	_, err := r.nri.UpdateContainer(ctx, &nri.UpdateContainerRequest{Pod: r.pod, Container: ctr,
		LinuxResources: &nri.LinuxResources{Cpu: &nri.LinuxCPU{Shares: nri.UInt64(512)}}})
	return err
}

func (r *runtime) remove(ctx context.Context, id string) error {
	blk := r.nri.BlockPluginSync()
	defer blk.Unblock()
	r.mu.Lock()
	ctr := r.ctrs[id]
	delete(r.ctrs, id)
	r.mu.Unlock()
	return r.nri.RemoveContainer(ctx, &nri.RemoveContainerRequest{Pod: r.pod, Container: ctr})
}

type env struct {
	dir string
	rt  *runtime
	rec *record
}

func newEnv() (*env, error) {
	dir, err := os.MkdirTemp("", "nripat")
	if err != nil {
		return nil, err
	}
	rt := &runtime{pod: &nri.PodSandbox{Id: "pod", Name: "pod", Uid: "uid-pod", Namespace: "default"},
		ctrs: map[string]*nri.Container{}, caughtUp: map[string]bool{}, synced: make(chan struct{}, 1)}
	rt.nri, err = nri.New("patterns", "v0.12.5", rt.sync, rt.update,
		nri.WithSocketPath(filepath.Join(dir, "nri.sock")),
		nri.WithPluginPath(filepath.Join(dir, "plugins")),
		nri.WithPluginConfigPath(filepath.Join(dir, "conf")))
	if err != nil {
		return nil, err
	}
	if err := rt.nri.Start(); err != nil {
		return nil, err
	}
	<-rt.synced // Start synchronized the (no) pre-installed plugins
	return &env{dir: dir, rt: rt, rec: &record{received: map[string]map[string]bool{}, acted: map[string]map[string]bool{}}}, nil
}

func (e *env) close() {
	e.rt.nri.Stop()
	_ = os.RemoveAll(e.dir)
}

// start connects an instance and waits until it synchronized; it returns
// the containers its Synchronize was given.
func (e *env) start(p *cpuPlugin, idx string) ([]*api.Container, error) {
	p.rec, p.synced = e.rec, make(chan []*api.Container, 1)
	s, err := stub.New(p, stub.WithPluginName("cpu"), stub.WithPluginIdx(idx),
		stub.WithSocketPath(filepath.Join(e.dir, "nri.sock")))
	if err != nil {
		return nil, err
	}
	p.stub = s
	ctx, cancel := context.WithTimeout(context.Background(), bound)
	defer cancel()
	if err := s.Start(ctx); err != nil {
		return nil, fmt.Errorf("start %s: %w", p.who, err)
	}
	var ctrs []*api.Container
	for _, ch := range []func() bool{
		func() bool { return recv(p.synced, &ctrs) },
		func() bool { return recv(e.rt.synced, nil) },
	} {
		if !ch() {
			return nil, fmt.Errorf("%s: not synchronized within %s", p.who, bound)
		}
	}
	return ctrs, nil
}

// recv takes one value from ch into v (if not nil) within the bound.
func recv[T any](ch chan T, v *T) bool {
	select {
	case x := <-ch:
		if v != nil {
			*v = x
		}
		return true
	case <-time.After(bound):
		return false
	}
}

// stop disconnects an instance and waits until the runtime dropped it: the
// next event must not reach it.
func (e *env) stop(p *cpuPlugin) {
	p.stub.Stop()
	p.stub.Wait()
}

type row struct{ pattern, measure, value string }

var rows []row

func out(pattern, measure string, format string, a ...any) {
	rows = append(rows, row{pattern, measure, fmt.Sprintf(format, a...)})
}

func ids(prefix string, n int) []string {
	var s []string
	for i := 0; i < n; i++ {
		s = append(s, fmt.Sprintf("%s-%03d", prefix, i))
	}
	return s
}

// surge rolls v1 (index 10) out to v2 (index 05) with both connected while
// before containers exist and during containers are created, updated and
// removed, then stops v1.
func surge(ctx context.Context, pattern string, stamps, adopt bool, before, during int) error {
	e, err := newEnv()
	if err != nil {
		return err
	}
	defer e.close()
	v1 := &cpuPlugin{who: "v1", version: 1, cpus: "0-1", stamps: stamps, adopt: adopt}
	if _, err := e.start(v1, "10"); err != nil {
		return err
	}
	old := ids("old", before)
	for _, id := range old {
		if _, err := e.rt.create(ctx, id); err != nil {
			return fmt.Errorf("create %s with v1 alone: %w", id, err)
		}
	}
	v2 := &cpuPlugin{who: "v2", version: 2, cpus: "2-3", stamps: stamps, adopt: adopt}
	synced, err := e.start(v2, "05")
	if err != nil {
		return err
	}
	e.rec.mu.Lock() // count from the start of the overlap
	e.rec.received, e.rec.acted = map[string]map[string]bool{}, map[string]map[string]bool{}
	e.rec.mu.Unlock()
	stillServed := 0
	for _, c := range synced {
		if c.GetAnnotations()[stampKey] == "v1" {
			stillServed++
		}
	}

	created, failed := []string{}, 0
	var firstErr string
	for _, id := range ids("new", during) {
		if _, err := e.rt.create(ctx, id); err != nil {
			failed++
			if firstErr == "" {
				firstErr = err.Error()
			}
			continue
		}
		created = append(created, id)
	}
	updFailed := map[string]int{}
	for _, set := range [][]string{old, created} {
		for _, id := range set {
			if err := e.rt.updateResources(ctx, id); err != nil {
				updFailed[strings.SplitN(id, "-", 2)[0]]++
				if firstErr == "" {
					firstErr = err.Error()
				}
			}
		}
	}
	// Remove some containers of each kind while both run.
	var removeCtrs []string
	for _, set := range [][]string{old, created} {
		if len(set) > 5 {
			set = set[:5]
		}
		removeCtrs = append(removeCtrs, set...)
	}
	for _, id := range removeCtrs {
		if err := e.rt.remove(ctx, id); err != nil {
			return err
		}
	}
	e.stop(v1)
	// After v1 is gone, who still handles a container created before the
	// rollout? Counted on a fresh record of the updates.
	after := &record{received: map[string]map[string]bool{}, acted: map[string]map[string]bool{}}
	v2.rec = after
	var kept []string
	e.rt.mu.Lock()
	for _, id := range old {
		if _, ok := e.rt.ctrs[id]; ok {
			kept = append(kept, id)
		}
	}
	e.rt.mu.Unlock()
	for _, id := range kept {
		if err := e.rt.updateResources(ctx, id); err != nil {
			return fmt.Errorf("update %s with v2 alone: %w", id, err)
		}
	}
	orphaned := after.count(after.acted, "UpdateContainer", kept, 0)
	e.stop(v2)

	r := e.rec
	both, all := 0, 0
	r.mu.Lock()
	for _, who := range r.received {
		all++
		if len(who) == 2 {
			both++
		}
	}
	r.mu.Unlock()
	out(pattern, "events during the overlap that reached both instances", "%d of %d", both, all)
	out(pattern, "containers created during the overlap that failed", "%d of %d", failed, during)
	if len(created) > 0 {
		out(pattern, "creations both instances received / adjusted", "%d / %d of %d",
			r.count(r.received, "CreateContainer", created, 2), r.count(r.acted, "CreateContainer", created, 2), len(created))
	}
	out(pattern, "resource updates that failed (before / during the overlap)", "%d of %d / %d of %d",
		updFailed["old"], before, updFailed["new"], len(created))
	out(pattern, "removals both instances acted on (released the CPUs)", "%d of %d",
		r.count(r.acted, "RemoveContainer", removeCtrs, 2), len(removeCtrs))
	out(pattern, "containers v2's Synchronize listed that v1 still served", "%d of %d", stillServed, len(synced))
	out(pattern, "pre-rollout containers nobody handled once v1 was gone", "%d of %d", orphaned, len(kept))
	if firstErr != "" {
		out(pattern, "first error", "%s", firstErr)
	}
	return nil
}

// restart stops the only instance, creates containers while it is gone, and
// restarts it with a catch-up in Synchronize.
func restart(ctx context.Context, gap int) error {
	const pattern = "restart + catch-up in Synchronize"
	e, err := newEnv()
	if err != nil {
		return err
	}
	defer e.close()
	v1 := &cpuPlugin{who: "v1", version: 1, cpus: "0-1", stamps: true, catchUp: true}
	if _, err := e.start(v1, "10"); err != nil {
		return err
	}
	e.stop(v1)
	missed := ids("gap", gap)
	noEnv := 0
	for _, id := range missed {
		a, err := e.rt.create(ctx, id)
		if err != nil {
			return err
		}
		if len(a.GetEnv()) == 0 {
			noEnv++
		}
	}
	again := &cpuPlugin{who: "v1'", version: 1, cpus: "0-1", stamps: true, catchUp: true}
	if _, err := e.start(again, "10"); err != nil {
		return err
	}
	e.rt.mu.Lock()
	fixed := 0
	for _, id := range missed {
		if e.rt.caughtUp[id] {
			fixed++
		}
	}
	e.rt.mu.Unlock()
	e.stop(again)
	out(pattern, "containers created while no instance ran, unadjusted", "%d of %d", noEnv, gap)
	out(pattern, "of those, CPU pinning fixed by Synchronize's updates", "%d of %d", fixed, gap)
	out(pattern, "of those, creation-only adjustments (env, mounts, devices, annotations) recoverable", "0 of %d (no update carries them)", gap)
	return nil
}

func main() {
	before := flag.Int("before", 10, "containers created before the rollout")
	during := flag.Int("during", 20, "containers created while both instances run")
	results := flag.String("results", "", "also write each result as \"KEY VALUE\" to this file (docs/results/patterns.txt: the documents quote it, hack/figures checks)")
	flag.Parse()
	ctx := context.Background()
	steps := []func() error{
		func() error { return surge(ctx, "surge, no pattern", false, false, *before, *during) },
		func() error { return surge(ctx, "surge + rubber stamp", true, false, *before, *during) },
		func() error {
			return surge(ctx, "surge + rubber stamp, adopting older stamps", true, true, *before, *during)
		},
		func() error { return restart(ctx, *during) },
	}
	for _, s := range steps {
		if err := s(); err != nil {
			fmt.Fprintln(os.Stderr, "patterns:", err)
			os.Exit(1)
		}
	}
	fmt.Println("| pattern (upstream containerd/nri v0.12.5) | measure | result |")
	fmt.Println("|---|---|---|")
	for _, r := range rows {
		fmt.Printf("| %s | %s | %s |\n", r.pattern, r.measure, strings.ReplaceAll(r.value, "|", "\\|"))
	}
	if *results != "" {
		if err := writeResults(*results); err != nil {
			fmt.Fprintln(os.Stderr, "patterns:", err)
			os.Exit(1)
		}
	}
}

// writeResults writes each row as "PATTERN.MEASURE VALUE", each part a slug
// of its first words (slug), under the commit it ran on.
func writeResults(path string) error {
	commit, err := exec.Command("git", "rev-parse", "--short", "HEAD").Output()
	if err != nil {
		commit = []byte("unknown")
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "# make patterns: written by the run, read by hack/figures; do not edit\ncommit %s\ndate %s\n",
		strings.TrimSpace(string(commit)), time.Now().UTC().Format("2006-01-02"))
	seen := map[string]bool{}
	for _, r := range rows {
		k := slug(r.pattern, 8) + "." + slug(r.measure, 4)
		if seen[k] {
			return fmt.Errorf("two results named %s", k)
		}
		seen[k] = true
		fmt.Fprintf(&sb, "%s %s\n", k, strings.TrimSpace(r.value))
	}
	return os.WriteFile(path, []byte(sb.String()), 0o644)
}

// slug is s's first n words, lower-case, letters and digits only, joined by
// "-".
func slug(s string, n int) string {
	words := strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '\'')
	})
	for i := range words {
		words[i] = strings.ReplaceAll(words[i], "'", "")
	}
	return strings.Join(words[:min(n, len(words))], "-")
}
