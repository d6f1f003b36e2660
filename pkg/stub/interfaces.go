package stub

import (
	"context"

	"github.com/nri-handover/nri/api"
)

// Plugin is any value implementing at least one of the handler interfaces
// below. The stub subscribes it to exactly the events it has handlers for.
type Plugin any

// ConfigureInterface receives the plugin's configuration. A non-zero mask
// narrows the subscription; zero keeps every event the plugin can handle.
type ConfigureInterface interface {
	Configure(ctx context.Context, config, runtime, version string) (api.EventMask, error)
}

// SynchronizeInterface receives the runtime's pods and containers after
// Configure and may answer with container updates. Handover details of the
// round (takeover, delta) are available through SyncInfoFrom(ctx).
type SynchronizeInterface interface {
	Synchronize(context.Context, []*api.PodSandbox, []*api.Container) ([]*api.ContainerUpdate, error)
}

// SynchronizeRoundInterface is the delta-aware synchronization of a plugin
// that opted into handover (WithHandover). It replaces Synchronize: the first
// round of a connection is full; later rounds are delta rounds (info.Delta,
// only what changed, with removals listed in info). A reactivated standby
// (info.Takeover.Reactivation) is told what changed while it stood by in a
// delta round, or, if the runtime could not keep track, in a full round.
// info.Takeover names the instance this one replaces, so work already done by
// the predecessor (containers it stamped) can be skipped.
type SynchronizeRoundInterface interface {
	SynchronizeRound(ctx context.Context, info *SyncInfo, pods []*api.PodSandbox, containers []*api.Container) ([]*api.ContainerUpdate, error)
}

// ShutdownInterface is told that the runtime is about to disconnect the plugin.
type ShutdownInterface interface {
	Shutdown(context.Context)
}

// ShutdownWithReasonInterface is told why the runtime disconnects the plugin.
// A plugin implementing both shutdown interfaces gets this one first, then
// Shutdown.
type ShutdownWithReasonInterface interface {
	ShutdownWithReason(context.Context, *api.ShutdownRequest)
}

// RoleChangeInterface learns when this instance becomes the active instance
// of its plugin name, or a standby after a successor took over. An error
// returned for the active role keeps the stub not ready and is reported to
// the runtime.
type RoleChangeInterface interface {
	RoleChange(context.Context, *api.RoleChangeRequest) error
}

// RunPodInterface handles RunPodSandbox events.
type RunPodInterface interface {
	RunPodSandbox(context.Context, *api.PodSandbox) error
}

// UpdatePodInterface handles UpdatePodSandbox requests.
type UpdatePodInterface interface {
	UpdatePodSandbox(context.Context, *api.PodSandbox, *api.LinuxResources, *api.LinuxResources) error
}

// StopPodInterface handles StopPodSandbox events.
type StopPodInterface interface {
	StopPodSandbox(context.Context, *api.PodSandbox) error
}

// RemovePodInterface handles RemovePodSandbox events.
type RemovePodInterface interface {
	RemovePodSandbox(context.Context, *api.PodSandbox) error
}

// PostUpdatePodInterface handles PostUpdatePodSandbox events.
type PostUpdatePodInterface interface {
	PostUpdatePodSandbox(context.Context, *api.PodSandbox) error
}

// CreateContainerInterface handles CreateContainer requests: it may adjust
// the new container and update others.
type CreateContainerInterface interface {
	CreateContainer(context.Context, *api.PodSandbox, *api.Container) (*api.ContainerAdjustment, []*api.ContainerUpdate, error)
}

// StartContainerInterface handles StartContainer events.
type StartContainerInterface interface {
	StartContainer(context.Context, *api.PodSandbox, *api.Container) error
}

// UpdateContainerInterface handles UpdateContainer requests; an update for
// the container itself replaces the requested one.
type UpdateContainerInterface interface {
	UpdateContainer(context.Context, *api.PodSandbox, *api.Container, *api.LinuxResources) ([]*api.ContainerUpdate, error)
}

// StopContainerInterface handles StopContainer requests.
type StopContainerInterface interface {
	StopContainer(context.Context, *api.PodSandbox, *api.Container) ([]*api.ContainerUpdate, error)
}

// RemoveContainerInterface handles RemoveContainer events.
type RemoveContainerInterface interface {
	RemoveContainer(context.Context, *api.PodSandbox, *api.Container) error
}

// PostCreateContainerInterface handles PostCreateContainer events.
type PostCreateContainerInterface interface {
	PostCreateContainer(context.Context, *api.PodSandbox, *api.Container) error
}

// PostStartContainerInterface handles PostStartContainer events.
type PostStartContainerInterface interface {
	PostStartContainer(context.Context, *api.PodSandbox, *api.Container) error
}

// PostUpdateContainerInterface handles PostUpdateContainer events.
type PostUpdateContainerInterface interface {
	PostUpdateContainer(context.Context, *api.PodSandbox, *api.Container) error
}

// ValidateContainerAdjustmentInterface validates the merged adjustment of a
// container; an error rejects it with the error's text as the reason.
type ValidateContainerAdjustmentInterface interface {
	ValidateContainerAdjustment(context.Context, *api.ValidateContainerAdjustmentRequest) error
}
