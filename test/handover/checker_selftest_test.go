package handover_test

import (
	"slices"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/nri-handover/nri/api"
	"github.com/nri-handover/nri/test/plugins/record"
	testruntime "github.com/nri-handover/nri/test/runtime"
)

// The checker must be able to fail: each corruption below is a way a broken
// switch would show in the records, applied to a correct synthetic run.

// synthRun is a correct run of 20 events: A handles 1..10, then B, started
// after seq 3 and synchronized with A named as predecessor, handles 11..20.
// Connection 1 is A's, 2 is B's.
func synthRun() runInput {
	in := runInput{ConnsInOrder: true}
	for s := uint64(1); s <= 20; s++ {
		in.Events = append(in.Events, testruntime.Event{Seq: s, Event: api.Event_RUN_POD_SANDBOX, Pod: "pod"})
	}
	a := instRecord{ID: "A", ActiveBy: []uint64{0}, Lines: []record.Line{
		{Ev: record.Synchronize, Detail: "kind=full"},
		{Ev: record.RoleChange, Detail: "role=ACTIVE"},
	}}
	b := instRecord{ID: "B", StartedAfter: 3, ActiveBy: []uint64{12}, Lines: []record.Line{
		{Ev: record.Synchronize, Detail: "kind=full;pred=A"},
		{Ev: record.Synchronize, Detail: "kind=delta"},
	}}
	for s := uint64(1); s <= 10; s++ {
		a.Lines = append(a.Lines, evLine(s))
		in.Sends = append(in.Sends, wireSend{Conn: 1, Method: "RunPodSandbox", Seq: s, Done: true})
	}
	a.Lines = append(a.Lines, record.Line{Ev: record.Shutdown, Detail: "reason=SHUTDOWN_REASON_SUPERSEDED;succ=B"})
	in.Sends = append(in.Sends, wireSend{Conn: 1, Method: "Shutdown", Detail: "SHUTDOWN_REASON_SUPERSEDED", Done: true})
	b.Lines = append(b.Lines, record.Line{Ev: record.RoleChange, Detail: "role=ACTIVE;peer=A"})
	for s := uint64(11); s <= 20; s++ {
		b.Lines = append(b.Lines, evLine(s))
		in.Sends = append(in.Sends, wireSend{Conn: 2, Method: "RunPodSandbox", Seq: s, Done: true})
	}
	in.Instances = []instRecord{a, b}
	return in
}

func evLine(seq uint64) record.Line { return record.Line{Ev: "RunPodSandbox", Pod: "pod", Seq: seq} }

// withoutSeq drops an event line from a record.
func withoutSeq(lines []record.Line, seq uint64) []record.Line {
	return slices.DeleteFunc(slices.Clone(lines), func(l record.Line) bool { return isEvent(l.Ev) && l.Seq == seq })
}

// insertBefore puts l before the first line of kind ev (at the end if none).
func insertBefore(lines []record.Line, ev string, l record.Line) []record.Line {
	i := slices.IndexFunc(lines, func(x record.Line) bool { return x.Ev == ev })
	if i < 0 {
		i = len(lines)
	}
	return slices.Insert(slices.Clone(lines), i, l)
}

// withoutSend drops the sends of one seq to one connection.
func withoutSend(sends []wireSend, conn int, seq uint64) []wireSend {
	return slices.DeleteFunc(slices.Clone(sends), func(s wireSend) bool { return s.Conn == conn && s.Seq == seq })
}

