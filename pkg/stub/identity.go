package stub

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"

	"github.com/nri-handover/nri/api"
)

const (
	// InstanceIDEnvVar provides the default instance identity. In a
	// Kubernetes pod spec, set it from the downward API:
	//
	//	env:
	//	- name: NRI_PLUGIN_INSTANCE_ID
	//	  valueFrom: {fieldRef: {fieldPath: metadata.uid}}
	InstanceIDEnvVar = "NRI_PLUGIN_INSTANCE_ID"

	// GenerationEnvVar provides the default rollout generation. For a
	// DaemonSet pod:
	//
	//	env:
	//	- name: NRI_PLUGIN_GENERATION
	//	  valueFrom: {fieldRef: {fieldPath: "metadata.labels['pod-template-generation']"}}
	GenerationEnvVar = "NRI_PLUGIN_GENERATION"
)

// identityFromEnv fills the defaults that options may override.
func (s *stub) identityFromEnv() error {
	s.name = os.Getenv(api.PluginNameEnvVar)
	s.idx = os.Getenv(api.PluginIdxEnvVar)
	s.instanceID = os.Getenv(InstanceIDEnvVar)
	if g := os.Getenv(GenerationEnvVar); g != "" {
		n, err := strconv.ParseUint(g, 10, 64)
		if err != nil {
			return fmt.Errorf("invalid %s=%q: %w", GenerationEnvVar, g, err)
		}
		s.generation = n
	}
	s.pluginVersion = mainModuleVersion()
	return nil
}

// completeIdentity takes whatever options and environment left unset from
// the executable's name, which pre-installed plugins carry as NN-name.
func (s *stub) completeIdentity() error {
	if err := s.takeIdentityFromExecutable(); err != nil {
		return err
	}
	if err := api.CheckPluginName(s.name); err != nil {
		return err
	}
	return api.CheckPluginIndex(s.idx)
}

func (s *stub) takeIdentityFromExecutable() error {
	if s.idx != "" && s.name != "" {
		return nil
	}
	base := filepath.Base(os.Args[0])
	if s.idx != "" {
		s.name = base
		return nil
	}
	idx, name, err := api.ParsePluginName(base)
	if err != nil {
		return fmt.Errorf("plugin index unknown (set it with WithPluginIdx or %s): %w", api.PluginIdxEnvVar, err)
	}
	s.idx = idx
	if s.name == "" {
		s.name = name
	}
	return nil
}

// mainModuleVersion is the plugin's own version as the Go toolchain stamped it.
func mainModuleVersion() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok || bi.Main.Version == "" {
		return api.UnknownVersion
	}
	return bi.Main.Version
}

// libraryVersion is what RegisterPluginRequest.NRI_version carries: the
// upstream release whose API this module implements, in upstream's version
// space (an upstream runtime logs and may compare it), not our module's own
// version.
func libraryVersion() string { return api.UpstreamVersion }
