package harness

import (
	"fmt"
	"sort"
	"strings"

	"github.com/nri-handover/nri/test/plugins/record"
	testruntime "github.com/nri-handover/nri/test/runtime"
)

// Handlers indexes the record by dispatch: for each sequence number, the
// instances of plugin name that handled it, in record order. An instance is
// named by its instance id, or "pid:N" when it has none.
func Handlers(lines []record.Line, name string) map[uint64][]string {
	out := map[uint64][]string{}
	for _, l := range lines {
		if l.Name != name || l.Seq == 0 || !record.IsEvent(l.Ev) || l.Err != "" {
			continue
		}
		out[l.Seq] = append(out[l.Seq], instanceOf(l))
	}
	return out
}

func instanceOf(l record.Line) string {
	if l.Instance != "" {
		return l.Instance
	}
	return fmt.Sprintf("pid:%d", l.Pid)
}

// Delivery is how one dispatched event reached a plugin.
type Delivery struct {
	Event    testruntime.Event
	Handlers []string
}

// Deliveries pairs every successful dispatch with the instances of plugin
// name that handled it (only events the plugin subscribes to, per want).
func Deliveries(dispatched []testruntime.Event, lines []record.Line, name string, want func(testruntime.Event) bool) []Delivery {
	h := Handlers(lines, name)
	var out []Delivery
	for _, d := range dispatched {
		if d.Err != nil || (want != nil && !want(d)) {
			continue
		}
		out = append(out, Delivery{Event: d, Handlers: h[d.Seq]})
	}
	return out
}

// CheckExactlyOnce returns an error naming every delivery that was handled
// by no instance or by more than one; missing(seq) may excuse a dispatch
// that fell into a documented absence window.
func CheckExactlyOnce(ds []Delivery, missing func(seq uint64) bool) error {
	var bad []string
	for _, d := range ds {
		switch {
		case len(d.Handlers) == 1:
		case len(d.Handlers) == 0 && missing != nil && missing(d.Event.Seq):
		default:
			hs := append([]string(nil), d.Handlers...)
			sort.Strings(hs)
			bad = append(bad, fmt.Sprintf("seq %d %s %s/%s handled by %v",
				d.Event.Seq, d.Event.Name(), d.Event.Pod, d.Event.Container, hs))
		}
	}
	if len(bad) > 0 {
		return fmt.Errorf("%d events not handled exactly once:\n  %s", len(bad), strings.Join(bad, "\n  "))
	}
	return nil
}
