// Package validator is NRI's default validator: a builtin plugin the runtime
// enables by configuration to reject container adjustments an operator does
// not allow (OCI hooks, seccomp or namespace changes, sysctls) and to insist
// that required plugins took part in creating a container.
package validator

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	yaml "go.yaml.in/yaml/v3"

	"github.com/nri-handover/nri/api"
	nrilog "github.com/nri-handover/nri/pkg/log"
	"github.com/nri-handover/nri/pkg/plugin"
)

// DefaultValidatorConfig configures the default validator. The field tags
// match upstream NRI so runtime configuration files keep working.
type DefaultValidatorConfig struct {
	// Enable turns the default validator on.
	Enable bool `yaml:"enable" toml:"enable"`
	// RejectOCIHookAdjustment rejects containers into which a plugin injects OCI hooks.
	RejectOCIHookAdjustment bool `yaml:"rejectOCIHookAdjustment" toml:"reject_oci_hook_adjustment"`
	// RejectRuntimeDefaultSeccompAdjustment rejects seccomp policy changes of
	// containers running with the runtime's default profile.
	RejectRuntimeDefaultSeccompAdjustment bool `yaml:"rejectRuntimeDefaultSeccompAdjustment" toml:"reject_runtime_default_seccomp_adjustment"`
	// RejectUnconfinedSeccompAdjustment rejects seccomp policy changes of
	// unconfined containers.
	RejectUnconfinedSeccompAdjustment bool `yaml:"rejectUnconfinedSeccompAdjustment" toml:"reject_unconfined_seccomp_adjustment"`
	// RejectCustomSeccompAdjustment rejects seccomp policy changes of
	// containers with a custom (localhost) profile.
	RejectCustomSeccompAdjustment bool `yaml:"rejectCustomSeccompAdjustment" toml:"reject_custom_seccomp_adjustment"`
	// RejectNamespaceAdjustment rejects any change of Linux namespaces.
	RejectNamespaceAdjustment bool `yaml:"rejectNamespaceAdjustment" toml:"reject_namespace_adjustment"`
	// RejectSysctlAdjustment rejects any change of sysctls.
	RejectSysctlAdjustment bool `yaml:"rejectSysctlAdjustment" toml:"reject_sysctl_adjustment"`
	// RequiredPlugins must have taken part in creating every container.
	// Being global, this also holds for static pods: annotate those with
	// TolerateMissingAnnotation or they will not start.
	RequiredPlugins []string `yaml:"requiredPlugins" toml:"required_plugins"`
	// TolerateMissingAnnotation, if set, is an annotation key whose true
	// value lets a pod or container start without its required plugins.
	TolerateMissingAnnotation string `yaml:"tolerateMissingPluginsAnnotation" toml:"tolerate_missing_plugins_annotation"`
}

// DefaultValidator checks merged container adjustments against its configuration.
type DefaultValidator struct {
	cfg DefaultValidatorConfig
}

const (
	// RequiredPlugins is the pod annotation listing further plugins (a YAML
	// list) that must take part in creating its containers. It may be scoped
	// as RequiredPlugins+"/pod" or RequiredPlugins+"/container.NAME".
	RequiredPlugins = plugin.RequiredPluginsAnnotation
)

// ErrValidation is wrapped by every rejection.
var ErrValidation = errors.New("validation error")

// NewDefaultValidator returns a validator using a copy of cfg.
func NewDefaultValidator(cfg *DefaultValidatorConfig) *DefaultValidator {
	v := &DefaultValidator{}
	v.SetConfig(cfg)
	return v
}

// SetConfig replaces the configuration; nil keeps the current one.
func (v *DefaultValidator) SetConfig(cfg *DefaultValidatorConfig) {
	if cfg == nil {
		return
	}
	v.cfg = *cfg
	v.cfg.RequiredPlugins = slices.Clone(cfg.RequiredPlugins)
}

// ValidateContainerAdjustment returns an error wrapping ErrValidation if the
// adjustment in req breaks the configured rules.
func (v *DefaultValidator) ValidateContainerAdjustment(ctx context.Context, req *api.ValidateContainerAdjustmentRequest) error {
	// Through pkg/log, like the rest of the runtime side: the runtime's log.
	nrilog.Debugf(ctx, "default-validator: validating adjustment of container %s/%s/%s",
		req.GetPod().GetNamespace(), req.GetPod().GetName(), req.GetContainer().GetName())

	for _, check := range []func(*api.ValidateContainerAdjustmentRequest) error{
		v.validateOCIHooks,
		v.validateSeccompPolicy,
		v.validateNamespaces,
		v.validateRequiredPlugins,
		v.validateSysctl,
	} {
		if err := check(req); err != nil {
			nrilog.Errorf(ctx, "default-validator: rejecting adjustment: %v", err)
			return err
		}
	}
	return nil
}

