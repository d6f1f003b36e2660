package record

import (
	"path/filepath"
	"testing"
)

func TestRecordRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "rec")
	a, err := Open(path, Line{Name: "a", Idx: "10", Pid: 1})
	if err != nil {
		t.Fatal(err)
	}
	b, err := Open(path, Line{Name: "b", Idx: "20", Pid: 2})
	if err != nil {
		t.Fatal(err)
	}
	a.Add(Line{Ev: "CreateContainer", Ctr: "c", Seq: 3})
	b.Add(Line{Ev: Synchronize, Pods: 1, Ctrs: 2, Name: "ignored"})

	lines, err := Read(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(lines) != 2 {
		t.Fatalf("got %d lines, want 2: %v", len(lines), lines)
	}
	if l := lines[0]; l.Name != "a" || l.Seq != 3 || l.Ctr != "c" || !IsEvent(l.Ev) {
		t.Errorf("first line: %+v", l)
	}
	if l := lines[1]; l.Name != "b" || l.Ctrs != 2 || IsEvent(l.Ev) {
		t.Errorf("second line: %+v", l)
	}
}

func TestParseIgnoresTornLastLine(t *testing.T) {
	lines, err := Parse([]byte("{\"ev\":\"Exit\",\"name\":\"a\",\"idx\":\"1\",\"pid\":1}\n{\"ev\":\"Cre"))
	if err != nil || len(lines) != 1 {
		t.Fatalf("got %v, %v; want one line", lines, err)
	}
}

func TestSeqOf(t *testing.T) {
	for in, want := range map[string]uint64{"": 0, "x": 0, "42": 42} {
		if got := SeqOf(map[string]string{SeqAnnotation: in}); got != want {
			t.Errorf("SeqOf(%q) = %d, want %d", in, got, want)
		}
	}
}
