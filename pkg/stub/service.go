package stub

import (
	"context"
	"fmt"
	"time"

	"github.com/nri-handover/nri/api"
)

// service answers the runtime's calls on one session.
type service struct {
	s    *stub
	sess *session
}

var _ api.PluginService = (*service)(nil)

// Configure records the runtime's parameters and subscribes the plugin.
func (v *service) Configure(ctx context.Context, req *api.ConfigureRequest) (*api.ConfigureResponse, error) {
	s := v.s
	s.logger.Infof(ctx, "plugin %s: configuring for runtime %s %s (NRI %s, features %v)",
		s.Name(), req.GetRuntimeName(), req.GetRuntimeVersion(), req.GetNRIVersion(), req.GetFeatures())

	s.mu.Lock()
	if ms := req.GetRegistrationTimeout(); ms > 0 {
		s.registrationTimeout = time.Duration(ms) * time.Millisecond
	}
	if ms := req.GetRequestTimeout(); ms > 0 {
		s.requestTimeout = time.Duration(ms) * time.Millisecond
	}
	s.runtimeNRIVersion = runtimeNRIVersion(req)
	v.sess.configured = true
	if s.handover && api.HasFeature(req.GetFeatures(), api.FeatureHandover) {
		v.sess.handover = true
	}
	s.evalReadiness(v.sess)
	s.mu.Unlock()

	events, err := v.subscription(ctx, req)
	v.sess.cfgOnce.Do(func() { v.sess.cfgC <- err })
	if err != nil {
		s.logger.Errorf(ctx, "plugin %s: configuration failed: %v", s.Name(), err)
		return nil, err
	}
	s.logger.Infof(ctx, "plugin %s subscribes to %s", s.Name(), maskString(events))
	return &api.ConfigureResponse{Events: int32(events), FailurePolicy: s.failurePolicy}, nil
}

// runtimeNRIVersion takes the runtime's NRI version from Configure, guessing
// it from the runtime's own version for runtimes that do not report it.
func runtimeNRIVersion(req *api.ConfigureRequest) string {
	switch v := req.GetNRIVersion(); v {
	case "", api.DevelVersion, api.UnknownVersion:
		if inferred, err := api.InferVersionFromRuntime(req.GetRuntimeName(), req.GetRuntimeVersion()); err == nil {
			return inferred
		}
		if v == "" {
			return api.UnknownVersion
		}
		return v
	default:
		return v
	}
}

// subscription asks the plugin which of its events it wants this time.
func (v *service) subscription(ctx context.Context, req *api.ConfigureRequest) (EventMask, error) {
	s := v.s
	if s.h.configure == nil {
		return s.events, nil
	}
	events, err := s.h.configure(ctx, req.GetConfig(), req.GetRuntimeName(), req.GetRuntimeVersion())
	if err != nil {
		return 0, err // the runtime, and the log line above, name the plugin
	}
	if events == 0 {
		return s.events, nil
	}
	if extra := events &^ s.events; extra != 0 {
		return 0, fmt.Errorf("subscribed to events it has no handler for: %s", maskString(extra))
	}
	return events, nil
}

// Shutdown records why the runtime is about to disconnect and tells the plugin.
func (v *service) Shutdown(ctx context.Context, req *api.ShutdownRequest) (*api.Empty, error) {
	s := v.s
	sd := newShutdownError(s.Name(), req)
	s.logger.Infof(ctx, "runtime shuts the plugin down: %v", sd)

	s.mu.Lock()
	if v.sess.shutdown == nil {
		v.sess.shutdown = sd
	}
	s.evalReadiness(v.sess)
	s.mu.Unlock()

	// The plugin hears the reason before Run may return on it.
	if f := s.h.shutdownWithReason; f != nil {
		f(ctx, req)
	}
	if f := s.h.shutdown; f != nil {
		f(ctx)
	}
	v.sess.shutdownOnce.Do(func() { close(v.sess.shutdownC) })
	return &api.Empty{}, nil
}

