// Hand-written, not generated: hack/standin-gen forwards upstream's API
// only, so what this module adds for handover is forwarded here, for
// plugins that keep importing github.com/containerd/nri/pkg/api and point
// that path at this stand-in (README.md, "For plugin authors").
// hack/standin-gen's tests fail when an addition is missing here or
// undocumented, or when upstream gains one of these names.

package api

import ours "github.com/nri-handover/nri/api"

// Features a plugin registers with (stub.WithHandover sets them).
// See [github.com/nri-handover/nri/api.FeatureHandover].
const (
	// FeatureHandover: instances of a plugin's name hand over to each other.
	FeatureHandover = ours.FeatureHandover
	// FeatureDeltaSync: the plugin takes delta synchronization rounds.
	FeatureDeltaSync = ours.FeatureDeltaSync
)

// UpstreamVersion is the containerd/nri release this module implements, the
// NRI version it reports. See [github.com/nri-handover/nri/api.UpstreamVersion].
const UpstreamVersion = ours.UpstreamVersion

// HasFeature reports whether features lists f.
// See [github.com/nri-handover/nri/api.HasFeature].
func HasFeature(features []string, f string) bool { return ours.HasFeature(features, f) }

// PluginRole is an instance's role among the instances of its name: active
// or standby. See [github.com/nri-handover/nri/api.PluginRole].
type PluginRole = ours.PluginRole

// ShutdownReason tells a plugin why the runtime disconnects it.
// See [github.com/nri-handover/nri/api.ShutdownReason].
type ShutdownReason = ours.ShutdownReason

// RoleChangeRequest tells a handover-capable plugin its role.
// See [github.com/nri-handover/nri/api.RoleChangeRequest].
type RoleChangeRequest = ours.RoleChangeRequest

// Takeover describes the instance a synchronizing plugin replaces.
// See [github.com/nri-handover/nri/api.Takeover].
type Takeover = ours.Takeover

// PodIdentity names the pod a plugin instance's process runs in.
// See [github.com/nri-handover/nri/api.PodIdentity].
type PodIdentity = ours.PodIdentity

// RegisterPluginResponse answers RegisterPlugin (an old runtime's Empty
// decodes as all zero). See [github.com/nri-handover/nri/api.RegisterPluginResponse].
type RegisterPluginResponse = ours.RegisterPluginResponse

// Values of PluginRole and ShutdownReason.
// See [github.com/nri-handover/nri/api.PluginRole] and [github.com/nri-handover/nri/api.ShutdownReason].
const (
	PluginRole_PLUGIN_ROLE_UNSPECIFIED = ours.PluginRole_PLUGIN_ROLE_UNSPECIFIED
	PluginRole_PLUGIN_ROLE_ACTIVE      = ours.PluginRole_PLUGIN_ROLE_ACTIVE
	PluginRole_PLUGIN_ROLE_STANDBY     = ours.PluginRole_PLUGIN_ROLE_STANDBY

	ShutdownReason_SHUTDOWN_REASON_UNSPECIFIED            = ours.ShutdownReason_SHUTDOWN_REASON_UNSPECIFIED
	ShutdownReason_SHUTDOWN_REASON_SUPERSEDED             = ours.ShutdownReason_SHUTDOWN_REASON_SUPERSEDED
	ShutdownReason_SHUTDOWN_REASON_RUNTIME_SHUTDOWN       = ours.ShutdownReason_SHUTDOWN_REASON_RUNTIME_SHUTDOWN
	ShutdownReason_SHUTDOWN_REASON_REGISTRATION_REJECTED  = ours.ShutdownReason_SHUTDOWN_REASON_REGISTRATION_REJECTED
	ShutdownReason_SHUTDOWN_REASON_SYNCHRONIZATION_FAILED = ours.ShutdownReason_SHUTDOWN_REASON_SYNCHRONIZATION_FAILED
	ShutdownReason_SHUTDOWN_REASON_TIMEOUT                = ours.ShutdownReason_SHUTDOWN_REASON_TIMEOUT
	ShutdownReason_SHUTDOWN_REASON_PROTOCOL_ERROR         = ours.ShutdownReason_SHUTDOWN_REASON_PROTOCOL_ERROR
	ShutdownReason_SHUTDOWN_REASON_REMOVED                = ours.ShutdownReason_SHUTDOWN_REASON_REMOVED
)

// Names and values of PluginRole and ShutdownReason, as protobuf generates
// them. See [github.com/nri-handover/nri/api.PluginRole_name].
var (
	PluginRole_name      = ours.PluginRole_name
	PluginRole_value     = ours.PluginRole_value
	ShutdownReason_name  = ours.ShutdownReason_name
	ShutdownReason_value = ours.ShutdownReason_value
)
