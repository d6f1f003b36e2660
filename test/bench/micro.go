package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// microPattern selects the Go micro-benchmarks of pkg/adaptation the report
// shows: merging plugin results, ownership checks, the sync gate, encoding,
// and fan-out against fake in-process plugins.
const microPattern = `^Benchmark(Merge|Ownership|BlockPluginSync|SyncGate|Encode|Decode|Notify)`

// microResult is one micro-benchmark: the median of its -count runs per
// unit (ns/op, B/op, allocs/op).
type microResult struct {
	name  string
	units map[string]stat
}

func runMicro(root string) ([]microResult, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "go", "test", "-run", "^$", "-bench", microPattern, "-benchmem",
		"-benchtime", "200ms", "-count", "3", "./pkg/adaptation/")
	cmd.Dir = root
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("micro-benchmarks: %w\n%s", err, out)
	}
	return parseMicro(out), nil
}

// benchLine matches "BenchmarkName/sub-CPUS  N  value unit value unit ...".
var benchLine = regexp.MustCompile(`^(Benchmark\S+?)(-\d+)?\s+\d+\s+(.*)$`)

// parseMicro reads `go test -bench` output, in order of first appearance.
func parseMicro(out []byte) []microResult {
	var order []string
	vals := map[string]map[string][]float64{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		m := benchLine.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		name := m[1]
		if vals[name] == nil {
			vals[name] = map[string][]float64{}
			order = append(order, name)
		}
		f := strings.Fields(m[3])
		for i := 0; i+1 < len(f); i += 2 {
			if v, err := strconv.ParseFloat(f[i], 64); err == nil {
				vals[name][f[i+1]] = append(vals[name][f[i+1]], v)
			}
		}
	}
	var res []microResult
	for _, name := range order {
		r := microResult{name: strings.TrimPrefix(name, "Benchmark"), units: map[string]stat{}}
		for u, v := range vals[name] {
			r.units[u] = summarize(v)
		}
		res = append(res, r)
	}
	return res
}