// RoleChange moves readiness with the role. For ACTIVE the plugin's handler
// runs first, so the instance is ready only once the plugin accepted; for
// STANDBY readiness drops before the handler runs.
func (v *service) RoleChange(ctx context.Context, req *api.RoleChangeRequest) (*api.Empty, error) {
	s := v.s
	role := req.GetRole()
	s.logger.Infof(ctx, "plugin %s: runtime assigns role %s (peer version %q, instance %q, generation %d): %s",
		s.Name(), role, req.GetPeerVersion(), req.GetPeerInstance(), req.GetPeerGeneration(), req.GetMessage())

	setRole := func() {
		s.mu.Lock()
		v.sess.handover = s.handover // only handover runtimes send roles, and only to plugins that opted in
		v.sess.role = role
		s.evalReadiness(v.sess)
		s.mu.Unlock()
	}

	switch role {
	case api.PluginRole_PLUGIN_ROLE_ACTIVE:
		if err := v.callRoleChange(ctx, req); err != nil {
			return nil, err
		}
		setRole()
	case api.PluginRole_PLUGIN_ROLE_STANDBY:
		setRole()
		if err := v.callRoleChange(ctx, req); err != nil {
			return nil, err
		}
	default:
		return nil, fmt.Errorf("unknown role %v", role)
	}
	return &api.Empty{}, nil
}

func (v *service) callRoleChange(ctx context.Context, req *api.RoleChangeRequest) error {
	if f := v.s.h.roleChange; f != nil {
		if err := f(ctx, req); err != nil {
			return fmt.Errorf("role change to %s: %w", req.GetRole(), err)
		}
	}
	return nil
}

func (v *service) RunPodSandbox(ctx context.Context, req *api.RunPodSandboxRequest) (*api.RunPodSandboxResponse, error) {
	if f := v.s.h.runPod; f != nil {
		return &api.RunPodSandboxResponse{}, f(ctx, req.GetPod())
	}
	return &api.RunPodSandboxResponse{}, nil
}

func (v *service) UpdatePodSandbox(ctx context.Context, req *api.UpdatePodSandboxRequest) (*api.UpdatePodSandboxResponse, error) {
	if f := v.s.h.updatePod; f != nil {
		return &api.UpdatePodSandboxResponse{}, f(ctx, req.GetPod(), req.GetOverheadLinuxResources(), req.GetLinuxResources())
	}
	return &api.UpdatePodSandboxResponse{}, nil
}

func (v *service) PostUpdatePodSandbox(ctx context.Context, req *api.PostUpdatePodSandboxRequest) (*api.PostUpdatePodSandboxResponse, error) {
	if f := v.s.h.postUpdatePod; f != nil {
		return &api.PostUpdatePodSandboxResponse{}, f(ctx, req.GetPod())
	}
	return &api.PostUpdatePodSandboxResponse{}, nil
}

func (v *service) StopPodSandbox(ctx context.Context, req *api.StopPodSandboxRequest) (*api.StopPodSandboxResponse, error) {
	if f := v.s.h.stopPod; f != nil {
		return &api.StopPodSandboxResponse{}, f(ctx, req.GetPod())
	}
	return &api.StopPodSandboxResponse{}, nil
}

func (v *service) RemovePodSandbox(ctx context.Context, req *api.RemovePodSandboxRequest) (*api.RemovePodSandboxResponse, error) {
	if f := v.s.h.removePod; f != nil {
		return &api.RemovePodSandboxResponse{}, f(ctx, req.GetPod())
	}
	return &api.RemovePodSandboxResponse{}, nil
}

func (v *service) CreateContainer(ctx context.Context, req *api.CreateContainerRequest) (*api.CreateContainerResponse, error) {
	f := v.s.h.createContainer
	if f == nil {
		return &api.CreateContainerResponse{}, nil
	}
	adjust, update, err := f(ctx, req.GetPod(), req.GetContainer())
	if err != nil {
		return nil, err
	}
	return &api.CreateContainerResponse{Adjust: adjust, Update: update}, nil
}

func (v *service) PostCreateContainer(ctx context.Context, req *api.PostCreateContainerRequest) (*api.PostCreateContainerResponse, error) {
	if f := v.s.h.postCreateContainer; f != nil {
		return &api.PostCreateContainerResponse{}, f(ctx, req.GetPod(), req.GetContainer())
	}
	return &api.PostCreateContainerResponse{}, nil
}

