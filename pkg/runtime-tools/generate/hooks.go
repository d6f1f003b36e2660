package generate

import (
	rspec "github.com/opencontainers/runtime-spec/specs-go"

	nri "github.com/nri-handover/nri/api"
)

// AdjustHooks appends the OCI hooks, per kind, in adjustment order.
func (g *Generator) AdjustHooks(hooks *nri.Hooks) {
	if hooks == nil {
		return
	}
	for _, kind := range []struct {
		hooks []*nri.Hook
		add   func(rspec.Hook)
	}{
		{hooks.Prestart, g.AddPreStartHook},
		{hooks.Poststart, g.AddPostStartHook},
		{hooks.Poststop, g.AddPostStopHook},
		{hooks.CreateRuntime, g.AddCreateRuntimeHook},
		{hooks.CreateContainer, g.AddCreateContainerHook},
		{hooks.StartContainer, g.AddStartContainerHook},
	} {
		for _, h := range kind.hooks {
			if h != nil {
				kind.add(h.ToOCI())
			}
		}
	}
}

// AddCreateRuntimeHook appends a createRuntime hook (runtime-tools has no
// method for the three newer kinds).
func (g *Generator) AddCreateRuntimeHook(hook rspec.Hook) {
	h := g.hooks()
	h.CreateRuntime = append(h.CreateRuntime, hook)
}

// AddCreateContainerHook appends a createContainer hook.
func (g *Generator) AddCreateContainerHook(hook rspec.Hook) {
	h := g.hooks()
	h.CreateContainer = append(h.CreateContainer, hook)
}

// AddStartContainerHook appends a startContainer hook.
func (g *Generator) AddStartContainerHook(hook rspec.Hook) {
	h := g.hooks()
	h.StartContainer = append(h.StartContainer, hook)
}
