package testruntime

import (
	"github.com/nri-handover/nri/api"
	"github.com/nri-handover/nri/test/plugins/record"
)

// SeqAnnotation is stamped into the pod and container sent with every event
// (never into the runtime's own state), so a plugin can tell which dispatch it
// handled.
const SeqAnnotation = record.SeqAnnotation

// Event is one dispatch of an event to the adaptation.
type Event struct {
	Seq       uint64
	Event     api.Event
	Pod       string
	Container string
	// Err is what the adaptation returned for this dispatch.
	Err error
}

// Name returns the event's enum name, e.g. "CREATE_CONTAINER".
func (e Event) Name() string { return e.Event.String() }

// SeqOf returns the sequence number stamped into annotations, or 0.
func SeqOf(annotations map[string]string) uint64 { return record.SeqOf(annotations) }

// Record returns a copy of every event dispatched so far, in dispatch order.
func (r *Runtime) Record() []Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Event(nil), r.record...)
}

// LastSeq returns the sequence number of the latest dispatch (0 if none).
func (r *Runtime) LastSeq() uint64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.seq
}

// begin assigns the next sequence number to an event and records it.
func (r *Runtime) begin(ev api.Event, pod, ctr string) (uint64, int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.seq++
	r.record = append(r.record, Event{Seq: r.seq, Event: ev, Pod: pod, Container: ctr})
	return r.seq, len(r.record) - 1
}

// finish stores the adaptation's verdict on a recorded dispatch.
func (r *Runtime) finish(slot int, err error) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.record[slot].Err = err
	return err
}
