package adaptation

import (
	"context"
	"fmt"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/nri-handover/nri/api"
	"github.com/nri-handover/nri/pkg/adaptation/internal/ledger"
)

// The event methods below hold the adaptation's lock for the whole dispatch,
// which orders events against each other and against plugins joining, and
// wait first while a switch holds the dispatch (hold.go).

// RunPodSandbox relays the event to plugins.
func (r *Adaptation) RunPodSandbox(ctx context.Context, req *RunPodSandboxRequest) error {
	return r.notify(ctx, api.Event_RUN_POD_SANDBOX, req)
}

// UpdatePodSandbox relays the event to plugins.
func (r *Adaptation) UpdatePodSandbox(ctx context.Context, req *UpdatePodSandboxRequest) (*UpdatePodSandboxResponse, error) {
	if err := r.notify(ctx, api.Event_UPDATE_POD_SANDBOX, req); err != nil {
		return nil, err
	}
	return &UpdatePodSandboxResponse{}, nil
}

// PostUpdatePodSandbox relays the event to plugins.
func (r *Adaptation) PostUpdatePodSandbox(ctx context.Context, req *PostUpdatePodSandboxRequest) error {
	return r.notify(ctx, api.Event_POST_UPDATE_POD_SANDBOX, req)
}

// StopPodSandbox relays the event to plugins.
func (r *Adaptation) StopPodSandbox(ctx context.Context, req *StopPodSandboxRequest) error {
	return r.notify(ctx, api.Event_STOP_POD_SANDBOX, req)
}

// RemovePodSandbox relays the event to plugins.
func (r *Adaptation) RemovePodSandbox(ctx context.Context, req *RemovePodSandboxRequest) error {
	return r.notify(ctx, api.Event_REMOVE_POD_SANDBOX, req)
}

// CreateContainer relays the event to plugins, merges their adjustments and
// updates, and lets validator plugins accept or reject the merged result.
func (r *Adaptation) CreateContainer(ctx context.Context, req *CreateContainerRequest) (*CreateContainerResponse, error) {
	n, err := r.lockDispatch(ctx)
	if err != nil {
		return nil, err
	}
	defer r.unlockDispatch(n)

	// The ledger derives the created container from the container as the
	// runtime sent it, which merging the replies edits in place.
	var sent *api.Container
	if r.ledger.Recording() {
		sent = ledger.CloneContainer(req.GetContainer())
	}

	plugins := r.reg.active()
	result := collectCreateContainerResult(req)
	result.forwardEvictions = r.forwardEvictions
	validate := newValidationRequest(req, plugins)

	err = r.relay(ctx, plugins, api.Event_CREATE_CONTAINER, req, func(p *plugin, rpl any) error {
		return renameHint(result.apply(rpl, p.name()), p, plugins)
	})
	var rsp *CreateContainerResponse
	if err == nil {
		rsp, err = r.validateContainerAdjustment(ctx, plugins, validate, result)
	}
	r.ledger.Note(api.Event_CREATE_CONTAINER,
		&api.CreateContainerRequest{Pod: req.GetPod(), Container: sent}, rsp, err != nil || sent == nil)
	return rsp, err
}

// PostCreateContainer relays the event to plugins.
func (r *Adaptation) PostCreateContainer(ctx context.Context, req *PostCreateContainerRequest) error {
	return r.notify(ctx, api.Event_POST_CREATE_CONTAINER, req)
}

// StartContainer relays the event to plugins.
func (r *Adaptation) StartContainer(ctx context.Context, req *StartContainerRequest) error {
	return r.notify(ctx, api.Event_START_CONTAINER, req)
}

// PostStartContainer relays the event to plugins.
func (r *Adaptation) PostStartContainer(ctx context.Context, req *PostStartContainerRequest) error {
	return r.notify(ctx, api.Event_POST_START_CONTAINER, req)
}

// UpdateContainer relays the event to plugins and merges the updates they ask for.
func (r *Adaptation) UpdateContainer(ctx context.Context, req *UpdateContainerRequest) (*UpdateContainerResponse, error) {
	n, err := r.lockDispatch(ctx)
	if err != nil {
		return nil, err
	}
	defer r.unlockDispatch(n)

	// The ledger applies the resources asked for as the runtime sent them:
	// collecting the result fills them in place.
	var asked *api.UpdateContainerRequest
	if r.ledger.Recording() {
		asked = &api.UpdateContainerRequest{Pod: req.GetPod(), Container: req.GetContainer()}
		if res := req.GetLinuxResources(); res != nil {
			asked.LinuxResources = proto.Clone(res).(*api.LinuxResources)
		}
	}

	result := collectUpdateContainerResult(req)
	result.forwardEvictions = r.forwardEvictions
	err = r.relay(ctx, r.reg.active(), api.Event_UPDATE_CONTAINER, req, func(p *plugin, rpl any) error {
		return result.apply(rpl, p.name())
	})
	var rsp *UpdateContainerResponse
	if err == nil {
		rsp = result.updateContainerResponse()
	}
	r.ledger.Note(api.Event_UPDATE_CONTAINER, asked, rsp, err != nil || asked == nil)
	return rsp, err
}

