// Command benchtable turns `go test -bench` output on stdin into markdown
// tables on stdout, one per top-level benchmark, one row per sub-benchmark
// and one column per reported unit. Other lines pass through to stderr.
package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"regexp"
	"slices"
	"strings"
)

// table collects the rows of one top-level benchmark.
type table struct {
	name  string
	units []string // in order of first appearance
	rows  []row
}

type row struct {
	name   string
	values map[string]string
}

// benchLine matches "BenchmarkTop/sub-CPUS  N  value unit value unit ...".
var benchLine = regexp.MustCompile(`^(Benchmark[^/\s]+)(/\S*?)?(-\d+)?\s+\d+\s+(.*)$`)

func main() {
	if err := run(os.Stdin, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func run(in io.Reader, out, rest io.Writer) error {
	var tables []*table
	byName := map[string]*table{}
	sc := bufio.NewScanner(in)
	for sc.Scan() {
		line := sc.Text()
		m := benchLine.FindStringSubmatch(line)
		if m == nil {
			fmt.Fprintln(rest, line)
			continue
		}
		t := byName[m[1]]
		if t == nil {
			t = &table{name: m[1]}
			byName[m[1]] = t
			tables = append(tables, t)
		}
		r := row{name: strings.TrimPrefix(m[2], "/"), values: map[string]string{}}
		f := strings.Fields(m[4])
		for i := 0; i+1 < len(f); i += 2 {
			unit := f[i+1]
			if _, ok := r.values[unit]; !ok && !contains(t.units, unit) {
				t.units = append(t.units, unit)
			}
			r.values[unit] = f[i]
		}
		t.rows = append(t.rows, r)
	}
	if err := sc.Err(); err != nil {
		return err
	}
	for _, t := range tables {
		slices.SortStableFunc(t.units, func(a, b string) int { return rank(a) - rank(b) })
		fmt.Fprintf(out, "\n### %s\n\n| case | %s |\n|---|%s\n", t.name,
			strings.Join(t.units, " | "), strings.Repeat("---:|", len(t.units)))
		for _, r := range t.rows {
			cells := make([]string, len(t.units))
			for i, u := range t.units {
				cells[i] = r.values[u]
				if cells[i] == "" {
					cells[i] = "–"
				}
			}
			fmt.Fprintf(out, "| %s | %s |\n", r.name, strings.Join(cells, " | "))
		}
	}
	return nil
}

// preferred orders the columns the benchmarks report; others follow.
var preferred = []string{"ns/op", "B/op", "allocs/op", "p50-ms", "p99-ms", "max-ms", "worst-max-ms", "window-ms",
	"gate-held-ms", "handover-ms", "start-to-active-ms", "heap-MiB", "heap-growth-MiB", "rss-MiB", "rss-growth-MiB", "load1"}

func rank(unit string) int {
	if i := slices.Index(preferred, unit); i >= 0 {
		return i
	}
	return len(preferred)
}

func contains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}
