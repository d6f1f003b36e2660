// Package builtin runs NRI plugins inside the runtime process: a
// BuiltinPlugin is a set of handler functions the adaptation calls directly,
// without a connection.
package builtin

import (
	"context"

	"github.com/nri-handover/nri/api"
)

// BuiltinPlugin is an in-process plugin identified by Index and Base, as an
// external plugin would be by its NN-name.
//
//nolint:revive // the name matches upstream's
type BuiltinPlugin struct {
	Base     string
	Index    string
	Handlers BuiltinHandlers
}

// BuiltinHandlers are the plugin's handlers. A nil handler means the plugin
// does not subscribe to the event, unless Configure returns its own mask.
//
//nolint:revive // the name matches upstream's
type BuiltinHandlers struct {
	Configure            func(context.Context, *api.ConfigureRequest) (*api.ConfigureResponse, error)
	Synchronize          func(context.Context, *api.SynchronizeRequest) (*api.SynchronizeResponse, error)
	RunPodSandbox        func(context.Context, *api.RunPodSandboxRequest) error
	StopPodSandbox       func(context.Context, *api.StopPodSandboxRequest) error
	RemovePodSandbox     func(context.Context, *api.RemovePodSandboxRequest) error
	UpdatePodSandbox     func(context.Context, *api.UpdatePodSandboxRequest) (*api.UpdatePodSandboxResponse, error)
	PostUpdatePodSandbox func(context.Context, *api.PostUpdatePodSandboxRequest) error

	CreateContainer             func(context.Context, *api.CreateContainerRequest) (*api.CreateContainerResponse, error)
	PostCreateContainer         func(context.Context, *api.PostCreateContainerRequest) error
	StartContainer              func(context.Context, *api.StartContainerRequest) error
	PostStartContainer          func(context.Context, *api.PostStartContainerRequest) error
	UpdateContainer             func(context.Context, *api.UpdateContainerRequest) (*api.UpdateContainerResponse, error)
	PostUpdateContainer         func(context.Context, *api.PostUpdateContainerRequest) error
	StopContainer               func(context.Context, *api.StopContainerRequest) (*api.StopContainerResponse, error)
	RemoveContainer             func(context.Context, *api.RemoveContainerRequest) error
	ValidateContainerAdjustment func(context.Context, *api.ValidateContainerAdjustmentRequest) error
}

var _ api.PluginService = (*BuiltinPlugin)(nil)

// subscriptions derives the event mask from the handlers that are set.
func (h *BuiltinHandlers) subscriptions() api.EventMask {
	var m api.EventMask
	for _, s := range []struct {
		set bool
		e   api.Event
	}{
		{h.RunPodSandbox != nil, api.Event_RUN_POD_SANDBOX},
		{h.StopPodSandbox != nil, api.Event_STOP_POD_SANDBOX},
		{h.RemovePodSandbox != nil, api.Event_REMOVE_POD_SANDBOX},
		{h.UpdatePodSandbox != nil, api.Event_UPDATE_POD_SANDBOX},
		{h.PostUpdatePodSandbox != nil, api.Event_POST_UPDATE_POD_SANDBOX},
		{h.CreateContainer != nil, api.Event_CREATE_CONTAINER},
		{h.PostCreateContainer != nil, api.Event_POST_CREATE_CONTAINER},
		{h.StartContainer != nil, api.Event_START_CONTAINER},
		{h.PostStartContainer != nil, api.Event_POST_START_CONTAINER},
		{h.UpdateContainer != nil, api.Event_UPDATE_CONTAINER},
		{h.PostUpdateContainer != nil, api.Event_POST_UPDATE_CONTAINER},
		{h.StopContainer != nil, api.Event_STOP_CONTAINER},
		{h.RemoveContainer != nil, api.Event_REMOVE_CONTAINER},
		{h.ValidateContainerAdjustment != nil, api.Event_VALIDATE_CONTAINER_ADJUSTMENT},
	} {
		if s.set {
			m.Set(s.e)
		}
	}
	return m
}

// Configure calls the Configure handler, if any, and subscribes the plugin
// to the events it has handlers for unless the handler chose a mask.
func (b *BuiltinPlugin) Configure(ctx context.Context, req *api.ConfigureRequest) (*api.ConfigureResponse, error) {
	rpl := &api.ConfigureResponse{}
	if b.Handlers.Configure != nil {
		r, err := b.Handlers.Configure(ctx, req)
		if err != nil {
			return nil, err
		}
		if r != nil {
			rpl = r
		}
	}
	if rpl.Events == 0 {
		rpl.Events = int32(b.Handlers.subscriptions())
	}
	return rpl, nil
}

// Synchronize implements api.PluginService.
func (b *BuiltinPlugin) Synchronize(ctx context.Context, req *api.SynchronizeRequest) (*api.SynchronizeResponse, error) {
	if b.Handlers.Synchronize != nil {
		return b.Handlers.Synchronize(ctx, req)
	}
	return &api.SynchronizeResponse{More: req.GetMore()}, nil
}

// Shutdown implements api.PluginService; builtin plugins live as long as the runtime.
func (b *BuiltinPlugin) Shutdown(context.Context, *api.ShutdownRequest) (*api.Empty, error) {
	return &api.Empty{}, nil
}

// RoleChange implements api.PluginService; builtin plugins are never handed over.
func (b *BuiltinPlugin) RoleChange(context.Context, *api.RoleChangeRequest) (*api.Empty, error) {
	return &api.Empty{}, nil
}

// StateChange implements api.PluginService; every event has its own RPC.
func (b *BuiltinPlugin) StateChange(context.Context, *api.StateChangeEvent) (*api.Empty, error) {
	return &api.Empty{}, nil
}