// PostUpdateContainer relays the event to plugins.
func (r *Adaptation) PostUpdateContainer(ctx context.Context, req *PostUpdateContainerRequest) error {
	return r.notify(ctx, api.Event_POST_UPDATE_CONTAINER, req)
}

// StopContainer relays the event to plugins and merges the updates they ask for.
func (r *Adaptation) StopContainer(ctx context.Context, req *StopContainerRequest) (*StopContainerResponse, error) {
	n, err := r.lockDispatch(ctx)
	if err != nil {
		return nil, err
	}
	defer r.unlockDispatch(n)

	result := collectStopContainerResult()
	err = r.relay(ctx, r.reg.active(), api.Event_STOP_CONTAINER, req, func(p *plugin, rpl any) error {
		return result.apply(rpl, p.name())
	})
	var rsp *StopContainerResponse
	if err == nil {
		rsp = result.stopContainerResponse()
	}
	// Stopped either way; the updates only if the runtime gets them.
	r.ledger.Note(api.Event_STOP_CONTAINER, req, rsp, false)
	return rsp, err
}

// RemoveContainer relays the event to plugins.
func (r *Adaptation) RemoveContainer(ctx context.Context, req *RemoveContainerRequest) error {
	return r.notify(ctx, api.Event_REMOVE_CONTAINER, req)
}

// notify relays an event whose responses carry nothing to merge.
func (r *Adaptation) notify(ctx context.Context, event api.Event, req any) error {
	n, err := r.lockDispatch(ctx)
	if err != nil {
		return err
	}
	defer r.unlockDispatch(n)
	if r.fanOut {
		return r.fanOutRelay(ctx, r.reg.active(), event, req)
	}
	return r.relay(ctx, r.reg.active(), event, req, nil)
}

// relay sends the event to each subscribed plugin in order and hands every
// response to merge. The caller holds the adaptation's lock.
func (r *Adaptation) relay(ctx context.Context, plugins []*plugin, event api.Event, req any, merge func(*plugin, any) error) error {
	spec, ok := eventTable[event]
	if !ok {
		return fmt.Errorf("no relay for event %s", event.PrettyName())
	}
	switch event {
	case api.Event_CREATE_CONTAINER, api.Event_UPDATE_CONTAINER, api.Event_STOP_CONTAINER:
		// noted with their merged replies
	default:
		defer r.ledger.Note(event, req, nil, false)
	}
	for _, p := range plugins {
		if !p.receives(event) {
			continue
		}
		rpl, err := p.relay(ctx, &spec, req)
		if err != nil {
			return err
		}
		if merge != nil && rpl != nil {
			if err := p.mergeReply(ctx, event, merge, rpl); err != nil {
				return err
			}
		}
	}
	return nil
}

// relay sends one event to the plugin within the request timeout and applies
// the failure policy. A nil response with a nil error means the plugin was
// skipped or failed in a way the policy lets the request survive.
func (p *plugin) relay(ctx context.Context, spec *eventSpec, req any) (any, error) {
	rctx, cancel := context.WithTimeout(ctx, getRequestTimeout())
	defer cancel()

	op := spec.event.PrettyName()
	start := time.Now()
	rpl, err := p.invoke(rctx, spec, req)
	p.recordInvocation(op, start, err)
	if err != nil {
		return nil, p.handleRequestError(ctx, spec.event, err)
	}
	if adjust, updates, evicts, ok := adjustmentsOf(rpl); ok {
		p.r.metrics.RecordPluginAdjustments(p.name(), op, adjust, updates, evicts)
	}
	return rpl, nil
}

// invoke calls the event's RPC, falling back for good to StateChange once a
// plugin turns out to predate the dedicated RPC.
func (p *plugin) invoke(ctx context.Context, spec *eventSpec, req any) (any, error) {
	p.inEvent.Add(1)
	defer p.inEvent.Add(-1)
	if spec.stateChange != nil && p.usesStateChange(spec.event) {
		_, err := p.svc.StateChange(ctx, spec.stateChange(req))
		return nil, err
	}
	rpl, err := spec.call(ctx, p.svc, req)
	if err == nil || spec.stateChange == nil || p.kind == kindBuiltin || status.Code(err) != codes.Unimplemented {
		return rpl, err
	}
	p.markStateChange(ctx, spec.event)
	_, err = p.svc.StateChange(ctx, spec.stateChange(req))
	return nil, err
}

func (p *plugin) usesStateChange(e api.Event) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.legacy[e]
}

func (p *plugin) markStateChange(ctx context.Context, e api.Event) {
	p.mu.Lock()
	p.legacy[e] = true
	first := !p.warned[e]
	p.warned[e] = true
	p.mu.Unlock()
	if !first {
		return
	}
	details := fmt.Sprintf("does not implement a dedicated %s RPC", e.PrettyName())
	if p.r.deprecated != nil {
		p.r.deprecated.PluginWarning(ctx, DeprecatedStateChange, p.name(), details)
		return
	}
	p.r.log.Warnf(ctx, "plugin %s %s and relies on the deprecated StateChange; it should be rebuilt with a newer NRI",
		p.name(), details)
}

func (p *plugin) recordInvocation(op string, start time.Time, err error) {
	p.r.metrics.RecordPluginLatency(p.name(), op, time.Since(start))
	p.r.metrics.RecordPluginInvocation(p.name(), op, err)
}