func (v *DefaultValidator) validateOCIHooks(req *api.ValidateContainerAdjustmentRequest) error {
	if !v.cfg.RejectOCIHookAdjustment || req.GetAdjust() == nil {
		return nil
	}
	owners, injected := req.GetOwners().HooksOwner(req.GetContainer().GetId())
	if !injected {
		return nil
	}
	return fmt.Errorf("%w: %s injected OCI hooks, which is not allowed",
		ErrValidation, offenders(strings.Split(owners, ",")))
}

func (v *DefaultValidator) validateSeccompPolicy(req *api.ValidateContainerAdjustmentRequest) error {
	if req.GetAdjust() == nil {
		return nil
	}
	owner, adjusted := req.GetOwners().SeccompPolicyOwner(req.GetContainer().GetId())
	if !adjusted {
		return nil
	}

	profile := req.GetContainer().GetLinux().GetSeccompProfile()
	var reject bool
	var kind string
	switch {
	case profile == nil || profile.GetProfileType() == api.SecurityProfile_UNCONFINED:
		reject, kind = v.cfg.RejectUnconfinedSeccompAdjustment, "unconfined"
	case profile.GetProfileType() == api.SecurityProfile_RUNTIME_DEFAULT:
		reject, kind = v.cfg.RejectRuntimeDefaultSeccompAdjustment, "runtime default"
	case profile.GetProfileType() == api.SecurityProfile_LOCALHOST:
		reject, kind = v.cfg.RejectCustomSeccompAdjustment, "custom"
	}
	if !reject {
		return nil
	}
	return fmt.Errorf("%w: %s changed the %s seccomp policy, which is not allowed",
		ErrValidation, offenders([]string{owner}), kind)
}

func (v *DefaultValidator) validateNamespaces(req *api.ValidateContainerAdjustmentRequest) error {
	if !v.cfg.RejectNamespaceAdjustment || req.GetAdjust() == nil {
		return nil
	}
	owners, adjusted := req.GetOwners().NamespaceOwners(req.GetContainer().GetId())
	if !adjusted || len(owners) == 0 {
		return nil
	}
	var changes []string
	for _, ns := range sortedKeys(owners) {
		changes = append(changes, fmt.Sprintf("%q by plugin %q", ns, api.ClearRemovalMarker(owners[ns])))
	}
	return fmt.Errorf("%w: changing namespaces is not allowed: %s",
		ErrValidation, strings.Join(changes, ", "))
}

func (v *DefaultValidator) validateSysctl(req *api.ValidateContainerAdjustmentRequest) error {
	if !v.cfg.RejectSysctlAdjustment {
		return nil
	}
	var owners []string
	for _, key := range sortedKeys(req.GetAdjust().GetLinux().GetSysctl()) {
		// Removals are changes too: look the owner up by the bare key.
		owner, claimed := req.GetOwners().SysctlOwner(req.GetContainer().GetId(), api.ClearRemovalMarker(key))
		if claimed {
			owners = append(owners, owner)
		}
	}
	if len(owners) == 0 {
		return nil
	}
	return fmt.Errorf("%w: %s changed sysctls, which is not allowed", ErrValidation, offenders(owners))
}

func (v *DefaultValidator) validateRequiredPlugins(req *api.ValidateContainerAdjustmentRequest) error {
	container := req.GetContainer().GetName()
	required := slices.Clone(v.cfg.RequiredPlugins)

	if key := v.cfg.TolerateMissingAnnotation; key != "" {
		if value, ok := plugin.GetEffectiveAnnotation(req.GetPod(), key, container); ok {
			tolerate, err := strconv.ParseBool(value)
			if err != nil {
				return fmt.Errorf("%w: invalid %s annotation %q: %w", ErrValidation, key, value, err)
			}
			if tolerate {
				return nil
			}
		}
	}

	if value, ok := plugin.GetEffectiveAnnotation(req.GetPod(), RequiredPlugins, container); ok {
		var annotated []string
		if err := yaml.Unmarshal([]byte(value), &annotated); err != nil {
			return fmt.Errorf("%w: invalid %s annotation %q: %w", ErrValidation, RequiredPlugins, value, err)
		}
		required = append(required, annotated...)
	}
	if len(required) == 0 {
		return nil
	}

	// A requirement is a plugin name, or "index-name" for one instance.
	present := req.GetPluginMap()
	var missing []string
	for _, name := range required {
		if _, ok := present[name]; !ok && !slices.Contains(missing, name) {
			missing = append(missing, name)
		}
	}
	switch len(missing) {
	case 0:
		return nil
	case 1:
		return fmt.Errorf("%w: required plugin %q not present", ErrValidation, missing[0])
	default:
		return fmt.Errorf("%w: required plugins %q not present", ErrValidation, strings.Join(missing, ","))
	}
}

// offenders names the plugins (without removal markers, deduplicated) for an error.
func offenders(owners []string) string {
	var names []string
	for _, o := range owners {
		if n := api.ClearRemovalMarker(strings.TrimSpace(o)); n != "" && !slices.Contains(names, n) {
			names = append(names, n)
		}
	}
	if len(names) == 1 {
		return fmt.Sprintf("plugin %q", names[0])
	}
	return fmt.Sprintf("plugins %q", strings.Join(names, ","))
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
