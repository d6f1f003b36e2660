package main

import (
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
