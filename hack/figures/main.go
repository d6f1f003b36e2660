// Command figures checks that every figure the documents quote from a run
// is the figure that run wrote (issue 34: one source per figure).
//
// The runs write docs/results/SUITE.txt ("KEY VALUE" lines: make bench,
// e2e-containerd, e2e-docker, e2e-kubernetes; test/realruntime/results.sh).
// A document quotes one by putting <!--fig SUITE KEY--> right after it:
//
//	A 82<!--fig e2e-containerd A.passed--> checks
//
// The figure is as many words before the marker as the run's value has,
// the first of them cut at one of "(|[", without emphasis: "35 of 35" in
// "(35 of 35<!--fig ...-->)".
//
// With -fill it writes each run's figure in place of the quoted one first
// (after a run: `go run ./hack/figures -fill`, then read the diff).
//
//	go run ./hack/figures [-root DIR] [-fill]
package main

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

func main() {
	root := flag.String("root", ".", "the repository")
	fill := flag.Bool("fill", false, "write each run's figure in place of the quoted one, then check")
	flag.Parse()
	if *fill {
		if err := fillIn(*root); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
	n, err := check(*root)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Printf("figures: %d quoted figures match their runs\n", n)
}

// documents are the files whose figures are checked, relative to the root.
var documents = []string{"README.md", "docs/*.md", "deploy/README.md"}

var (
	markerRE = regexp.MustCompile(`<!--fig (\S+) (\S+)-->`)
)

// check reads every run's results and every document, and returns how many
// quoted figures it checked, or every mismatch found.
func check(root string) (int, error) {
	results, files, err := inputs(root)
	if err != nil {
		return 0, err
	}
	var errs []error
	n := 0
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return 0, err
		}
		rel, _ := filepath.Rel(root, f)
		for i, line := range strings.Split(string(b), "\n") {
			where := fmt.Sprintf("%s:%d", rel, i+1)
			for _, m := range markerRE.FindAllStringSubmatchIndex(line, -1) {
				n++
				suite, key := line[m[2]:m[3]], line[m[4]:m[5]]
				run, ok := results[suite]
				if !ok {
					errs = append(errs, fmt.Errorf("%s: %s quotes a run with no results (docs/results/%s.txt)", where, key, suite))
					continue
				}
				want, ok := run[key]
				if !ok {
					errs = append(errs, fmt.Errorf("%s: docs/results/%s.txt has no %s", where, suite, key))
					continue
				}
				if i := figureStart(line[:m[0]], want); strings.Trim(line[i:m[0]], "*_`") != want {
					got := strings.Trim(line[i:m[0]], "*_`")
					errs = append(errs, fmt.Errorf("%s: %s %s is %q here and %q in its run (commit %s)", where, suite, key, got, want, run["commit"]))
				}
			}
		}
	}
	return n, errors.Join(errs...)
}

// inputs reads every run's results and lists the documents.
func inputs(root string) (map[string]map[string]string, []string, error) {
	results, err := readResults(filepath.Join(root, "docs", "results"))
	if err != nil {
		return nil, nil, err
	}
	var files []string
	for _, g := range documents {
		m, err := filepath.Glob(filepath.Join(root, g))
		if err != nil {
			return nil, nil, err
		}
		files = append(files, m...)
	}
	sort.Strings(files)
	return results, files, nil
}

// fillIn writes, before each marker whose run has the key, the run's value
// in place of the quoted figure.
func fillIn(root string) error {
	results, files, err := inputs(root)
	if err != nil {
		return err
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return err
		}
		lines := strings.Split(string(b), "\n")
		for i, line := range lines {
			var out strings.Builder
			last := 0
			for _, m := range markerRE.FindAllStringSubmatchIndex(line, -1) {
				v, ok := results[line[m[2]:m[3]]][line[m[4]:m[5]]]
				before := line[last:m[0]]
				if ok {
					i := figureStart(before, v)
					old := before[i:]
					lead := len(old) - len(strings.TrimLeft(old, "*_`"))
					trail := len(old) - len(strings.TrimRight(old, "*_`"))
					before = before[:i] + old[:lead] + v + old[len(old)-trail:]
				}
				out.WriteString(before)
				out.WriteString(line[m[0]:m[1]])
				last = m[1]
			}
			out.WriteString(line[last:])
			lines[i] = out.String()
		}
		if text := strings.Join(lines, "\n"); text != string(b) {
			if err := os.WriteFile(f, []byte(text), 0o644); err != nil {
				return err
			}
		}
	}
	return nil
}

// figureStart is where the figure that ends s begins: as many words back
// as value has, the first cut after one of "(|[".
func figureStart(s, value string) int {
	i := len(s)
	for n := max(len(strings.Fields(value)), 1); n > 0 && i > 0; n-- {
		i = strings.LastIndexAny(strings.TrimRight(s[:i], " \t"), " \t") + 1
	}
	end := len(s)
	if w := strings.IndexAny(s[i:], " \t"); w >= 0 {
		end = i + w
	}
	if j := strings.LastIndexAny(s[i:end], "(|["); j >= 0 {
		i += j + 1
	}
	return i
}

// readResults reads docs/results/*.txt: suite -> key -> value.
func readResults(dir string) (map[string]map[string]string, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.txt"))
	if err != nil {
		return nil, err
	}
	all := map[string]map[string]string{}
	for _, f := range files {
		suite := strings.TrimSuffix(filepath.Base(f), ".txt")
		run, err := readResult(f)
		if err != nil {
			return nil, err
		}
		if run["commit"] == "" && run["reproduced-by"] == "" {
			return nil, fmt.Errorf("%s: no commit line: a results file is written by its run "+
				"(or, rewritten by every run of a target in make test, names it in a reproduced-by line)", f)
		}
		all[suite] = run
	}
	return all, nil
}

func readResult(path string) (map[string]string, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	run := map[string]string{}
	sc := bufio.NewScanner(fh)
	for line := 1; sc.Scan(); line++ {
		l := strings.TrimSpace(sc.Text())
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		k, v, ok := strings.Cut(l, " ")
		if !ok {
			return nil, fmt.Errorf("%s:%d: want \"KEY VALUE\", got %q", path, line, l)
		}
		run[k] = strings.TrimSpace(v)
	}
	return run, sc.Err()
}
