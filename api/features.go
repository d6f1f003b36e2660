package api

// Protocol features exchanged at registration (RegisterPluginRequest.features,
// RegisterPluginResponse.features, ConfigureRequest.features). A feature names
// a set of messages and rules both peers must understand before either uses
// them, independently of either peer's software version.
const (
	// FeatureHandover covers versioned registration, ShutdownRequest reasons,
	// RoleChange and Takeover. A plugin that offers it asks to be handed over
	// to (and from) other instances of its name; it gets one full
	// Synchronize per connection unless it also offers FeatureDeltaSync, and
	// one more if, superseded and standing by, it is made active again (the
	// round's Takeover.reactivation is set).
	FeatureHandover = "handover/v1"
	// FeatureDeltaSync lets the runtime send more than one synchronization
	// round on a connection: delta rounds (only what changed since the
	// previous round, with removals) and the full re-synchronization of a
	// standby that is reactivated. Meaningful only with FeatureHandover.
	FeatureDeltaSync = "delta-sync/v1"
)

// HasFeature reports whether features lists f.
func HasFeature(features []string, f string) bool {
	for _, x := range features {
		if x == f {
			return true
		}
	}
	return false
}