// notify adapts a handler without a response of its own.
func notify[Req any, Rpl any](ctx context.Context, h func(context.Context, *Req) error, req *Req) (*Rpl, error) {
	var err error
	if h != nil {
		err = h(ctx, req)
	}
	if err != nil {
		return nil, err
	}
	return new(Rpl), nil
}

// answer adapts a handler with a response.
func answer[Req any, Rpl any](ctx context.Context, h func(context.Context, *Req) (*Rpl, error), req *Req) (*Rpl, error) {
	if h == nil {
		return new(Rpl), nil
	}
	return h(ctx, req)
}

// RunPodSandbox implements api.PluginService.
func (b *BuiltinPlugin) RunPodSandbox(ctx context.Context, req *api.RunPodSandboxRequest) (*api.RunPodSandboxResponse, error) {
	return notify[api.RunPodSandboxRequest, api.RunPodSandboxResponse](ctx, b.Handlers.RunPodSandbox, req)
}

// UpdatePodSandbox implements api.PluginService.
func (b *BuiltinPlugin) UpdatePodSandbox(ctx context.Context, req *api.UpdatePodSandboxRequest) (*api.UpdatePodSandboxResponse, error) {
	return answer(ctx, b.Handlers.UpdatePodSandbox, req)
}

// PostUpdatePodSandbox implements api.PluginService.
func (b *BuiltinPlugin) PostUpdatePodSandbox(ctx context.Context, req *api.PostUpdatePodSandboxRequest) (*api.PostUpdatePodSandboxResponse, error) {
	return notify[api.PostUpdatePodSandboxRequest, api.PostUpdatePodSandboxResponse](ctx, b.Handlers.PostUpdatePodSandbox, req)
}

// StopPodSandbox implements api.PluginService.
func (b *BuiltinPlugin) StopPodSandbox(ctx context.Context, req *api.StopPodSandboxRequest) (*api.StopPodSandboxResponse, error) {
	return notify[api.StopPodSandboxRequest, api.StopPodSandboxResponse](ctx, b.Handlers.StopPodSandbox, req)
}

// RemovePodSandbox implements api.PluginService.
func (b *BuiltinPlugin) RemovePodSandbox(ctx context.Context, req *api.RemovePodSandboxRequest) (*api.RemovePodSandboxResponse, error) {
	return notify[api.RemovePodSandboxRequest, api.RemovePodSandboxResponse](ctx, b.Handlers.RemovePodSandbox, req)
}

// CreateContainer implements api.PluginService.
func (b *BuiltinPlugin) CreateContainer(ctx context.Context, req *api.CreateContainerRequest) (*api.CreateContainerResponse, error) {
	return answer(ctx, b.Handlers.CreateContainer, req)
}

// PostCreateContainer implements api.PluginService.
func (b *BuiltinPlugin) PostCreateContainer(ctx context.Context, req *api.PostCreateContainerRequest) (*api.PostCreateContainerResponse, error) {
	return notify[api.PostCreateContainerRequest, api.PostCreateContainerResponse](ctx, b.Handlers.PostCreateContainer, req)
}

// StartContainer implements api.PluginService.
func (b *BuiltinPlugin) StartContainer(ctx context.Context, req *api.StartContainerRequest) (*api.StartContainerResponse, error) {
	return notify[api.StartContainerRequest, api.StartContainerResponse](ctx, b.Handlers.StartContainer, req)
}

// PostStartContainer implements api.PluginService.
func (b *BuiltinPlugin) PostStartContainer(ctx context.Context, req *api.PostStartContainerRequest) (*api.PostStartContainerResponse, error) {
	return notify[api.PostStartContainerRequest, api.PostStartContainerResponse](ctx, b.Handlers.PostStartContainer, req)
}

// UpdateContainer implements api.PluginService.
func (b *BuiltinPlugin) UpdateContainer(ctx context.Context, req *api.UpdateContainerRequest) (*api.UpdateContainerResponse, error) {
	return answer(ctx, b.Handlers.UpdateContainer, req)
}

// PostUpdateContainer implements api.PluginService.
func (b *BuiltinPlugin) PostUpdateContainer(ctx context.Context, req *api.PostUpdateContainerRequest) (*api.PostUpdateContainerResponse, error) {
	return notify[api.PostUpdateContainerRequest, api.PostUpdateContainerResponse](ctx, b.Handlers.PostUpdateContainer, req)
}

// StopContainer implements api.PluginService.
func (b *BuiltinPlugin) StopContainer(ctx context.Context, req *api.StopContainerRequest) (*api.StopContainerResponse, error) {
	return answer(ctx, b.Handlers.StopContainer, req)
}

// RemoveContainer implements api.PluginService.
func (b *BuiltinPlugin) RemoveContainer(ctx context.Context, req *api.RemoveContainerRequest) (*api.RemoveContainerResponse, error) {
	return notify[api.RemoveContainerRequest, api.RemoveContainerResponse](ctx, b.Handlers.RemoveContainer, req)
}

// ValidateContainerAdjustment turns the handler's error into a rejection
// carrying the error text, as a validator plugin would answer.
func (b *BuiltinPlugin) ValidateContainerAdjustment(ctx context.Context, req *api.ValidateContainerAdjustmentRequest) (*api.ValidateContainerAdjustmentResponse, error) {
	if h := b.Handlers.ValidateContainerAdjustment; h != nil {
		if err := h(ctx, req); err != nil {
			return &api.ValidateContainerAdjustmentResponse{Reject: true, Reason: err.Error()}, nil
		}
	}
	return &api.ValidateContainerAdjustmentResponse{}, nil
}
