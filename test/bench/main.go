// Command bench compares our adaptation with upstream containerd/nri
// v0.12.5 and writes docs/benchmarks.md (`make bench`). It builds the
// benchmark runtimes (ours from ./benchruntime, upstream's from
// ../upstream/benchruntime, never linked with our api package), our plugin
// and the bare-ttrpc floor, runs every experiment in rounds that alternate
// the implementations' order so that the machine's noise hits both alike,
// runs the Go micro-benchmarks of pkg/adaptation, and renders the medians,
// their spread and the load average through benchmarks.md.tmpl.
//
//	go run ./test/bench [-out docs/benchmarks.md] [-rounds N] [-sizes 1000,10000,50000] [-skip-micro]
//	                    [-only REGEXP] [-baseline REF]
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/nri-handover/nri/test/bench/loadgen"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

func run() error {
	var (
		out       = flag.String("out", "docs/benchmarks.md", "report to write (relative to the module root)")
		rounds    = flag.Int("rounds", 7, "rounds of the quick experiments (the heavy ones run about half as many)")
		sizes     = flag.String("sizes", "1000,10000,50000", "node sizes (containers) of the synchronization and handover rows")
		skipMicro = flag.Bool("skip-micro", false, "do not run the Go micro-benchmarks")
		tmpl      = flag.String("template", "", "report template (default: the embedded benchmarks.md.tmpl)")
		results   = flag.String("results", "docs/results/bench.txt", "its figures, for the documents' check (written with the default -out only)")
		only      = flag.String("only", "", "run only the experiments whose id matches this regular expression (e.g. 'sync|events/plugins=1$')")
		baseline  = flag.String("baseline", "", "also run our runtime and plugin built from this git revision, as arms labelled ARM@base, paired with the rest")
	)
	flag.Parse()
	var match *regexp.Regexp
	if *only != "" {
		var err error
		if match, err = regexp.Compile(*only); err != nil {
			return fmt.Errorf("-only: %w", err)
		}
	}
	var nodeSizes []int
	for _, s := range strings.Split(*sizes, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n <= 0 {
			return fmt.Errorf("bad node size %q", s)
		}
		nodeSizes = append(nodeSizes, n)
	}
	root, err := moduleRoot()
	if err != nil {
		return err
	}
	started := time.Now()
	m := readMachine(root)

	dir, err := os.MkdirTemp("", "nribench-bin")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	logf("building the benchmark binaries")
	x, err := build(root, dir)
	if err != nil {
		return err
	}

	var base *binaries
	if *baseline != "" {
		logf("building our binaries at %s", *baseline)
		if base, err = buildAt(root, dir, *baseline); err != nil {
			return err
		}
	}

	var exps []experiment
	for _, e := range experiments(x, *rounds, nodeSizes) {
		if match == nil || match.MatchString(e.id) {
			exps = append(exps, withBaseline(e, x, base))
		}
	}
	res := map[string]*expResult{}
	for i, e := range exps {
		logf("[%d/%d] %s (%d rounds, load %.2f)", i+1, len(exps), e.id, e.rounds, loadgen.LoadAvg())
		res[e.id] = runExperiment(e)
		logf("%s", res[e.id].brief())
	}
	var micro []microResult
	if !*skipMicro {
		logf("micro-benchmarks of pkg/adaptation")
		if micro, err = runMicro(root); err != nil {
			return err
		}
	}
	m.Duration = time.Since(started).Round(time.Second)
	m.LoadMin, m.LoadMax = loadRange(res)

	d := &doc{Machine: m, res: res, sizes: nodeSizes, micro: micro}
	text, err := d.render(*tmpl)
	if err != nil {
		return err
	}
	path := *out
	if !filepath.IsAbs(path) {
		path = filepath.Join(root, path)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		return err
	}
	logf("wrote %s in %s", path, m.Duration)
	if *out == "docs/benchmarks.md" && *results != "" {
		p := filepath.Join(root, *results)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, []byte(d.figures()), 0o644); err != nil {
			return err
		}
		logf("wrote %s", p)
	}
	if f := d.failures(); len(f) > 0 {
		return fmt.Errorf("%d runs failed (listed in %s)", len(f), path)
	}
	return nil
}

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "%s "+format+"\n", append([]any{time.Now().UTC().Format("15:04:05")}, args...)...)
}

