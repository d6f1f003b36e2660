package adaptation

import "github.com/nri-handover/nri/api"

// nriVersion is the NRI version sent to plugins in RegisterPluginResponse and
// ConfigureRequest: the upstream release whose API this module implements.
// Plugins on upstream's stub store it as the runtime's NRI version and
// compare it with upstream's release numbers, so our own module version
// ("(devel)", "v0.1.0") would read as an ancient or invalid NRI.
func nriVersion() string { return api.UpstreamVersion }
