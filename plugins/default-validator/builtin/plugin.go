// Package builtin wraps the default validator as a builtin NRI plugin, the
// form in which the runtime adaptation runs it (see WithDefaultValidator).
package builtin

import (
	"context"

	"github.com/nri-handover/nri/pkg/adaptation/builtin"
	nrilog "github.com/nri-handover/nri/pkg/log"
	validator "github.com/nri-handover/nri/plugins/default-validator"
)

// DefaultValidatorConfig is the default validator's configuration.
type DefaultValidatorConfig = validator.DefaultValidatorConfig

const (
	// PluginName and PluginIndex identify the default validator among
	// plugins. Index 00 makes it the first plugin in event order.
	PluginName  = "default-validator"
	PluginIndex = "00"
)

// GetDefaultValidator returns the default validator as a builtin plugin,
// or nil if cfg does not enable it.
func GetDefaultValidator(cfg *DefaultValidatorConfig) *builtin.BuiltinPlugin {
	if cfg == nil || !cfg.Enable {
		nrilog.Infof(context.TODO(), "built-in NRI default validator is disabled")
		return nil
	}
	v := validator.NewDefaultValidator(cfg)
	return &builtin.BuiltinPlugin{
		Base:  PluginName,
		Index: PluginIndex,
		Handlers: builtin.BuiltinHandlers{
			ValidateContainerAdjustment: v.ValidateContainerAdjustment,
		},
	}
}
