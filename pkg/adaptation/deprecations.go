package adaptation

import (
	"context"
	"fmt"
)

// DeprecationRecorder receives warnings about plugins relying on deprecated
// protocol features, so a runtime can surface them (events, metrics).
type DeprecationRecorder interface {
	PluginWarning(ctx context.Context, d Deprecation, plugin, details string)
}

// Deprecation identifies one deprecated protocol feature.
type Deprecation int

const (
	// DeprecatedStateChange: the plugin lacks a dedicated RPC for an event and
	// only implements the generic StateChange.
	DeprecatedStateChange Deprecation = iota + 1
)

func (d Deprecation) String() string {
	switch d {
	case DeprecatedStateChange:
		return "deprecated StateChange"
	}
	return fmt.Sprintf("unknown deprecation (%d)", int(d))
}
