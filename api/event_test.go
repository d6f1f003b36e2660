package api

import (
	"strings"
	"testing"
)

func maskOf(events ...Event) EventMask {
	var m EventMask
	m.Set(events...)
	return m
}

func TestParseEventMask(t *testing.T) {
	podEvents := maskOf(Event_RUN_POD_SANDBOX, Event_UPDATE_POD_SANDBOX, Event_POST_UPDATE_POD_SANDBOX,
		Event_STOP_POD_SANDBOX, Event_REMOVE_POD_SANDBOX)
	ctrEvents := maskOf(Event_CREATE_CONTAINER, Event_POST_CREATE_CONTAINER, Event_START_CONTAINER,
		Event_POST_START_CONTAINER, Event_UPDATE_CONTAINER, Event_POST_UPDATE_CONTAINER,
		Event_STOP_CONTAINER, Event_REMOVE_CONTAINER, Event_VALIDATE_CONTAINER_ADJUSTMENT)

	for _, tc := range []struct {
		name    string
		in      []string
		want    EventMask
		errPart string
	}{
		{name: "none", in: nil, want: 0},
		{name: "single", in: []string{"CreateContainer"}, want: maskOf(Event_CREATE_CONTAINER)},
		{name: "case-insensitive", in: []string{"createcontainer,STOPCONTAINER"}, want: maskOf(Event_CREATE_CONTAINER, Event_STOP_CONTAINER)},
		{name: "several args", in: []string{"RunPodSandbox", "RemoveContainer"}, want: maskOf(Event_RUN_POD_SANDBOX, Event_REMOVE_CONTAINER)},
		{name: "spaces", in: []string{" RunPodSandbox , StopPodSandbox"}, want: maskOf(Event_RUN_POD_SANDBOX, Event_STOP_POD_SANDBOX)},
		{name: "all", in: []string{"all"}, want: ValidEvents},
		{name: "pod", in: []string{"pod"}, want: podEvents},
		{name: "podsandbox", in: []string{"PodSandbox"}, want: podEvents},
		{name: "container", in: []string{"container"}, want: ctrEvents},
		{name: "pod+container=all", in: []string{"pod,container"}, want: ValidEvents},
		{name: "validate", in: []string{"ValidateContainerAdjustment"}, want: maskOf(Event_VALIDATE_CONTAINER_ADJUSTMENT)},
		{name: "unknown", in: []string{"CreateContainer,Bogus"}, errPart: `"bogus"`},
		{name: "empty item", in: []string{"CreateContainer,"}, errPart: `""`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseEventMask(tc.in...)
			if tc.errPart != "" {
				if err == nil || !strings.Contains(err.Error(), tc.errPart) {
					t.Fatalf("error %v, want one containing %s", err, tc.errPart)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("got %s (%v), want %s", got.PrettyString(), err, tc.want.PrettyString())
			}
		})
	}
}

func TestValidEventsCoversEveryNamedEvent(t *testing.T) {
	if len(EventPrettyNames) != int(Event_LAST)-1 {
		t.Fatalf("%d pretty names for %d events", len(EventPrettyNames), Event_LAST-1)
	}
	m := ValidEvents
	for e := range EventPrettyNames {
		if !m.IsSet(e) {
			t.Errorf("ValidEvents misses %s", e.PrettyName())
		}
		m.Clear(e)
	}
	if m != 0 {
		t.Errorf("ValidEvents has extra bits 0x%x", int32(m))
	}
}

func TestMustParseEventMask(t *testing.T) {
	if got := MustParseEventMask("StartContainer"); got != maskOf(Event_START_CONTAINER) {
		t.Errorf("got %s", got.PrettyString())
	}
	defer func() {
		if recover() == nil {
			t.Error("no panic for an unknown event")
		}
	}()
	MustParseEventMask("nope")
}

func TestEventMaskSetClearIsSet(t *testing.T) {
	var m EventMask
	m.Set(Event_RUN_POD_SANDBOX, Event_STOP_CONTAINER).Clear(Event_RUN_POD_SANDBOX)
	for _, tc := range []struct {
		e    Event
		want bool
	}{
		{Event_RUN_POD_SANDBOX, false},
		{Event_STOP_CONTAINER, true},
		{Event_CREATE_CONTAINER, false},
	} {
		if got := m.IsSet(tc.e); got != tc.want {
			t.Errorf("IsSet(%s) = %v, want %v", tc.e.PrettyName(), got, tc.want)
		}
	}
	if m != 1<<(Event_STOP_CONTAINER-1) {
		t.Errorf("bit layout changed: 0x%x", int32(m))
	}
}

func TestPrettyString(t *testing.T) {
	for _, tc := range []struct {
		mask EventMask
		want string
	}{
		{0, ""},
		{maskOf(Event_STOP_CONTAINER, Event_RUN_POD_SANDBOX), "RunPodSandbox,StopContainer"},
		{maskOf(Event_CREATE_CONTAINER) | 1<<20, "CreateContainer,unknown(0x100000)"},
		{1 << 20, "unknown(0x100000)"},
	} {
		if got := tc.mask.PrettyString(); got != tc.want {
			t.Errorf("PrettyString(0x%x) = %q, want %q", int32(tc.mask), got, tc.want)
		}
	}
}

func TestEventPrettyName(t *testing.T) {
	for _, tc := range []struct {
		e    Event
		want string
	}{
		{Event_POST_UPDATE_POD_SANDBOX, "PostUpdatePodSandbox"},
		{Event_UNKNOWN, "unknown(0)"},
		{Event(99), "unknown(99)"},
	} {
		if got := tc.e.PrettyName(); got != tc.want {
			t.Errorf("PrettyName(%d) = %q, want %q", tc.e, got, tc.want)
		}
	}
}
