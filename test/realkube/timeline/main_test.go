package main

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// base is the synthetic records' epoch; at(d) a time d seconds after it.
const base = 1796400000.0

func at(d float64) string { return fmt.Sprintf("%.6f", base+d) }

// records writes a small rollout of scenario s1 (v1 pod a, v2 pod b,
// containerd switching from a to b, a load pod failing meanwhile) and
// returns the ev dir and containerd's log.
func records(t *testing.T) (string, string) {
	dir := t.TempDir()
	files := map[string]string{
		"s1.pods": at(-0.1) + " nri-annotator-aaaaa 1 uid-a True del=\n" +
			at(3) + " nri-annotator-bbbbb 2 uid-b  del=\n" + // no Ready condition yet
			at(3.2) + " nri-annotator-bbbbb 2 uid-b False del=\n" +
			at(5) + " nri-annotator-bbbbb 2 uid-b True del=\n" +
			at(5.5) + " nri-annotator-aaaaa 1 uid-a False del=2026-12-04T18:41:45Z\n" +
			at(6) + " nri-annotator-aaaaa 1 uid-a False del=2026-12-04T18:41:45Z\n",
		"s1.ds": at(0.1) + " 1  1 1 1\n" + at(5.6) + "   1 1 1\n" + at(6.5) + " 1  1 1 1\n",
		"s1.load": at(1) + " load-s1-1 ok c1\n" + at(4) + " load-s1-2 FAILED none\n" +
			at(7) + " load-s1-3 ok c3\n" + at(7.5) + " load-s1-4 ok c4\n",
		"s1.marks": at(0) + " start\n" + at(2) + " patch v2\n" + at(3.5) + " kill -9 active pid 42\n" +
			at(6.2) + " rollout done rc=0 4.2s\n" + at(8) + " stop\n",
		"inspect/c1.json": `{"annotations": {"annotator.nri-handover.io/handled-by": "v1/uid-a"}}`,
		"inspect/c3.json": `{"a": {"annotator.nri-handover.io/handled-by": "v2/uid-b"}, "b": {"annotator.nri-handover.io/handled-by": "v2/uid-b"}}`,
	}
	for name, text := range files {
		write(t, filepath.Join(dir, name), text)
	}
	ts := func(d float64) string { return time.Unix(0, int64((base+d)*1e9)).UTC().Format(time.RFC3339Nano) }
	log := filepath.Join(dir, "containerd.log")
	write(t, log, `time="2026-12-04T18:41:40.1Z" level=info msg="starting containerd" revision= version=v2.4.2`+"\n"+
		`time="`+ts(4.5)+`" level=info msg="plugin 10-annotator version v1 instance uid-a generation 1 superseded by 10-annotator version v2 instance uid-b generation 2"`+"\n"+
		`time="`+ts(5.2)+`" level=info msg="plugin 10-annotator version v1 instance uid-a generation 1 reactivated after 10-annotator version v2 instance uid-b generation 2 left"`+"\n"+
		`time="`+ts(5.4)+`" level=info msg="plugin 10-annotator version v1 instance uid-a generation 1 superseded by 10-annotator version v2 instance uid-b generation 2"`+"\n")
	return dir, log
}

func write(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestTimeline(t *testing.T) {
	dir, log := records(t)
	var out bytes.Buffer
	if err := run([]string{"-ev", dir, "-containerd-log", log, "-scenarios", "s1", "-titles", "s1=Rollout v1→v2 <&>"}, &out); err != nil {
		t.Fatal(err)
	}
	svg := out.String()

	// It parses, and each load pod's tick is in the lane it belongs to.
	if p := os.Getenv("TIMELINE_OUT"); p != "" { // to look at it
		write(t, p, svg)
	}
	tickLane := map[string]string{}
	var active []string
	d := xml.NewDecoder(strings.NewReader(svg))
	var lanes []string
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("the SVG does not parse: %v", err)
		}
		switch e := tok.(type) {
		case xml.StartElement:
			a := map[string]string{}
			for _, at := range e.Attr {
				a[at.Name.Local] = at.Value
			}
			if e.Name.Local == "g" {
				lanes = append(lanes, a["data-lane"])
			}
			if a["class"] == "active" {
				active = append(active, a["data-instance"])
			}
			if a["class"] == "load" {
				tickLane[a["data-pod"]] = lanes[len(lanes)-1]
				if (a["data-ok"] == "false") != (a["fill"] == lossColor) {
					t.Errorf("tick of %s: ok %s, fill %s", a["data-pod"], a["data-ok"], a["fill"])
				}
			}
		case xml.EndElement:
			if e.Name.Local == "g" {
				lanes = lanes[:len(lanes)-1]
			}
		}
	}
	want := map[string]string{"load-s1-1": "nri-annotator-aaaaa", "load-s1-2": "load pods", "load-s1-3": "nri-annotator-bbbbb", "load-s1-4": "load pods"}
	for pod, lane := range want {
		if tickLane[pod] != lane {
			t.Errorf("%s's tick is in lane %q, want %q", pod, tickLane[pod], lane)
		}
	}
	if got := strings.Join(active, " "); got != "uid-a uid-b uid-a uid-b" {
		t.Errorf("active in containerd: %s, want uid-a uid-b uid-a uid-b", got)
	}
	for _, s := range []string{
		"nri-annotator-aaaaa", "nri-annotator-bbbbb", "gen 2", "Rollout v1→v2 &lt;&amp;&gt;",
		`class="switch"`, "10-annotator switched to nri-annotator-bbbbb v2 gen 2 from nri-annotator-aaaaa v1",
		"10-annotator reactivated nri-annotator-aaaaa v1 gen 1 after nri-annotator-bbbbb v2 left",
		`class="active" data-instance="uid-a" fill="` + palette[0], `class="active" data-instance="uid-b" fill="` + palette[1],
		`data-pod="load-s1-2" data-ok="false"`, `class="kill"`, `class="unavailable"`,
		"4 load pods, 1 FAILED, 0 CreateContainer calls failed; at most 2 plugin pods Ready at once; lowest numberAvailable 0",
	} {
		if !strings.Contains(svg, s) {
			t.Errorf("the SVG lacks %q", s)
		}
	}
	if t.Failed() {
		t.Log(svg)
	}
}

