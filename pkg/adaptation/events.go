package adaptation

import (
	"context"

	"github.com/nri-handover/nri/api"
)

// eventSpec is how one runtime event travels to a plugin: the RPC to call
// and, for events that old plugins only know through the generic StateChange,
// how to express the request as one.
type eventSpec struct {
	event       api.Event
	call        func(ctx context.Context, svc api.PluginService, req any) (any, error)
	stateChange func(req any) *api.StateChangeEvent // nil: no StateChange fallback
}

// relayVia builds an eventSpec from the PluginService method for the event.
func relayVia[Req, Rpl any](e api.Event, method func(api.PluginService, context.Context, *Req) (*Rpl, error), stateChange bool) eventSpec {
	s := eventSpec{
		event: e,
		call: func(ctx context.Context, svc api.PluginService, req any) (any, error) {
			rpl, err := method(svc, ctx, req.(*Req))
			if rpl == nil {
				return nil, err // no typed nil in the interface
			}
			return rpl, err
		},
	}
	if stateChange {
		s.stateChange = func(req any) *api.StateChangeEvent {
			ev := &api.StateChangeEvent{Event: e}
			if r, ok := req.(interface{ GetPod() *api.PodSandbox }); ok {
				ev.Pod = r.GetPod()
			}
			if r, ok := req.(interface{ GetContainer() *api.Container }); ok {
				ev.Container = r.GetContainer()
			}
			return ev
		}
	}
	return s
}

// eventTable drives every event method of the Adaptation. The events older
// plugins received through StateChange keep that fallback.
var eventTable = map[api.Event]eventSpec{
	api.Event_RUN_POD_SANDBOX:               relayVia(api.Event_RUN_POD_SANDBOX, api.PluginService.RunPodSandbox, true),
	api.Event_UPDATE_POD_SANDBOX:            relayVia(api.Event_UPDATE_POD_SANDBOX, api.PluginService.UpdatePodSandbox, false),
	api.Event_POST_UPDATE_POD_SANDBOX:       relayVia(api.Event_POST_UPDATE_POD_SANDBOX, api.PluginService.PostUpdatePodSandbox, true),
	api.Event_STOP_POD_SANDBOX:              relayVia(api.Event_STOP_POD_SANDBOX, api.PluginService.StopPodSandbox, true),
	api.Event_REMOVE_POD_SANDBOX:            relayVia(api.Event_REMOVE_POD_SANDBOX, api.PluginService.RemovePodSandbox, true),
	api.Event_CREATE_CONTAINER:              relayVia(api.Event_CREATE_CONTAINER, api.PluginService.CreateContainer, false),
	api.Event_POST_CREATE_CONTAINER:         relayVia(api.Event_POST_CREATE_CONTAINER, api.PluginService.PostCreateContainer, true),
	api.Event_START_CONTAINER:               relayVia(api.Event_START_CONTAINER, api.PluginService.StartContainer, true),
	api.Event_POST_START_CONTAINER:          relayVia(api.Event_POST_START_CONTAINER, api.PluginService.PostStartContainer, true),
	api.Event_UPDATE_CONTAINER:              relayVia(api.Event_UPDATE_CONTAINER, api.PluginService.UpdateContainer, false),
	api.Event_POST_UPDATE_CONTAINER:         relayVia(api.Event_POST_UPDATE_CONTAINER, api.PluginService.PostUpdateContainer, true),
	api.Event_STOP_CONTAINER:                relayVia(api.Event_STOP_CONTAINER, api.PluginService.StopContainer, false),
	api.Event_REMOVE_CONTAINER:              relayVia(api.Event_REMOVE_CONTAINER, api.PluginService.RemoveContainer, true),
	api.Event_VALIDATE_CONTAINER_ADJUSTMENT: relayVia(api.Event_VALIDATE_CONTAINER_ADJUSTMENT, api.PluginService.ValidateContainerAdjustment, false),
}

// adjustmentsOf extracts what a response asks to change, for metrics.
func adjustmentsOf(rpl any) (adjust *api.ContainerAdjustment, updates, evicts int, ok bool) {
	switch r := rpl.(type) {
	case *api.CreateContainerResponse:
		return r.GetAdjust(), len(r.GetUpdate()), len(r.GetEvict()), true
	case *api.UpdateContainerResponse:
		return nil, len(r.GetUpdate()), len(r.GetEvict()), true
	case *api.StopContainerResponse:
		return nil, len(r.GetUpdate()), 0, true
	}
	return nil, 0, 0, false
}
