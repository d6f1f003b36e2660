// Hand-written, not generated: hack/standin-gen forwards upstream's API
// only, so what this module adds for handover is forwarded here. A plugin
// that keeps importing github.com/containerd/nri/pkg/stub and points that
// path at this stand-in opts in with stub.WithHandover() (README.md, "For
// plugin authors"). hack/standin-gen's tests fail when an addition is
// missing here or when upstream gains one of these names.

package stub

import (
	"context"
	"log/slog"

	ours "github.com/nri-handover/nri/pkg/stub"
)

// Options.
func WithHandover() Option                    { return ours.WithHandover() }
func WithPluginVersion(version string) Option { return ours.WithPluginVersion(version) }
func WithInstanceID(id string) Option         { return ours.WithInstanceID(id) }
func WithGeneration(generation uint64) Option { return ours.WithGeneration(generation) }
func WithReadyFile(path string) Option        { return ours.WithReadyFile(path) }
func WithExitOnSuperseded() Option            { return ours.WithExitOnSuperseded() }

// The stub with its handover role and readiness.
type HandoverStub = ours.HandoverStub

func NewHandoverStub(p Plugin, opts ...Option) (HandoverStub, error) {
	return ours.NewHandoverStub(p, opts...)
}

// Handlers a plugin may implement for handover.
type (
	RoleChangeInterface         = ours.RoleChangeInterface
	ShutdownWithReasonInterface = ours.ShutdownWithReasonInterface
	SynchronizeRoundInterface   = ours.SynchronizeRoundInterface
	SyncInfo                    = ours.SyncInfo
	ShutdownError               = ours.ShutdownError
	Logger                      = ours.Logger
)

func SyncInfoFrom(ctx context.Context) (*SyncInfo, bool) { return ours.SyncInfoFrom(ctx) }
func NewSlogLogger(l *slog.Logger) Logger                { return ours.NewSlogLogger(l) }

// The environment the stub reads.
const (
	HandoverEnvVar   = ours.HandoverEnvVar
	InstanceIDEnvVar = ours.InstanceIDEnvVar
	GenerationEnvVar = ours.GenerationEnvVar
)

// Why the runtime ended the connection (errors.Is on Run's error).
var (
	ErrDisconnected          = ours.ErrDisconnected
	ErrShutdownUnspecified   = ours.ErrShutdownUnspecified
	ErrSuperseded            = ours.ErrSuperseded
	ErrRuntimeShutdown       = ours.ErrRuntimeShutdown
	ErrRegistrationRejected  = ours.ErrRegistrationRejected
	ErrSynchronizationFailed = ours.ErrSynchronizationFailed
	ErrTimeout               = ours.ErrTimeout
	ErrProtocolError         = ours.ErrProtocolError
	ErrRemoved               = ours.ErrRemoved
)
