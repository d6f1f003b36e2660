package main

import (
	"strings"
	"testing"
)

func TestSummarize(t *testing.T) {
	s := summarize([]float64{5, 1, 3})
	if s.med != 3 || s.min != 1 || s.max != 5 || s.n != 3 {
		t.Errorf("odd: %+v", s)
	}
	if s := summarize([]float64{4, 1, 2, 3}); s.med != 2.5 {
		t.Errorf("even median %v, want 2.5", s.med)
	}
	if summarize(nil).ok() {
		t.Error("empty summary ok")
	}
}

// Ratios pair the runs of one round; a round one arm failed is left out.
func TestRatioPairsRounds(t *testing.T) {
	r := &expResult{arms: map[string]*armResult{
		ours:     {runs: []figures{{"x": 2, "round": 0}, {"x": 9, "round": 2}}},
		upstream: {runs: []figures{{"x": 4, "round": 0}, {"x": 1, "round": 1}, {"x": 3, "round": 2}}},
	}}
	s := r.ratio(ours, upstream, "x")
	if s.n != 2 || s.min != 0.5 || s.max != 3 {
		t.Errorf("ratio %+v, want rounds 0 and 2 only (0.5, 3)", s)
	}
	if r.ratio(ours, floorArm, "x").ok() {
		t.Error("ratio against a missing arm")
	}
}

func TestParseFigures(t *testing.T) {
	f, err := parseFigures([]byte("noise\n{\"stall\":{\"p99Ms\":1.5,\"extra\":{\"gateHeldMs\":0.5}}}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if f["stall.p99Ms"] != 1.5 || f["stall.extra.gateHeldMs"] != 0.5 {
		t.Errorf("figures %v", f)
	}
	if _, err := parseFigures([]byte("{\"err\":\"boom\"}\n")); err == nil {
		t.Error("failed run not reported")
	}
}

func TestParseMicro(t *testing.T) {
	out := `goos: linux
BenchmarkSyncGateLock-2   	 1000	  70.0 ns/op	  9 B/op	  2 allocs/op
BenchmarkEncode/SynchronizeRequest/ctrs=1000-2   26   4465961 ns/op   570112 B/op   17201 allocs/op
BenchmarkSyncGateLock-2   	 1000	  90.0 ns/op	  9 B/op	  2 allocs/op
BenchmarkSyncGateLock-2   	 1000	  80.0 ns/op	  9 B/op	  2 allocs/op
PASS
`
	res := parseMicro([]byte(out))
	if len(res) != 2 || res[0].name != "SyncGateLock" || res[1].name != "Encode/SynchronizeRequest/ctrs=1000" {
		t.Fatalf("results %+v", res)
	}
	if s := res[0].units["ns/op"]; s.med != 80 || s.n != 3 {
		t.Errorf("median %+v, want 80 over 3 runs", s)
	}
}

// The template renders every section, also with experiments missing.
func TestRender(t *testing.T) {
	d := &doc{res: map[string]*expResult{
		"blocksync": {arms: map[string]*armResult{
			ours:     {runs: []figures{{"dispatch.nsPerOp": 20, "round": 0}}},
			upstream: {runs: []figures{{"dispatch.nsPerOp": 40, "round": 0}}, errs: []string{"boom"}},
		}},
		"longstop": {arms: map[string]*armResult{
			oursTakeover: {runs: []figures{{"longStop.maxWaitMs": 8.5, "round": 0}}},
			upstream:     {runs: []figures{{"longStop.maxWaitMs": 9999, "round": 0}}},
		}},
		"busy/ctrs=1000": {arms: map[string]*armResult{
			ours:     {runs: []figures{{"busy.extra.syncedToActiveMs": 4.5, "busy.maxMs": 20, "round": 0}}},
			upstream: {runs: []figures{{"busy.windowMs": 10050, "busy.maxMs": 10020, "round": 0}}},
		}},
	}, sizes: []int{1000}}
	text, err := d.render("")
	if err != nil {
		t.Fatal(err)
	}
	figs := d.figures()
	for _, want := range []string{"\nlongstop." + oursTakeover + ".longStop.maxWaitMs 8.50\n", "\nbusy/ctrs=1000.upstream.busy.windowMs 10050\n"} {
		if !strings.Contains(figs, want) {
			t.Errorf("figures lack %q:\n%s", want, figs)
		}
	}
	for _, want := range []string{"## Targets", "| ours | 20 |", "0.500", "blocksync/upstream: boom", "## Micro-benchmarks",
		"## Joining beside a long graceful stop", "wait at most 8.50 ms while a plugin takes over", "against 9999 ms while a plugin joins upstream's",
		"## Taking over while BlockPluginSync is never idle", "synchronized to active in 4.50 ms", "at most 20 ms during our takeover against 10020 ms"} {
		if !strings.Contains(text, want) {
			t.Errorf("report lacks %q", want)
		}
	}
}
