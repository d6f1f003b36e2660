package harness

import (
	"testing"

	"github.com/nri-handover/nri/api"
	"github.com/nri-handover/nri/test/plugins/record"
	testruntime "github.com/nri-handover/nri/test/runtime"
)

func TestCheckExactlyOnce(t *testing.T) {
	dispatched := []testruntime.Event{
		{Seq: 1, Event: api.Event_RUN_POD_SANDBOX, Pod: "pod"},
		{Seq: 2, Event: api.Event_CREATE_CONTAINER, Pod: "pod", Container: "c"},
		{Seq: 3, Event: api.Event_START_CONTAINER, Pod: "pod", Container: "c"},
	}
	line := func(inst string, seq uint64) record.Line {
		return record.Line{Ev: "X", Name: "p", Instance: inst, Seq: seq}
	}
	for _, tc := range []struct {
		name    string
		lines   []record.Line
		missing func(uint64) bool
		ok      bool
	}{
		{"each once", []record.Line{line("a", 1), line("a", 2), line("b", 3)}, nil, true},
		{"one twice", []record.Line{line("a", 1), line("a", 2), line("b", 2), line("b", 3)}, nil, false},
		{"one missing", []record.Line{line("a", 1), line("b", 3)}, nil, false},
		{"missing excused", []record.Line{line("a", 1), line("b", 3)}, func(s uint64) bool { return s == 2 }, true},
		{"other plugins ignored", []record.Line{line("a", 1), line("a", 2), line("a", 3),
			{Ev: "X", Name: "q", Seq: 2}}, nil, true},
	} {
		err := CheckExactlyOnce(Deliveries(dispatched, tc.lines, "p", nil), tc.missing)
		if (err == nil) != tc.ok {
			t.Errorf("%s: got %v, want ok=%v", tc.name, err, tc.ok)
		}
	}
}
