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
	// InstanceIDEnvVar provides the default instance identity of a plugin
	// that opted in with WithHandover (others ignore it). In a
	// Kubernetes pod spec, set it from the downward API:
	//
	//	env:
	//	- name: NRI_PLUGIN_INSTANCE_ID
	//	  valueFrom: {fieldRef: {fieldPath: metadata.uid}}
	InstanceIDEnvVar = "NRI_PLUGIN_INSTANCE_ID"

	// GenerationEnvVar provides the default rollout generation of a plugin
	// that opted in with WithHandover (others ignore it). For a
	// DaemonSet pod:
	//
	//	env:
	//	- name: NRI_PLUGIN_GENERATION
	//	  valueFrom: {fieldRef: {fieldPath: "metadata.labels['pod-template-generation']"}}
	GenerationEnvVar = "NRI_PLUGIN_GENERATION"
)

// identityFromEnv presets what options may override, as upstream's New
// does: the name and index a runtime gives the plugins it launches.
func (s *stub) identityFromEnv() {
	s.name = os.Getenv(api.PluginNameEnvVar)
	s.idx = os.Getenv(api.PluginIdxEnvVar)
	s.pluginVersion = mainModuleVersion()
}

// handoverIdentityFromEnv fills the instance id and generation that options
// left unset. Only a plugin that opted into handover reads them: upstream's
// stub does not, so a plugin that did not opt in must not fail on them.
func (s *stub) handoverIdentityFromEnv() error {
	if !s.instanceIDSet {
		id := os.Getenv(InstanceIDEnvVar)
		if err := checkInstanceID(id); err != nil {
			return fmt.Errorf("$%s: %w", InstanceIDEnvVar, err)
		}
		s.instanceID = id
	}
	g := os.Getenv(GenerationEnvVar)
	if s.generationSet || g == "" {
		return nil
	}
	n, err := strconv.ParseUint(g, 10, 64)
	if err != nil {
		return fmt.Errorf("$%s=%q: want the rollout generation, a whole number (0 or more), or unset", GenerationEnvVar, g)
	}
	s.generation = n
	return nil
}

// completeIdentity takes whatever options and environment left unset from
// the executable's name, which pre-installed plugins carry as NN-name, as
// upstream's ensureIdentity does. Unlike upstream, a malformed index or name
// is refused here rather than by the runtime at registration: the same
// refusal, earlier and clearer.
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
	// Upstream takes the name from the executable too, even one set by
	// WithPluginName or $NRI_PLUGIN_NAME; a plugin that opted into handover
	// keeps the name it set, its identity across instances.
	if s.name == "" || !s.optedIn() {
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
