package adaptation

import (
	"fmt"

	"github.com/nri-handover/nri/api"
)

// Limits on what a plugin may say about itself in RegisterPlugin. Anyone who
// can open the socket registers, and the runtime keeps these strings for the
// plugin's lifetime (and instance ids for its slot's), logs them and copies
// them into notices to other plugins: without a bound, one connection could
// make it hold megabytes. The bounds are far above any real plugin's values
// (a pod name is at most 253 bytes, a semantic version rarely 30).
const (
	maxPluginNameLen = 128
	maxVersionLen    = 256 // plugin version and NRI version
	maxInstanceIDLen = 256
	maxFeatures      = 32
	maxFeatureLen    = 64

	// preRegistrationFrameLimit bounds the frames a connection may send
	// before it registered: a RegisterPluginRequest within the limits above
	// is a few KiB, and 32 idle connections then hold at most 32 times this
	// much instead of 32 times 4 MiB.
	preRegistrationFrameLimit = 16 << 10
)

// checkRegistration refuses a registration whose fields exceed the limits.
// The name and index are checked for their form by register.
func checkRegistration(req *api.RegisterPluginRequest) error {
	name := req.GetPluginName()
	if len(name) > maxPluginNameLen {
		return fmt.Errorf("plugin name is %d bytes, limit %d", len(name), maxPluginNameLen)
	}
	for _, f := range []struct {
		what  string
		value string
		limit int
	}{
		{"version", req.GetPluginVersion(), maxVersionLen},
		{"NRI version", req.GetNRIVersion(), maxVersionLen},
		{"instance id", req.GetInstanceId(), maxInstanceIDLen},
	} {
		if len(f.value) > f.limit {
			return fmt.Errorf("plugin %q: %s is %d bytes, limit %d", name, f.what, len(f.value), f.limit)
		}
	}
	features := req.GetFeatures()
	if len(features) > maxFeatures {
		return fmt.Errorf("plugin %q: %d features, limit %d", name, len(features), maxFeatures)
	}
	for _, f := range features {
		if len(f) > maxFeatureLen {
			return fmt.Errorf("plugin %q: a feature name is %d bytes, limit %d", name, len(f), maxFeatureLen)
		}
	}
	return nil
}
