package main

import (
	"bytes"
	"context"
	"encoding/xml"
	"errors"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"
)

// TestDemoShort runs the demo with a few hundred milliseconds of traffic and
// two rollouts: the successor of the first is killed mid-handover, then the
// active instance is killed while its predecessor stands by. The handover
// part must handle every container exactly once, and the timeline must be
// well-formed SVG with a lane per instance.
func TestDemoShort(t *testing.T) {
	defer goleak.VerifyNone(t)
	var out bytes.Buffer
	svg := filepath.Join(t.TempDir(), "timeline.svg")
	rep, err := run(context.Background(), config{rate: 200, duration: 600 * time.Millisecond, handovers: 2,
		grace: time.Minute, svgPath: svg, out: &out})
	if err != nil {
		t.Fatalf("demo failed: %v\n%s", err, out.String())
	}
	t.Log(out.String())

	v := rep.handover.verdict
	if !v.ok() || v.duplicates != 0 || v.lost != 0 || v.otherFailed != 0 || v.total == 0 {
		t.Errorf("handover part: %s", v)
	}
	if !regexp.MustCompile(`with handover: +handled exactly once: (\d+) of (\d+); by both \(creation failed\): 0; by none: 0; longest time without an active instance: [0-9.]+ ms`).
		Match(out.Bytes()) {
		t.Errorf("no verdict line in the output")
	}
	if u := rep.upstream.verdict; u.duplicates == 0 {
		t.Errorf("without handover, both instances should have handled some containers: %s", u)
	}
	for _, outcome := range []string{"failed", "reactivated", "completed", "rejected"} {
		if rep.handover.tl.countOutcome(outcome) == 0 {
			t.Errorf("the adaptation reported no %q handover", outcome)
		}
	}
	if v.gapWhy == "" {
		t.Errorf("the kill of the active instance left no time without an active instance")
	}

	f, err := os.Open(svg)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	lanes, err := svgLanes(f)
	if err != nil {
		t.Fatalf("timeline is not well-formed SVG: %v", err)
	}
	for _, want := range []string{"pod-a", "pod-b", "pod-c", "lost", "duplicates"} {
		if !slices.Contains(lanes["true"], want) {
			t.Errorf("handover panel has no lane %q: %v", want, lanes["true"])
		}
	}
	for _, want := range []string{"pod-a", "pod-b"} {
		if !slices.Contains(lanes["false"], want) {
			t.Errorf("panel without handover has no lane %q: %v", want, lanes["false"])
		}
	}
}

// TestDemoNoStandby: -standby-grace=0, the runtime's default, is accepted
// and shows handover without a standby: no kill of the active instance, no
// reactivation, every container handled exactly once; the expected refusal
// of a superseded instance is no ERROR line, and the verdict says what its
// numbers are.
func TestDemoNoStandby(t *testing.T) {
	defer goleak.VerifyNone(t)
	var out bytes.Buffer
	rep, err := run(context.Background(), config{rate: 200, duration: 400 * time.Millisecond, handovers: 1,
		grace: 0, svgPath: filepath.Join(t.TempDir(), "timeline.svg"), out: &out})
	if err != nil {
		t.Fatalf("demo with -standby-grace=0 failed: %v\n%s", err, out.String())
	}
	t.Log(out.String())
	if v := rep.handover.verdict; !v.ok() {
		t.Errorf("handover part without a standby: %s", v)
	}
	o := out.String()
	for _, want := range []string{"no standby", "refused by the runtime, as expected", "by both: both instances adjusted it"} {
		if !strings.Contains(o, want) {
			t.Errorf("the output does not say %q", want)
		}
	}
	for _, not := range []string{"level=ERROR", "reactivated (ready", "duplicates:"} {
		if strings.Contains(o, not) {
			t.Errorf("the output has %q", not)
		}
	}
}

func TestValidateStandbyGrace(t *testing.T) {
	base := config{rate: 1, duration: time.Second, handovers: 1}
	for _, tc := range []struct {
		grace time.Duration
		ok    bool
	}{{0, true}, {time.Second, true}, {-time.Second, false}} {
		c := base
		c.grace = tc.grace
		if err := c.validate(); (err == nil) != tc.ok {
			t.Errorf("-standby-grace=%s: %v", tc.grace, err)
		}
	}
}

// svgLanes decodes an SVG timeline and returns its lanes by panel
// (data-handover of the panel).
func svgLanes(r io.Reader) (map[string][]string, error) {
	dec := xml.NewDecoder(r)
	lanes := map[string][]string{}
	panel, root := "", false
	attr := func(e xml.StartElement, name string) string {
		for _, a := range e.Attr {
			if a.Name.Local == name {
				return a.Value
			}
		}
		return ""
	}
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		e, ok := tok.(xml.StartElement)
		if !ok {
			continue
		}
		switch {
		case e.Name.Local == "svg":
			root = e.Name.Space == "http://www.w3.org/2000/svg"
		case e.Name.Local == "g" && attr(e, "class") == "panel":
			panel = attr(e, "data-handover")
		case e.Name.Local == "g" && attr(e, "class") == "lane":
			lanes[panel] = append(lanes[panel], attr(e, "data-instance"))
		}
	}
	if !root {
		return nil, errors.New("no svg root element in the SVG namespace")
	}
	return lanes, nil
}

func TestConsoleProgress(t *testing.T) {
	var b bytes.Buffer
	c := &console{w: &b, tty: true}
	c.progress("p1")
	c.say("line")
	c.progress("p2")
	c.endProgress()
	if want := "\r\033[Kp1\r\033[Kline\np1\r\033[Kp2\r\033[K"; b.String() != want {
		t.Errorf("terminal output %q, want %q", b.String(), want)
	}
	b.Reset()
	c = &console{w: &b}
	c.progress("p1")
	c.say("line")
	c.endProgress()
	if want := "p1\nline\n"; b.String() != want {
		t.Errorf("plain output %q, want %q", b.String(), want)
	}
}