// moduleRoot is where go.mod is.
func moduleRoot() (string, error) {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOMOD: %w", err)
	}
	mod := strings.TrimSpace(string(out))
	if mod == "" || mod == os.DevNull {
		return "", fmt.Errorf("not inside the module")
	}
	return filepath.Dir(mod), nil
}

// binaries are the programs the experiments run.
type binaries struct {
	ours, upstream, plugin, floor string
}

func build(root, dir string) (*binaries, error) {
	x := &binaries{
		ours:     filepath.Join(dir, "ours-runtime"),
		upstream: filepath.Join(dir, "upstream-runtime"),
		plugin:   filepath.Join(dir, "benchplugin"),
		floor:    filepath.Join(dir, "floor"),
	}
	for _, t := range []struct{ out, pkg string }{
		{x.ours, "./test/bench/benchruntime"},
		{x.upstream, "./test/upstream/benchruntime"},
		{x.plugin, "./test/bench/benchplugin"},
		{x.floor, "./test/bench/floor"},
	} {
		cmd := exec.Command("go", "build", "-o", t.out, t.pkg)
		cmd.Dir = root
		if b, err := cmd.CombinedOutput(); err != nil {
			return nil, fmt.Errorf("go build %s: %w\n%s", t.pkg, err, b)
		}
	}
	return x, nil
}

// buildAt builds our runtime and plugin from the git revision ref, in a
// scratch worktree under dir; upstream's binaries and the floor are the
// current ones (they do not link our packages).
func buildAt(root, dir, ref string) (*binaries, error) {
	tree := filepath.Join(dir, "baseline-tree")
	add := exec.Command("git", "worktree", "add", "--detach", tree, ref)
	add.Dir = root
	if b, err := add.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("git worktree add %s: %w\n%s", ref, err, b)
	}
	defer func() {
		rm := exec.Command("git", "worktree", "remove", "--force", tree)
		rm.Dir = root
		_ = rm.Run()
	}()
	x := &binaries{ours: filepath.Join(dir, "baseline-runtime"), plugin: filepath.Join(dir, "baseline-plugin")}
	for _, t := range []struct{ out, pkg string }{
		{x.ours, "./test/bench/benchruntime"},
		{x.plugin, "./test/bench/benchplugin"},
	} {
		cmd := exec.Command("go", "build", "-o", t.out, t.pkg)
		cmd.Dir = tree
		if b, err := cmd.CombinedOutput(); err != nil {
			return nil, fmt.Errorf("go build %s at %s: %w\n%s", t.pkg, ref, err, b)
		}
	}
	return x, nil
}

// withBaseline adds to e, for every arm that runs our runtime or our
// plugin, the same arm on base's binaries, labelled ARM@base.
func withBaseline(e experiment, x, base *binaries) experiment {
	if base == nil {
		return e
	}
	var extra []arm
	for _, a := range e.arms {
		argv := slices.Clone(a.argv)
		changed := false
		for i, v := range argv {
			switch {
			case v == x.ours:
				argv[i], changed = base.ours, true
			case v == x.plugin || strings.HasPrefix(v, x.plugin+" "):
				argv[i], changed = base.plugin+strings.TrimPrefix(v, x.plugin), true
			}
		}
		if changed {
			extra = append(extra, arm{label: a.label + "@base", argv: argv})
		}
	}
	e.arms = append(e.arms, extra...)
	return e
}

// runOnce runs one benchmark binary and returns its flattened figures.
func runOnce(a arm) (figures, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, a.argv[0], a.argv[1:]...)
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	f, perr := parseFigures(out)
	if perr != nil {
		return nil, fmt.Errorf("%s: %w (exit: %v)", strings.Join(a.argv, " "), perr, err)
	}
	return f, nil
}
