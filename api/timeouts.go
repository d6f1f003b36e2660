package api

import "time"

// Default deadlines a runtime applies to plugins when not configured
// otherwise. Plugins sit on the container creation path, so a stuck plugin
// must not stall the runtime for long.
const (
	// DefaultPluginRegistrationTimeout bounds how long a connected plugin may
	// take to register and finish its initial synchronization.
	DefaultPluginRegistrationTimeout = 5 * time.Second
	// DefaultPluginRequestTimeout bounds how long a plugin may take to answer
	// a single event.
	DefaultPluginRequestTimeout = 2 * time.Second
)
