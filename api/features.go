package api

// Protocol features exchanged at registration (RegisterPluginRequest.features,
// RegisterPluginResponse.features, ConfigureRequest.features). A feature names
// a set of messages and rules both peers must understand before either uses
// them, independently of either peer's software version.
const (
	// FeatureHandover covers versioned registration, ShutdownRequest reasons,
	// RoleChange, Takeover and delta synchronization rounds.
	FeatureHandover = "handover/v1"
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
