package adaptation

import (
	"context"
	"errors"
	"fmt"

	"github.com/nri-handover/nri/api"
)

// runtimeService serves the Runtime service to one plugin connection.
type runtimeService struct {
	p *plugin
}

var _ api.RuntimeService = (*runtimeService)(nil)

// RegisterPlugin records who the plugin is. External plugins choose their
// name and index; for pre-installed ones the runtime already set them from
// the executable's name and ignores what the plugin says.
func (s *runtimeService) RegisterPlugin(ctx context.Context, req *api.RegisterPluginRequest) (*api.RegisterPluginResponse, error) {
	p := s.p
	err := p.register(req)
	if err == nil {
		err = joinOf(p.r.reg, p).screen(ctx)
	}
	if err != nil {
		p.r.log.Errorf(ctx, "rejecting plugin registration: %v", err)
	}
	select {
	case p.regC <- err:
	default:
	}
	if err != nil {
		return nil, err
	}

	nriVersion := req.GetNRIVersion()
	if nriVersion == "" {
		nriVersion = "unknown"
	}
	p.r.log.Infof(ctx, "plugin %s registered (version %q, instance %q, generation %d, NRI %s, features %v)",
		p.qualifiedName(), req.GetPluginVersion(), req.GetInstanceId(), req.GetGeneration(), nriVersion, req.GetFeatures())

	return &api.RegisterPluginResponse{
		NRIVersion: p.r.nriVersion,
		Features:   p.offeredFeatures(),
	}, nil
}

// register validates and records a registration request.
func (p *plugin) register(req *api.RegisterPluginRequest) error {
	p.mu.Lock()
	defer p.mu.Unlock()

	switch {
	case p.conn == connClosing:
		return errors.New("plugin connection is closing")
	case p.conn == connRegistered:
		return fmt.Errorf("plugin %s is already registered", p.name())
	}

	if err := checkRegistration(req); err != nil {
		return err
	}
	// Recorded before the name is checked: a plugin that opted into
	// handover is refused with a Shutdown that says why (tellsShutdown),
	// one that did not only with the error, as upstream.
	p.features = append([]string(nil), req.GetFeatures()...)
	if p.kind == kindExternal {
		if err := api.CheckPluginName(req.GetPluginName()); err != nil {
			return fmt.Errorf("plugin registered with an invalid name: %w", err)
		}
		if err := api.CheckPluginIndex(req.GetPluginIdx()); err != nil {
			return fmt.Errorf("plugin %q registered with an invalid index: %w", req.GetPluginName(), err)
		}
		p.setName(req.GetPluginIdx(), req.GetPluginName())
	}

	p.conn = connRegistered
	p.nriVersion = req.GetNRIVersion()
	p.version = req.GetPluginVersion()
	p.instance = req.GetInstanceId()
	p.generation = req.GetGeneration()
	return nil
}

// UpdateContainers forwards a plugin's unsolicited container updates to the
// runtime and answers with what UpdateFn returned, as upstream does. It runs
// on the connection's own goroutine, never under the adaptation's lock.
// During a plugin switch it waits for the switch's hold first (hold.go), and
// who may update is checked again once it has: an instance superseded
// meanwhile is refused.
func (s *runtimeService) UpdateContainers(ctx context.Context, req *api.UpdateContainersRequest) (*api.UpdateContainersResponse, error) {
	p := s.p
	if err := p.r.reg.mayUpdate(p); err != nil {
		p.r.log.Warnf(ctx, "refusing container updates from plugin %s: %v", p.name(), err)
		return nil, err
	}
	if n := len(req.GetEvict()); n > 0 {
		p.r.log.Warnf(ctx, "plugin %s requested %d unsolicited evictions, which UpdateFn cannot carry; ignoring them",
			p.name(), n)
	}

	p.r.log.Infof(ctx, "plugin %s requested %d container updates", p.name(), len(req.GetUpdate()))
	deferred, err := p.r.passHolds(ctx, p, req.GetUpdate())
	switch {
	case err != nil:
		err = fmt.Errorf("updates from plugin %s not applied while a plugin switch is in progress: %w", p.name(), err)
		p.r.log.Warnf(ctx, "%v", err)
		return nil, err
	case deferred:
		p.r.log.Infof(ctx, "plugin %s: updates deferred until its switch is over", p.name())
		return &api.UpdateContainersResponse{}, nil
	}
	if err := p.r.reg.mayUpdate(p); err != nil {
		p.r.log.Warnf(ctx, "refusing container updates from plugin %s: %v", p.name(), err)
		return nil, err
	}
	failed, err := p.r.updateContainers(ctx, req.GetUpdate())
	if err != nil {
		err = fmt.Errorf("runtime failed to apply updates from plugin %s: %w", p.name(), err)
	}
	return &api.UpdateContainersResponse{Failed: failed}, err
}
