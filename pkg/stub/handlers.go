package stub

import (
	"context"
	"fmt"

	"github.com/nri-handover/nri/api"
)

// handlers holds the plugin's methods, looked up once in New, so that each
// RPC finds its handler without a type assertion.
type handlers struct {
	configure          func(context.Context, string, string, string) (EventMask, error)
	synchronize        func(context.Context, []*api.PodSandbox, []*api.Container) ([]*api.ContainerUpdate, error)
	syncRound          func(context.Context, *SyncInfo, []*api.PodSandbox, []*api.Container) ([]*api.ContainerUpdate, error)
	shutdown           func(context.Context)
	shutdownWithReason func(context.Context, *api.ShutdownRequest)
	roleChange         func(context.Context, *api.RoleChangeRequest) error

	runPod              func(context.Context, *api.PodSandbox) error
	updatePod           func(context.Context, *api.PodSandbox, *api.LinuxResources, *api.LinuxResources) error
	postUpdatePod       func(context.Context, *api.PodSandbox) error
	stopPod             func(context.Context, *api.PodSandbox) error
	removePod           func(context.Context, *api.PodSandbox) error
	createContainer     func(context.Context, *api.PodSandbox, *api.Container) (*api.ContainerAdjustment, []*api.ContainerUpdate, error)
	postCreateContainer func(context.Context, *api.PodSandbox, *api.Container) error
	startContainer      func(context.Context, *api.PodSandbox, *api.Container) error
	postStartContainer  func(context.Context, *api.PodSandbox, *api.Container) error
	updateContainer     func(context.Context, *api.PodSandbox, *api.Container, *api.LinuxResources) ([]*api.ContainerUpdate, error)
	postUpdateContainer func(context.Context, *api.PodSandbox, *api.Container) error
	stopContainer       func(context.Context, *api.PodSandbox, *api.Container) ([]*api.ContainerUpdate, error)
	removeContainer     func(context.Context, *api.PodSandbox, *api.Container) error
	validate            func(context.Context, *api.ValidateContainerAdjustmentRequest) error

	// podEvents and containerEvents route StateChange notifications.
	podEvents       map[api.Event]func(context.Context, *api.PodSandbox) error
	containerEvents map[api.Event]func(context.Context, *api.PodSandbox, *api.Container) error
}

// setupHandlers collects the plugin's handlers and the events they cover. A
// plugin that handles no event at all is a programming error.
func setupHandlers(p Plugin) (handlers, EventMask, error) {
	var (
		h    handlers
		mask EventMask
	)

	if x, ok := p.(ConfigureInterface); ok {
		h.configure = x.Configure
	}
	if x, ok := p.(SynchronizeInterface); ok {
		h.synchronize = x.Synchronize
	}
	if x, ok := p.(SynchronizeRoundInterface); ok {
		h.syncRound = x.SynchronizeRound
	}
	if x, ok := p.(ShutdownInterface); ok {
		h.shutdown = x.Shutdown
	}
	if x, ok := p.(ShutdownWithReasonInterface); ok {
		h.shutdownWithReason = x.ShutdownWithReason
	}
	if x, ok := p.(RoleChangeInterface); ok {
		h.roleChange = x.RoleChange
	}

	h.podEvents = map[api.Event]func(context.Context, *api.PodSandbox) error{}
	h.containerEvents = map[api.Event]func(context.Context, *api.PodSandbox, *api.Container) error{}
	pod := func(e api.Event, f func(context.Context, *api.PodSandbox) error) func(context.Context, *api.PodSandbox) error {
		h.podEvents[e] = f
		mask |= maskOf(e)
		return f
	}
	ctr := func(e api.Event, f func(context.Context, *api.PodSandbox, *api.Container) error) func(context.Context, *api.PodSandbox, *api.Container) error {
		h.containerEvents[e] = f
		mask |= maskOf(e)
		return f
	}

	if x, ok := p.(RunPodInterface); ok {
		h.runPod = pod(api.Event_RUN_POD_SANDBOX, x.RunPodSandbox)
	}
	if x, ok := p.(UpdatePodInterface); ok {
		h.updatePod = x.UpdatePodSandbox
		mask |= maskOf(api.Event_UPDATE_POD_SANDBOX)
	}
	if x, ok := p.(PostUpdatePodInterface); ok {
		h.postUpdatePod = pod(api.Event_POST_UPDATE_POD_SANDBOX, x.PostUpdatePodSandbox)
	}
	if x, ok := p.(StopPodInterface); ok {
		h.stopPod = pod(api.Event_STOP_POD_SANDBOX, x.StopPodSandbox)
	}
	if x, ok := p.(RemovePodInterface); ok {
		h.removePod = pod(api.Event_REMOVE_POD_SANDBOX, x.RemovePodSandbox)
	}
	if x, ok := p.(CreateContainerInterface); ok {
		h.createContainer = x.CreateContainer
		mask |= maskOf(api.Event_CREATE_CONTAINER)
	}
	if x, ok := p.(PostCreateContainerInterface); ok {
		h.postCreateContainer = ctr(api.Event_POST_CREATE_CONTAINER, x.PostCreateContainer)
	}
	if x, ok := p.(StartContainerInterface); ok {
		h.startContainer = ctr(api.Event_START_CONTAINER, x.StartContainer)
	}
	if x, ok := p.(PostStartContainerInterface); ok {
		h.postStartContainer = ctr(api.Event_POST_START_CONTAINER, x.PostStartContainer)
	}
	if x, ok := p.(UpdateContainerInterface); ok {
		h.updateContainer = x.UpdateContainer
		mask |= maskOf(api.Event_UPDATE_CONTAINER)
	}
	if x, ok := p.(PostUpdateContainerInterface); ok {
		h.postUpdateContainer = ctr(api.Event_POST_UPDATE_CONTAINER, x.PostUpdateContainer)
	}
	if x, ok := p.(StopContainerInterface); ok {
		h.stopContainer = x.StopContainer
		mask |= maskOf(api.Event_STOP_CONTAINER)
	}
	if x, ok := p.(RemoveContainerInterface); ok {
		h.removeContainer = ctr(api.Event_REMOVE_CONTAINER, x.RemoveContainer)
	}
	if x, ok := p.(ValidateContainerAdjustmentInterface); ok {
		h.validate = x.ValidateContainerAdjustment
		mask |= maskOf(api.Event_VALIDATE_CONTAINER_ADJUSTMENT)
	}

	if mask == 0 {
		return h, 0, fmt.Errorf("plugin type %T implements no NRI event handler", p)
	}
	return h, mask, nil
}
