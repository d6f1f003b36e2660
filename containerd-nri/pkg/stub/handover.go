// Hand-written, not generated: hack/standin-gen forwards upstream's API
// only, so what this module adds for handover is forwarded here. A plugin
// that keeps importing github.com/containerd/nri/pkg/stub and points that
// path at this stand-in opts in with stub.WithHandover() (README.md, "For
// plugin authors"). hack/standin-gen's tests fail when an addition is
// missing here or undocumented, or when upstream gains one of these names.

package stub

import (
	"context"
	"log/slog"

	ours "github.com/nri-handover/nri/pkg/stub"
)

// WithHandover opts the plugin into handover: a later instance of its name
// takes over from this one without a gap ($NRI_PLUGIN_HANDOVER=off turns it
// off). See [github.com/nri-handover/nri/pkg/stub.WithHandover].
func WithHandover() Option { return ours.WithHandover() }

// WithPluginVersion sets the plugin's own version, reported at registration
// (default: the main module's). See [github.com/nri-handover/nri/pkg/stub.WithPluginVersion].
func WithPluginVersion(version string) Option { return ours.WithPluginVersion(version) }

// WithInstanceID sets this instance's identity, the pod UID in Kubernetes;
// it wins over $NRI_PLUGIN_INSTANCE_ID.
// See [github.com/nri-handover/nri/pkg/stub.WithInstanceID].
func WithInstanceID(id string) Option { return ours.WithInstanceID(id) }

// WithGeneration sets the rollout generation of this instance; it wins over
// $NRI_PLUGIN_GENERATION. See [github.com/nri-handover/nri/pkg/stub.WithGeneration].
func WithGeneration(generation uint64) Option { return ours.WithGeneration(generation) }

// WithReadyFile keeps a file at path exactly while the plugin is ready, for
// an exec readinessProbe. See [github.com/nri-handover/nri/pkg/stub.WithReadyFile].
func WithReadyFile(path string) Option { return ours.WithReadyFile(path) }

// WithExitOnSuperseded makes Run return once another instance took over,
// instead of blocking until stopped; it needs WithHandover.
// See [github.com/nri-handover/nri/pkg/stub.WithExitOnSuperseded].
func WithExitOnSuperseded() Option { return ours.WithExitOnSuperseded() }

// HandoverStub is a Stub that also tells its identity (Name, PluginVersion,
// InstanceID, Generation) and handover state (HandoverAvailable, Role, Ready,
// WaitReady, ReadyzHandler for an httpGet readinessProbe); every stub New
// returns is one. See [github.com/nri-handover/nri/pkg/stub.HandoverStub].
type HandoverStub = ours.HandoverStub

// NewHandoverStub is New returning a HandoverStub; handover is still opted
// into with WithHandover. See [github.com/nri-handover/nri/pkg/stub.NewHandoverStub].
func NewHandoverStub(p Plugin, opts ...Option) (HandoverStub, error) {
	return ours.NewHandoverStub(p, opts...)
}

// RoleChangeInterface is told when the runtime makes the instance active or
// standby. See [github.com/nri-handover/nri/pkg/stub.RoleChangeInterface].
type RoleChangeInterface = ours.RoleChangeInterface

// ShutdownWithReasonInterface is told why the runtime disconnects the plugin.
// See [github.com/nri-handover/nri/pkg/stub.ShutdownWithReasonInterface].
type ShutdownWithReasonInterface = ours.ShutdownWithReasonInterface

// SynchronizeRoundInterface replaces Synchronize with delta rounds, which a
// runtime needs to keep the instance as a standby.
// See [github.com/nri-handover/nri/pkg/stub.SynchronizeRoundInterface].
type SynchronizeRoundInterface = ours.SynchronizeRoundInterface

// SyncInfo describes a synchronization round: takeover, delta, removals.
// See [github.com/nri-handover/nri/pkg/stub.SyncInfo].
type SyncInfo = ours.SyncInfo

// ShutdownError is what Run returns after the runtime said why it
// disconnects; errors.Is matches the reason's Err value.
// See [github.com/nri-handover/nri/pkg/stub.ShutdownError].
type ShutdownError = ours.ShutdownError

// Logger is what the stub logs through, NRI's pkg/log Logger (WithLogger).
// See [github.com/nri-handover/nri/pkg/stub.Logger].
type Logger = ours.Logger

// SyncInfoFrom returns the round's details inside a Synchronize handler.
// See [github.com/nri-handover/nri/pkg/stub.SyncInfoFrom].
func SyncInfoFrom(ctx context.Context) (*SyncInfo, bool) { return ours.SyncInfoFrom(ctx) }

// NewSlogLogger returns a Logger writing to l (slog.Default() if nil), for
// WithLogger. See [github.com/nri-handover/nri/pkg/stub.NewSlogLogger].
func NewSlogLogger(l *slog.Logger) Logger { return ours.NewSlogLogger(l) }

// The environment the stub reads. See [github.com/nri-handover/nri/pkg/stub].
const (
	// HandoverEnvVar=off turns WithHandover off, without a rebuild.
	HandoverEnvVar = ours.HandoverEnvVar
	// InstanceIDEnvVar gives an opted-in plugin its default instance id.
	InstanceIDEnvVar = ours.InstanceIDEnvVar
	// GenerationEnvVar gives an opted-in plugin its default rollout generation.
	GenerationEnvVar = ours.GenerationEnvVar
	// ReadyzAddrEnvVar makes an opted-in plugin's stub serve /readyz there.
	ReadyzAddrEnvVar = ours.ReadyzAddrEnvVar
)

// Why the connection ended, for errors.Is on Run's error.
// See [github.com/nri-handover/nri/pkg/stub].
var (
	// ErrDisconnected: the runtime closed the connection without saying why.
	ErrDisconnected = ours.ErrDisconnected
	// ErrShutdownUnspecified: the runtime disconnected without a reason.
	ErrShutdownUnspecified = ours.ErrShutdownUnspecified
	// ErrSuperseded: another instance of the plugin took over.
	ErrSuperseded = ours.ErrSuperseded
	// ErrRuntimeShutdown: the runtime is shutting down.
	ErrRuntimeShutdown = ours.ErrRuntimeShutdown
	// ErrRegistrationRejected: the runtime refused the registration.
	ErrRegistrationRejected = ours.ErrRegistrationRejected
	// ErrSynchronizationFailed: the plugin's synchronization failed.
	ErrSynchronizationFailed = ours.ErrSynchronizationFailed
	// ErrTimeout: the runtime timed out waiting for the plugin.
	ErrTimeout = ours.ErrTimeout
	// ErrProtocolError: the runtime saw a protocol error.
	ErrProtocolError = ours.ErrProtocolError
	// ErrRemoved: the runtime removed the plugin.
	ErrRemoved = ours.ErrRemoved
)