// reactivationRun: with a standby grace, B takes over at 11, dies after
// handling 14 (15 was sent to it and lost), and A is reactivated for 16..20.
func reactivationRun() runInput {
	in := synthRun()
	in.StrictReactivation = true
	a, b := &in.Instances[0], &in.Instances[1]
	a.Lines = slices.DeleteFunc(a.Lines, func(l record.Line) bool { return l.Ev == record.Shutdown })
	a.Lines = append(a.Lines, record.Line{Ev: record.RoleChange, Detail: "role=STANDBY;peer=B"},
		record.Line{Ev: record.Synchronize, Detail: "kind=full;pred=B;react=true"},
		record.Line{Ev: record.RoleChange, Detail: "role=ACTIVE;peer=B"})
	in.Sends = slices.DeleteFunc(in.Sends, func(s wireSend) bool { return s.Method == "Shutdown" })
	for s := uint64(16); s <= 20; s++ {
		b.Lines = withoutSeq(b.Lines, s)
		in.Sends = withoutSend(in.Sends, 2, s)
		a.Lines = append(a.Lines, evLine(s))
		in.Sends = append(in.Sends, wireSend{Conn: 1, Method: "RunPodSandbox", Seq: s, Done: true})
	}
	b.Lines = withoutSeq(b.Lines, 15)
	b.Died = true
	a.ActiveBy = append(a.ActiveBy, 16)
	return in
}

