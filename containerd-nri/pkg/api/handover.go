// Hand-written, not generated: hack/standin-gen forwards upstream's API
// only, so what this module adds for handover is forwarded here, for
// plugins that keep importing github.com/containerd/nri/pkg/api and point
// that path at this stand-in (README.md, "For plugin authors").
// hack/standin-gen's tests fail when an addition is missing here or when
// upstream gains one of these names.

package api

import ours "github.com/nri-handover/nri/api"

// Features a plugin registers with (stub.WithHandover sets them).
const (
	FeatureHandover  = ours.FeatureHandover
	FeatureDeltaSync = ours.FeatureDeltaSync
)

// UpstreamVersion is the containerd/nri release this module implements.
const UpstreamVersion = ours.UpstreamVersion

func HasFeature(features []string, f string) bool { return ours.HasFeature(features, f) }

type (
	PluginRole             = ours.PluginRole
	ShutdownReason         = ours.ShutdownReason
	RoleChangeRequest      = ours.RoleChangeRequest
	Takeover               = ours.Takeover
	PodIdentity            = ours.PodIdentity
	RegisterPluginResponse = ours.RegisterPluginResponse
)

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

var (
	PluginRole_name      = ours.PluginRole_name
	PluginRole_value     = ours.PluginRole_value
	ShutdownReason_name  = ours.ShutdownReason_name
	ShutdownReason_value = ours.ShutdownReason_value
)
