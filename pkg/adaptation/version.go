package adaptation

import "runtime/debug"

const modulePath = "github.com/nri-handover/nri"

// nriVersion is the version of this NRI library in the running binary. It is
// sent to plugins in RegisterPluginResponse and ConfigureRequest, which must
// always carry a non-empty value.
func nriVersion() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	if bi.Main.Path == modulePath && bi.Main.Version != "" {
		return bi.Main.Version
	}
	for _, d := range bi.Deps {
		if d.Path != modulePath {
			continue
		}
		if d.Replace != nil && d.Replace.Version != "" {
			return d.Replace.Version
		}
		if d.Version != "" {
			return d.Version
		}
	}
	return "unknown"
}