func (v *service) StartContainer(ctx context.Context, req *api.StartContainerRequest) (*api.StartContainerResponse, error) {
	if f := v.s.h.startContainer; f != nil {
		return &api.StartContainerResponse{}, f(ctx, req.GetPod(), req.GetContainer())
	}
	return &api.StartContainerResponse{}, nil
}

func (v *service) PostStartContainer(ctx context.Context, req *api.PostStartContainerRequest) (*api.PostStartContainerResponse, error) {
	if f := v.s.h.postStartContainer; f != nil {
		return &api.PostStartContainerResponse{}, f(ctx, req.GetPod(), req.GetContainer())
	}
	return &api.PostStartContainerResponse{}, nil
}

func (v *service) UpdateContainer(ctx context.Context, req *api.UpdateContainerRequest) (*api.UpdateContainerResponse, error) {
	f := v.s.h.updateContainer
	if f == nil {
		return &api.UpdateContainerResponse{}, nil
	}
	update, err := f(ctx, req.GetPod(), req.GetContainer(), req.GetLinuxResources())
	if err != nil {
		return nil, err
	}
	return &api.UpdateContainerResponse{Update: update}, nil
}

func (v *service) PostUpdateContainer(ctx context.Context, req *api.PostUpdateContainerRequest) (*api.PostUpdateContainerResponse, error) {
	if f := v.s.h.postUpdateContainer; f != nil {
		return &api.PostUpdateContainerResponse{}, f(ctx, req.GetPod(), req.GetContainer())
	}
	return &api.PostUpdateContainerResponse{}, nil
}

func (v *service) StopContainer(ctx context.Context, req *api.StopContainerRequest) (*api.StopContainerResponse, error) {
	f := v.s.h.stopContainer
	if f == nil {
		return &api.StopContainerResponse{}, nil
	}
	update, err := f(ctx, req.GetPod(), req.GetContainer())
	if err != nil {
		return nil, err
	}
	return &api.StopContainerResponse{Update: update}, nil
}

func (v *service) RemoveContainer(ctx context.Context, req *api.RemoveContainerRequest) (*api.RemoveContainerResponse, error) {
	if f := v.s.h.removeContainer; f != nil {
		return &api.RemoveContainerResponse{}, f(ctx, req.GetPod(), req.GetContainer())
	}
	return &api.RemoveContainerResponse{}, nil
}

// StateChange carries the notification-only events; it routes them through
// the tables built by setupHandlers.
func (v *service) StateChange(ctx context.Context, evt *api.StateChangeEvent) (*api.Empty, error) {
	if f, ok := v.s.h.podEvents[evt.GetEvent()]; ok {
		return &api.Empty{}, f(ctx, evt.GetPod())
	}
	if f, ok := v.s.h.containerEvents[evt.GetEvent()]; ok {
		return &api.Empty{}, f(ctx, evt.GetPod(), evt.GetContainer())
	}
	return &api.Empty{}, nil
}

// ValidateContainerAdjustment turns the plugin's error into a rejection the
// runtime reports, rather than a failed call.
func (v *service) ValidateContainerAdjustment(ctx context.Context, req *api.ValidateContainerAdjustmentRequest) (*api.ValidateContainerAdjustmentResponse, error) {
	if f := v.s.h.validate; f != nil {
		if err := f(ctx, req); err != nil {
			return &api.ValidateContainerAdjustmentResponse{Reject: true, Reason: err.Error()}, nil
		}
	}
	return &api.ValidateContainerAdjustmentResponse{}, nil
}

// UpdateContainers sends unsolicited updates to the runtime.
func (s *stub) UpdateContainers(update []*api.ContainerUpdate) ([]*api.ContainerUpdate, error) {
	s.mu.Lock()
	var runtime api.RuntimeService
	if s.cur != nil && !s.cur.closed {
		runtime = s.cur.runtime
	}
	s.mu.Unlock()
	if runtime == nil {
		return nil, ErrNoService
	}

	rpl, err := runtime.UpdateContainers(context.Background(), &api.UpdateContainersRequest{Update: update})
	if err != nil {
		return rpl.GetFailed(), fmt.Errorf("plugin %s: updating containers: %w", s.Name(), err)
	}
	return rpl.GetFailed(), nil
}
