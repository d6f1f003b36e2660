package api

import (
	"fmt"
	"strings"
)

// EventPrettyNames maps each subscribable Event to the CamelCase name used in
// logs and configuration. ParseEventMask accepts these names case-insensitively.
var EventPrettyNames = map[Event]string{
	Event_RUN_POD_SANDBOX:               "RunPodSandbox",
	Event_UPDATE_POD_SANDBOX:            "UpdatePodSandbox",
	Event_POST_UPDATE_POD_SANDBOX:       "PostUpdatePodSandbox",
	Event_STOP_POD_SANDBOX:              "StopPodSandbox",
	Event_REMOVE_POD_SANDBOX:            "RemovePodSandbox",
	Event_CREATE_CONTAINER:              "CreateContainer",
	Event_POST_CREATE_CONTAINER:         "PostCreateContainer",
	Event_START_CONTAINER:               "StartContainer",
	Event_POST_START_CONTAINER:          "PostStartContainer",
	Event_UPDATE_CONTAINER:              "UpdateContainer",
	Event_POST_UPDATE_CONTAINER:         "PostUpdateContainer",
	Event_STOP_CONTAINER:                "StopContainer",
	Event_REMOVE_CONTAINER:              "RemoveContainer",
	Event_VALIDATE_CONTAINER_ADJUSTMENT: "ValidateContainerAdjustment",
}

// PrettyName returns the CamelCase name of e, or "unknown(N)" for values this
// version does not know (a newer peer may send them).
func (e Event) PrettyName() string {
	if name, ok := EventPrettyNames[e]; ok {
		return name
	}
	return fmt.Sprintf("unknown(%d)", int32(e))
}

// EventMask is a set of Events, bit e-1 standing for Event e. Plugins send it
// at configuration time to subscribe to the events they handle.
type EventMask int32

// ValidEvents holds every event from Event_UNKNOWN+1 up to (not including) Event_LAST.
const ValidEvents = EventMask((1 << (Event_LAST - 1)) - 1)

// Request/response names for RPCs that answer with Empty, kept so code written
// against the upstream API compiles unchanged. ShutdownRequest is a real
// message here (it carries the shutdown reason), so it has no alias.
type (
	StateChangeResponse = Empty
	ShutdownResponse    = Empty
)

// eventGroups are the shorthand names ParseEventMask accepts for several
// events at once, matched by a substring of the lower-cased event name.
var eventGroups = map[string]string{
	"pod":        "pod",
	"podsandbox": "pod",
	"container":  "container",
}

// ParseEventMask turns event names into a mask. Each argument may hold
// several comma-separated names; names are case-insensitive and may be an
// event's pretty name, "all", "pod"/"podsandbox" (every pod event) or
// "container" (every container event, including adjustment validation).
func ParseEventMask(events ...string) (EventMask, error) {
	var mask EventMask
	for _, arg := range events {
		for _, name := range strings.Split(arg, ",") {
			name = strings.ToLower(strings.TrimSpace(name))
			if name == "all" {
				mask |= ValidEvents
				continue
			}
			if sub, ok := eventGroups[name]; ok {
				for e, pretty := range EventPrettyNames {
					if strings.Contains(strings.ToLower(pretty), sub) {
						mask.Set(e)
					}
				}
				continue
			}
			e, ok := eventByLowerName(name)
			if !ok {
				return 0, fmt.Errorf("unknown event %q", name)
			}
			mask.Set(e)
		}
	}
	return mask, nil
}

func eventByLowerName(name string) (Event, bool) {
	for e, pretty := range EventPrettyNames {
		if strings.ToLower(pretty) == name {
			return e, true
		}
	}
	return Event_UNKNOWN, false
}

// MustParseEventMask is ParseEventMask for compile-time constant input, where
// a bad name is a programming error.
func MustParseEventMask(events ...string) EventMask {
	mask, err := ParseEventMask(events...)
	if err != nil {
		panic(fmt.Sprintf("failed to parse events %s: %v", strings.Join(events, " "), err))
	}
	return mask
}

// PrettyString lists the events in m by pretty name, comma-separated in enum
// order; bits beyond the known events are shown as one "unknown(0x..)" entry.
func (m *EventMask) PrettyString() string {
	rest := *m
	var names []string
	for e := Event_UNKNOWN + 1; e <= Event_LAST; e++ {
		if rest.IsSet(e) {
			names = append(names, e.PrettyName())
			rest.Clear(e)
		}
	}
	if rest != 0 {
		names = append(names, fmt.Sprintf("unknown(0x%x)", int32(rest)))
	}
	return strings.Join(names, ",")
}

// Set adds events to m and returns m for chaining.
func (m *EventMask) Set(events ...Event) *EventMask {
	for _, e := range events {
		*m |= eventBit(e)
	}
	return m
}

// Clear removes events from m and returns m for chaining.
func (m *EventMask) Clear(events ...Event) *EventMask {
	for _, e := range events {
		*m &^= eventBit(e)
	}
	return m
}

// IsSet reports whether e is in m.
func (m *EventMask) IsSet(e Event) bool {
	return *m&eventBit(e) != 0
}

func eventBit(e Event) EventMask {
	return 1 << (e - 1)
}
