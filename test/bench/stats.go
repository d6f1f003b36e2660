package main

import (
	"math"
	"slices"
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