var _ = Describe("The exactly-once checker", Label("checker"), func() {
	It("accepts a correct run", func() {
		v := checkExactlyOnce(synthRun())
		Expect(v.Violations).To(BeEmpty(), v.String())
		Expect(v.Owned).To(Equal(20))
		Expect(v.Switches).To(Equal(1))
	})

	It("accepts a dying instance losing its last event, and the gap until the next commit", func() {
		in := synthRun()
		for s := uint64(15); s <= 20; s++ {
			in.Instances[1].Lines = withoutSeq(in.Instances[1].Lines, s)
			if s > 15 {
				in.Sends = withoutSend(in.Sends, 2, s)
			}
		}
		in.Instances[1].Died = true
		v := checkExactlyOnce(in)
		Expect(v.Violations).To(BeEmpty(), v.String())
		Expect(v.Lost).To(Equal(1))
		Expect(v.Absent).To(Equal(5))
	})

	It("accepts a gap after a successor that died before handling anything", func() {
		in := synthRun()
		b := &in.Instances[1]
		for s := uint64(11); s <= 20; s++ {
			b.Lines = withoutSeq(b.Lines, s)
			in.Sends = withoutSend(in.Sends, 2, s)
		}
		b.Died = true
		in.Instances[0].Lines[len(in.Instances[0].Lines)-1].Detail = "reason=SHUTDOWN_REASON_SUPERSEDED;succ=B"
		v := checkExactlyOnce(in)
		Expect(v.Violations).To(BeEmpty(), v.String())
		Expect(v.Absent).To(Equal(10))

		By("but not when that successor is alive")
		b.Died = false
		v = checkExactlyOnce(in)
		Expect(v.Violations).To(ContainElement(ContainSubstring("which did not die")), v.String())
	})

	It("accepts a standby reactivated without a gap", func() {
		v := checkExactlyOnce(reactivationRun())
		Expect(v.Violations).To(BeEmpty(), v.String())
		Expect(v.Lost).To(Equal(1))
		Expect(v.Switches).To(Equal(2))
	})

	It("accepts a successor taking over from a reactivated standby that had handled nothing yet", func() {
		// As reactivationRun, but C takes over from the reactivated A
		// before A handled an event: owners go from B straight to C, and
		// C names A as its predecessor.
		in := reactivationRun()
		a := &in.Instances[0]
		c := instRecord{ID: "C", StartedAfter: 15, ActiveBy: []uint64{16}, Lines: []record.Line{
			{Ev: record.Synchronize, Detail: "kind=full;pred=A"},
			{Ev: record.RoleChange, Detail: "role=ACTIVE"},
		}}
		for s := uint64(16); s <= 20; s++ {
			a.Lines = withoutSeq(a.Lines, s)
			in.Sends = withoutSend(in.Sends, 1, s)
			c.Lines = append(c.Lines, evLine(s))
			in.Sends = append(in.Sends, wireSend{Conn: 3, Method: "RunPodSandbox", Seq: s, Done: true})
		}
		a.ActiveBy = a.ActiveBy[:1]
		a.Lines = append(a.Lines, record.Line{Ev: record.RoleChange, Detail: "role=STANDBY;peer=C"})
		in.Instances = append(in.Instances, c)
		v := checkExactlyOnce(in)
		Expect(v.Violations).To(BeEmpty(), v.String())

		By("but not when C names an instance that was never reactivated")
		in.Instances[2].Lines[0].Detail = "kind=full;pred=X"
		v = checkExactlyOnce(in)
		Expect(v.Violations).To(ContainElement(ContainSubstring(`named "X" as its predecessor`)), v.String())
	})

	DescribeTable("rejects a corrupted run",
		func(corrupt func(*runInput), want string) {
			in := synthRun()
			corrupt(&in)
			v := checkExactlyOnce(in)
			Expect(v.Violations).To(ContainElement(ContainSubstring(want)), v.String())
		},
		Entry("one event delivered to both instances (a broken switch)", func(in *runInput) {
			in.Instances[0].Lines = insertBefore(in.Instances[0].Lines, record.Shutdown, evLine(11))
			in.Sends = append(in.Sends, wireSend{Conn: 1, Method: "RunPodSandbox", Seq: 11, Done: true})
		}, "handled by 2 instances"),
		Entry("the runtime sending one event to two connections", func(in *runInput) {
			in.Sends = append(in.Sends, wireSend{Conn: 1, Method: "RunPodSandbox", Seq: 12, Done: true})
		}, "to 2 connections"),
		Entry("the runtime sending an event after Shutdown", func(in *runInput) {
			in.Sends = append(in.Sends, wireSend{Conn: 1, Method: "RunPodSandbox", Seq: 13, Done: true})
		}, "after its Shutdown"),
		Entry("a live instance missing an event sent to it", func(in *runInput) {
			in.Instances[1].Lines = withoutSeq(in.Instances[1].Lines, 15)
		}, "alive and has no record"),
		Entry("an event nobody got while the active instance lived (plugin records only)", func(in *runInput) {
			in.Sends = nil
			in.Instances[1].Lines = withoutSeq(in.Instances[1].Lines, 15)
		}, "which did not die"),
		Entry("an event recorded by an instance it was not sent to", func(in *runInput) {
			in.Sends = withoutSend(in.Sends, 2, 16)
			in.Sends = append(in.Sends, wireSend{Conn: 3, Method: "RunPodSandbox", Seq: 16, Done: true})
		}, "not to its connection"),
		Entry("events going back to the superseded instance", func(in *runInput) {
			in.Instances[1].Lines = withoutSeq(in.Instances[1].Lines, 18)
			in.Sends = withoutSend(in.Sends, 2, 18)
			in.Instances[0].Lines = append(in.Instances[0].Lines, evLine(18))
			in.Sends = append(in.Sends[:10:10], append([]wireSend{{Conn: 1, Method: "RunPodSandbox", Seq: 18}}, in.Sends[10:]...)...)
		}, "went back"),
		Entry("an event handled after Shutdown", func(in *runInput) {
			in.Instances[0].Lines = append(in.Instances[0].Lines, evLine(11))
		}, "after it was told to shut down"),
		Entry("an event handled before Synchronize", func(in *runInput) {
			lines := in.Instances[1].Lines
			in.Instances[1].Lines = append(slices.Clone(lines[2:]), lines[:2]...)
		}, "before it was synchronized"),
		Entry("an event handled before the instance was told it is active", func(in *runInput) {
			b := &in.Instances[1]
			i := slices.IndexFunc(b.Lines, func(l record.Line) bool { return l.Ev == record.RoleChange })
			role := b.Lines[i]
			b.Lines = slices.Insert(slices.Delete(b.Lines, i, i+1), i+1, role)
		}, "before it was told it is active"),
		Entry("an event handled twice by one instance", func(in *runInput) {
			in.Instances[1].Lines = append(in.Instances[1].Lines, evLine(20))
		}, "twice"),
		Entry("an event the runtime never dispatched", func(in *runInput) {
			in.Instances[1].Lines = append(in.Instances[1].Lines, evLine(99))
		}, "never dispatched"),
		Entry("an event dispatched before the instance existed, not held for its switch", func(in *runInput) {
			// B handles 11, begun before it started; A handles the later 12.
			in.Instances[1].StartedAfter = 12
			in.Instances[1].Lines = withoutSeq(in.Instances[1].Lines, 12)
			in.Instances[0].Lines = insertBefore(in.Instances[0].Lines, record.Shutdown, evLine(12))
		}, "before the instance was started"),
		Entry("an older instance handling events after the newer was confirmed active", func(in *runInput) {
			in.Instances[1].ActiveBy = []uint64{5}
		}, "after the newer"),
		Entry("a successor naming the wrong predecessor", func(in *runInput) {
			in.Instances[1].Lines[0].Detail = "kind=full;pred=Z"
		}, "as its predecessor"),
		Entry("events before any instance was active (plugin records only)", func(in *runInput) {
			in.Sends = nil
			in.Instances[0].Lines = withoutSeq(in.Instances[0].Lines, 1)
		}, "before any instance was active"),
		Entry("role messages to one instance overlapping", func(in *runInput) {
			in.Sends = append(in.Sends,
				wireSend{Conn: 2, Method: "RoleChange", Detail: "PLUGIN_ROLE_ACTIVE", Begin: 100},
				wireSend{Conn: 2, Method: "RoleChange", Detail: "PLUGIN_ROLE_STANDBY", Begin: 101, End: 102, Done: true})
		}, "still in flight"),
		Entry("a failed runtime event", func(in *runInput) {
			in.Events[4].Err = errTest
		}, "failed"),
	)

	It("accepts, while a standby is reactivated, only the rest of the operation in progress", func() {
		in := reactivationRun()
		// seq 15 (lost with B) was a CreateContainer; 16 its PostCreateContainer.
		in.Events[14].Event, in.Events[14].Container = api.Event_CREATE_CONTAINER, "ctr"
		in.Events[15].Event, in.Events[15].Container = api.Event_POST_CREATE_CONTAINER, "ctr"
		in.Instances[0].Lines = withoutSeq(in.Instances[0].Lines, 16)
		in.Sends = withoutSend(in.Sends, 1, 16)
		in.Sends = slices.DeleteFunc(in.Sends, func(s wireSend) bool { return s.Seq == 15 })
		in.Sends = append(in.Sends, wireSend{Conn: 2, Method: "CreateContainer", Seq: 15})
		v := checkExactlyOnce(in)
		Expect(v.Violations).To(BeEmpty(), v.String())
		Expect(v.Absent).To(Equal(1))
	})

	It("rejects a gap while a standby is reactivated when that is promised", func() {
		in := reactivationRun()
		in.Instances[0].Lines = withoutSeq(in.Instances[0].Lines, 16)
		in.Sends = withoutSend(in.Sends, 1, 16)
		v := checkExactlyOnce(in)
		Expect(v.Violations).To(ContainElement(ContainSubstring("while standby")), v.String())
	})

	It("rejects a standby handling events", func() {
		in := reactivationRun()
		a := &in.Instances[0]
		i := slices.IndexFunc(a.Lines, func(l record.Line) bool { return l.Ev == record.Synchronize && l.Detail != "kind=full" })
		a.Lines = slices.Insert(a.Lines, i, evLine(14))
		v := checkExactlyOnce(in)
		Expect(v.Violations).To(ContainElement(ContainSubstring("while it was a standby")), v.String())
	})
})

type testErr struct{}

func (testErr) Error() string { return "injected" }

var errTest error = testErr{}