func TestBadInput(t *testing.T) {
	for _, c := range []struct{ file, text, want string }{
		{"s1.pods", at(0) + " nri-annotator-aaaaa 1 uid-a True del=\ngarbage\n", "s1.pods:2: want 6 fields"},
		{"s1.load", at(1) + " load-s1-1 maybe c1\n", "s1.load:1: third field \"maybe\""},
		{"s1.ds", at(1) + " x 0 1 1 1\n", "s1.ds:1: available \"x\""},
		{"s1.marks", "soon start\n", "s1.marks:1: time \"soon\""},
		{"s1.marks", at(1) + " patch v2\n", "s1.marks: no start mark"},
		{"containerd.log", `time="x" msg="plugin p superseded by q"` + "\n", "containerd.log:1: parsing time"},
		{"containerd.log", `time="2026-12-04T18:41:40.1Z" msg="plugin superseded by "` + "\n", "containerd.log:1: msg"},
		{"containerd.log", `time="2026-12-04T18:41:40.1Z" msg="plugin x reactivated after y"` + "\n", "containerd.log:1: msg"},
		{"s1.load", "", ""},
	} {
		dir, log := records(t)
		write(t, filepath.Join(dir, c.file), c.text)
		err := run([]string{"-ev", dir, "-containerd-log", log, "-scenarios", "s1", "-o", filepath.Join(dir, "out.svg")}, io.Discard)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s %q: %v", c.file, c.text, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s %q: error %v, want one with %q", c.file, c.text, err, c.want)
		}
	}
}

// The kill switch rolled out: containerd names the successor and says it
// does not use handover; the switch is a takeover like any other.
func TestTakeoverWithoutHandover(t *testing.T) {
	log := filepath.Join(t.TempDir(), "containerd.log")
	write(t, log, `time="2026-12-07T02:19:19.989108780Z" level=info msg="plugin 50-annotator version v1 instance uid-a generation 5 superseded by 50-annotator version v1 instance uid-b generation 6, which does not use handover: its successors join beside it as upstream's plugins do"`+"\n")
	tks, err := readTakeovers(log)
	if err != nil {
		t.Fatal(err)
	}
	if len(tks) != 1 || tks[0].from != "uid-a" || tks[0].instance != "uid-b" || tks[0].gen != "6" {
		t.Fatalf("takeovers %+v, want one from uid-a to uid-b generation 6", tks)
	}
}

// A standby is active again whether its successor left or failed to join
// (the runtime says which): both lines are the same reactivation.
func TestReactivationEitherWay(t *testing.T) {
	for _, why := range []string{"left", "failed to join"} {
		log := filepath.Join(t.TempDir(), "containerd.log")
		write(t, log, `time="2026-12-07T05:01:21.166Z" level=info msg="plugin 40-cpu-annotator version v1 instance pod-a generation 1 reactivated after 40-cpu-annotator version v2 instance pod-b generation 2 `+why+`"`+"\n")
		tks, err := readTakeovers(log)
		if err != nil {
			t.Fatal(err)
		}
		if len(tks) != 1 || !tks[0].reactivated || tks[0].instance != "pod-a" || tks[0].from != "pod-b" || tks[0].fromVersion != "v2" {
			t.Fatalf("%s: takeovers %+v, want pod-a reactivated after pod-b", why, tks)
		}
	}
}
