package stub

import (
	"github.com/nri-handover/nri/api"
)

// Defaults until Configure tells the stub the runtime's values.
const (
	DefaultRegistrationTimeout = api.DefaultPluginRegistrationTimeout
	DefaultRequestTimeout      = api.DefaultPluginRequestTimeout
)

// EventMask is the set of events a plugin subscribes to.
type EventMask = api.EventMask

// maskOf returns the mask with the given events set.
func maskOf(events ...api.Event) EventMask {
	var m EventMask
	m.Set(events...)
	return m
}

// maskString names the events in m, for logs.
func maskString(m EventMask) string { return m.PrettyString() }
