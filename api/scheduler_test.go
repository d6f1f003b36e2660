package api

import (
	"reflect"
	"testing"

	rspec "github.com/opencontainers/runtime-spec/specs-go"
	"google.golang.org/protobuf/proto"
)

func TestSchedulerPolicyConversion(t *testing.T) {
	for _, tc := range []struct {
		oci    rspec.LinuxSchedulerPolicy
		policy LinuxSchedulerPolicy
		back   rspec.LinuxSchedulerPolicy
	}{
		{"", LinuxSchedulerPolicy_SCHED_NONE, ""},
		{rspec.SchedOther, LinuxSchedulerPolicy_SCHED_OTHER, rspec.SchedOther},
		{rspec.SchedFIFO, LinuxSchedulerPolicy_SCHED_FIFO, rspec.SchedFIFO},
		{rspec.SchedRR, LinuxSchedulerPolicy_SCHED_RR, rspec.SchedRR},
		{rspec.SchedBatch, LinuxSchedulerPolicy_SCHED_BATCH, rspec.SchedBatch},
		{rspec.SchedISO, LinuxSchedulerPolicy_SCHED_ISO, rspec.SchedISO},
		{rspec.SchedIdle, LinuxSchedulerPolicy_SCHED_IDLE, rspec.SchedIdle},
		{rspec.SchedDeadline, LinuxSchedulerPolicy_SCHED_DEADLINE, rspec.SchedDeadline},
		{"SCHED_BOGUS", LinuxSchedulerPolicy_SCHED_NONE, ""},
	} {
		p := FromOCISchedulerPolicy(tc.oci)
		if p != tc.policy || p.ToOCI() != tc.back {
			t.Errorf("%q -> %v -> %q; want %v, %q", tc.oci, p, p.ToOCI(), tc.policy, tc.back)
		}
	}
}

func TestSchedulerFlagsConversion(t *testing.T) {
	for _, tc := range []struct {
		oci   []rspec.LinuxSchedulerFlag
		flags []LinuxSchedulerFlag
	}{
		{nil, nil},
		{[]rspec.LinuxSchedulerFlag{}, []LinuxSchedulerFlag{}},
		{
			[]rspec.LinuxSchedulerFlag{rspec.SchedFlagResetOnFork, rspec.SchedFlagUtilClampMax},
			[]LinuxSchedulerFlag{LinuxSchedulerFlag_SCHED_FLAG_RESET_ON_FORK, LinuxSchedulerFlag_SCHED_FLAG_UTIL_CLAMP_MAX},
		},
	} {
		got := FromOCILinuxSchedulerFlags(tc.oci)
		if !reflect.DeepEqual(got, tc.flags) {
			t.Errorf("FromOCILinuxSchedulerFlags(%v) = %v, want %v", tc.oci, got, tc.flags)
		}
		if back := ToOCILinuxSchedulerFlags(got); !reflect.DeepEqual(back, tc.oci) {
			t.Errorf("ToOCILinuxSchedulerFlags(%v) = %v, want %v", got, back, tc.oci)
		}
	}
}

func TestLinuxSchedulerConversion(t *testing.T) {
	oci := &rspec.Scheduler{
		Policy: rspec.SchedDeadline, Nice: -5, Priority: 3,
		Flags:   []rspec.LinuxSchedulerFlag{rspec.SchedFlagReclaim},
		Runtime: 1, Deadline: 2, Period: 3,
	}
	want := &LinuxScheduler{
		Policy: LinuxSchedulerPolicy_SCHED_DEADLINE, Nice: -5, Priority: 3,
		Flags:   []LinuxSchedulerFlag{LinuxSchedulerFlag_SCHED_FLAG_RECLAIM},
		Runtime: 1, Deadline: 2, Period: 3,
	}
	got := FromOCILinuxScheduler(oci)
	if !proto.Equal(got, want) {
		t.Errorf("FromOCILinuxScheduler = %v, want %v", got, want)
	}
	if back := got.ToOCI(); !reflect.DeepEqual(back, oci) {
		t.Errorf("ToOCI = %+v, want %+v", back, oci)
	}
	for name, s := range map[string]*LinuxScheduler{
		"nil":       nil,
		"no policy": {Nice: 3},
	} {
		if s.ToOCI() != nil {
			t.Errorf("%s scheduler should convert to nil", name)
		}
	}
	if FromOCILinuxScheduler(nil) != nil {
		t.Error("nil OCI scheduler should give nil")
	}
}
