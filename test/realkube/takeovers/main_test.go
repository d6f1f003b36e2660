package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestCallKeyPairsStartAndEnd(t *testing.T) {
	for _, c := range []struct{ method, start, end string }{
		{"RunPodSandbox", `for &PodSandboxMetadata{Name:a,}`, `for &PodSandboxMetadata{Name:a,} returns sandbox id \"s\"`},
		{"CreateContainer", `within sandbox \"s\" for container &ContainerMetadata{Name:bb,}`, `within sandbox \"s\" for &ContainerMetadata{Name:bb,} returns container id \"c\"`},
		{"CreateContainer", `within sandbox \"s\" for container &ContainerMetadata{Name:bb,}`, `within sandbox \"s\" for &ContainerMetadata{Name:bb,} failed`},
		{"StopContainer", `for \"c\" with timeout 10 (s)`, `for \"c\" returns successfully`},
		{"RemovePodSandbox", `for \"s\"`, `\"s\" returns successfully`},
		{"RunPodSandbox", `for &PodSandboxMetadata{Name:a,}`, `for &PodSandboxMetadata{Name:a,} failed, error`},
	} {
		k1, e1 := callKey(c.method, c.start)
		k2, e2 := callKey(c.method, c.end)
		if e1 || !e2 || k1 != k2 {
			t.Errorf("%s: start %q (end %v), end %q (end %v)", c.method, k1, e1, k2, e2)
		}
	}
}

func TestLongestGap(t *testing.T) {
	t0 := time.Unix(1000, 0)
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	calls := []*call{
		{method: "StopContainer", start: at(1), end: at(3)},
		{method: "CreateContainer", start: at(2), end: at(6)},
		{method: "StopContainer", start: at(7), end: at(8)},
	}
	if g, from := longestGap(calls, at(0), at(10), nil); g != 2*time.Second || !from.Equal(at(8)) {
		t.Errorf("gap %v from %v, want 2s from 8", g, from.Sub(t0))
	}
	if g, from := longestGap(calls, at(0), at(10), stopSide); g != 4*time.Second || !from.Equal(at(3)) {
		t.Errorf("stop-side gap %v from %v, want 4s from 3", g, from.Sub(t0))
	}
	if g, _ := longestGap(calls, at(2.5), at(5), nil); g != 0 {
		t.Errorf("gap %v inside a call, want 0", g)
	}
}

// Both ends of synchronized → active come from containerd's log, and a
// negative difference is reported as it is, not as 0.
func TestSynchronizedToActiveOnContainerdsClock(t *testing.T) {
	dir := t.TempDir()
	line := func(at, msg string) string {
		return `time="2026-12-07T17:27:` + at + `Z" level=info msg="` + msg + `"` + "\n"
	}
	log := line("30.000000000", `external:50-annotator[7] registered (version \"v2\", instance \"uid-b\", generation 5)`) +
		line("30.040000000", `plugin external:50-annotator[7] synchronized (full round) in 40ms`) +
		line("30.100000000", `plugin 50-annotator (instance uid-a) superseded by 50-annotator instance uid-b generation 5`) +
		line("31.000000000", `external:50-annotator[8] registered (version \"v3\", instance \"uid-c\", generation 6)`) +
		line("31.500000000", `plugin external:50-annotator[8] synchronized (full round) in 10ms`) +
		line("31.400000000", `plugin 50-annotator (instance uid-b) superseded by 50-annotator instance uid-c generation 6`)
	write := func(name, text string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("containerd.log", log)
	write("s1.lines", "0 6\n")
	var out strings.Builder
	if err := report(&out, filepath.Join(dir, "containerd.log"), dir, "s1", 8*time.Second); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"instance uid-b: registered → synchronized 0.040s, synchronized → active 0.060s,",
		"instance uid-c: registered → synchronized 0.500s, synchronized → active -0.100s,",
		"summary: takeovers=2 within=2 max-synced-active=0.060 ",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, out.String())
		}
	}
}
