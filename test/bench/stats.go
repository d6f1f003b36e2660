package main

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
)

// stat summarizes one figure over an arm's runs.
type stat struct {
	med, min, max float64
	n             int
}

func (s stat) ok() bool { return s.n > 0 }

func summarize(vals []float64) stat {
	if len(vals) == 0 {
		return stat{}
	}
	v := slices.Clone(vals)
	slices.Sort(v)
	med := v[len(v)/2]
	if len(v)%2 == 0 {
		med = (v[len(v)/2-1] + v[len(v)/2]) / 2
	}
	return stat{med: med, min: v[0], max: v[len(v)-1], n: len(v)}
}

// fig summarizes key over the runs of arm label in r.
func (r *expResult) fig(label, key string) stat {
	if r == nil || r.arms[label] == nil {
		return stat{}
	}
	var vals []float64
	for _, f := range r.arms[label].runs {
		if v, ok := f[key]; ok {
			vals = append(vals, v)
		}
	}
	return summarize(vals)
}

// ratio summarizes key of arm a over key of arm b, round by round: the
// arms of a round ran back to back, so their quotient is less disturbed
// by the machine's load than the quotient of the medians.
func (r *expResult) ratio(a, b, key string) stat {
	if r == nil || r.arms[a] == nil || r.arms[b] == nil {
		return stat{}
	}
	byRound := map[float64]float64{}
	for _, f := range r.arms[b].runs {
		if v, ok := f[key]; ok && v != 0 {
			byRound[f["round"]] = v
		}
	}
	var q []float64
	for _, f := range r.arms[a].runs {
		if den, ok := byRound[f["round"]]; ok {
			if v, ok := f[key]; ok {
				q = append(q, v/den)
			}
		}
	}
	return summarize(q)
}

// load is the median load average r's runs started at.
func (r *expResult) load() float64 {
	var v []float64
	for _, a := range r.arms {
		for _, f := range a.runs {
			v = append(v, f["load1"])
		}
	}
	s := summarize(v)
	if !s.ok() {
		return math.NaN()
	}
	return s.med
}

// brief is a plain-text summary of r for the log: every figure's median
// per arm and, where upstream ran, the median of the paired ratios.
func (r *expResult) brief() string {
	keys := map[string]bool{}
	for _, a := range r.arms {
		for _, f := range a.runs {
			for k := range f {
				if k != "round" && k != "load1" && !strings.HasSuffix(k, "UnixMs") {
					keys[k] = true
				}
			}
		}
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "%s (load %.2f):", r.exp.id, r.load())
	for _, k := range slices.Sorted(maps.Keys(keys)) {
		fmt.Fprintf(&sb, "\n  %-28s", k)
		for _, a := range r.exp.arms {
			s := r.fig(a.label, k)
			if !s.ok() {
				continue
			}
			fmt.Fprintf(&sb, "  %s %s", a.label, num(s.med))
			if a.label != upstream {
				if q := r.ratio(a.label, upstream, k); q.ok() {
					fmt.Fprintf(&sb, " (%s [%s-%s])", num(q.med), num(q.min), num(q.max))
				}
			}
		}
	}
	return sb.String()
}
