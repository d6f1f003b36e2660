package api

import "fmt"

// Helpers for the ValidateContainerAdjustment round, in which validator
// plugins see the merged result of all other plugins and may veto it.

// AddPlugin records that the plugin name with index took part in the adjustment.
func (v *ValidateContainerAdjustmentRequest) AddPlugin(name, index string) {
	v.Plugins = append(v.Plugins, &PluginInstance{Name: name, Index: index})
}

// AddResponse copies the adjustment and updates to validate from rpl.
func (v *ValidateContainerAdjustmentRequest) AddResponse(rpl *CreateContainerResponse) {
	v.Adjust = rpl.Adjust
	v.Update = rpl.Update
}

// AddOwners records which plugin set which field.
func (v *ValidateContainerAdjustmentRequest) AddOwners(owners *OwningPlugins) {
	v.Owners = owners
}

// ValidationResult turns a validator's answer into an error naming the
// validator and its reason, or nil if it accepted.
func (v *ValidateContainerAdjustmentResponse) ValidationResult(plugin string) error {
	if !v.GetReject() {
		return nil
	}
	reason := v.GetReason()
	if reason == "" {
		reason = "unknown rejection reason"
	}
	return fmt.Errorf("validator %q rejected container adjustment, reason: %s", plugin, reason)
}

// GetPluginMap indexes the participating plugins both by "index-name" (the
// full instance) and by bare name (a PluginInstance with the name only), so
// validators can check for a plugin with or without caring about its index.
func (v *ValidateContainerAdjustmentRequest) GetPluginMap() map[string]*PluginInstance {
	if v == nil {
		return nil
	}
	m := make(map[string]*PluginInstance, 2*len(v.Plugins))
	for _, p := range v.Plugins {
		m[p.Name] = &PluginInstance{Name: p.Name}
		m[p.Index+"-"+p.Name] = p
	}
	return m
}
