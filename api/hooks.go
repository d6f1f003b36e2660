package api

import (
	rspec "github.com/opencontainers/runtime-spec/specs-go"
)

// hookLists returns pointers to every per-stage hook list of h, in OCI order,
// so helpers can treat the stages uniformly.
func (hooks *Hooks) hookLists() []*[]*Hook {
	return []*[]*Hook{
		&hooks.Prestart,
		&hooks.CreateRuntime,
		&hooks.CreateContainer,
		&hooks.StartContainer,
		&hooks.Poststart,
		&hooks.Poststop,
	}
}

// Append adds h's hooks after the existing ones, stage by stage, and returns
// the receiver.
func (hooks *Hooks) Append(h *Hooks) *Hooks {
	if h == nil {
		return hooks
	}
	dst, src := hooks.hookLists(), h.hookLists()
	for i := range dst {
		*dst[i] = append(*dst[i], *src[i]...)
	}
	return hooks
}

// Hooks returns the receiver if it holds at least one hook and nil otherwise,
// so callers can drop empty hook sets before handing them on.
func (hooks *Hooks) Hooks() *Hooks {
	if hooks == nil {
		return nil
	}
	for _, l := range hooks.hookLists() {
		if len(*l) > 0 {
			return hooks
		}
	}
	return nil
}

// ToOCI converts h to its OCI runtime-spec form.
func (h *Hook) ToOCI() rspec.Hook {
	return rspec.Hook{
		Path:    h.Path,
		Args:    DupStringSlice(h.Args),
		Env:     DupStringSlice(h.Env),
		Timeout: h.Timeout.Get(),
	}
}

// FromOCIHooks converts OCI hooks; nil stays nil.
func FromOCIHooks(o *rspec.Hooks) *Hooks {
	if o == nil {
		return nil
	}
	return &Hooks{
		Prestart:        FromOCIHookSlice(o.Prestart), //nolint:staticcheck // deprecated in OCI, still carried
		CreateRuntime:   FromOCIHookSlice(o.CreateRuntime),
		CreateContainer: FromOCIHookSlice(o.CreateContainer),
		StartContainer:  FromOCIHookSlice(o.StartContainer),
		Poststart:       FromOCIHookSlice(o.Poststart),
		Poststop:        FromOCIHookSlice(o.Poststop),
	}
}

// FromOCIHookSlice converts a list of OCI hooks; an empty list yields nil.
func FromOCIHookSlice(o []rspec.Hook) []*Hook {
	var hooks []*Hook
	for _, h := range o {
		hooks = append(hooks, &Hook{
			Path:    h.Path,
			Args:    DupStringSlice(h.Args),
			Env:     DupStringSlice(h.Env),
			Timeout: Int(h.Timeout),
		})
	}
	return hooks
}
