package thirdparty

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// samplePlugins are upstream containerd/nri's sample plugins
// (../shared/third_party/containerd-nri-plugins/plugins), each with a
// scenario carrying the annotations it acts on. The Upstream build links
// upstream v0.12.5 from the module cache (the plugin module's replace
// ../.. overridden); the Ours build links this module through the stand-in.
func (e *env) samplePlugins(t *testing.T) []client {
	dir := filepath.Join(e.thirdParty, "containerd-nri-plugins", "plugins")
	sample := func(name string) client {
		return client{name: name, module: filepath.Join(dir, name), pkg: ".",
			upstreamNRI: e.upstream, wantUpstream: "=>\t" + e.upstream}
	}
	twoCtrs := func(annotations map[string]string) scenario {
		return scenario{
			Pods:       []map[string]any{pod("pod0", annotations)},
			Containers: []map[string]any{ctr("ctr0", "pod0", "c0"), ctr("ctr1", "pod0", "c1")},
			Update: map[string]any{
				"memory": map[string]any{"limit": map[string]any{"value": "209715200"}},
				"cpu":    map[string]any{"shares": map[string]any{"value": "1024"}},
			},
		}
	}

	var cs []client

	c := sample("device-injector")
	c.scenario = twoCtrs(map[string]string{
		"devices.noderesource.dev/container.c0":           "- path: /dev/nri-null\n  type: c\n  major: 1\n  minor: 3\n  file_mode: 0666\n",
		"devices.nri.io/container.c1":                     "- path: /dev/nri-zero\n  type: c\n  major: 1\n  minor: 5\n",
		"mounts.noderesource.dev/container.c1":            "- source: /home\n  destination: /host-home\n  type: bind\n  options: [bind, ro]\n",
		"cdi-devices.noderesource.dev/container.c0":       "- vendor.example/dev=one\n",
		"io-priority.noderesource.dev/container.c1":       "class: IOPRIO_CLASS_BE\npriority: 4\n",
		"scheduling-policy.noderesource.dev/container.c0": "policy: SCHED_OTHER\nnice: 5\n",
		"sysctl.noderesource.dev/container.c1":            "net.ipv4.ip_forward: \"1\"\n",
		"memory-policy.noderesource.dev/container.c0":     "mode: MPOL_INTERLEAVE\nnodes: \"0\"\n",
	})
	c.expect = "/dev/nri-null"
	cs = append(cs, c)

	c = sample("hook-injector")
	c.args = []string{"-disableWatch", "-verbose"}
	c.scenario = twoCtrs(nil)
	c.expectLog = "Annotations"
	cs = append(cs, c)

	c = sample("ulimit-adjuster")
	c.scenario = twoCtrs(map[string]string{
		"ulimits.noderesource.dev/container.c0":  "- type: memlock\n  hard: 987654\n  soft: 645321\n- type: RLIMIT_NOFILE\n  hard: 4096\n  soft: 1024\n- type: nproc\n  hard: 9000\n",
		"ulimits.nri.containerd.io/container.c1": "- type: core\n  hard: 1\n  soft: 1\n",
	})
	c.expect = "RLIMIT_MEMLOCK"
	cs = append(cs, c)

	c = sample("logger")
	// Its adjustments carry its pid (logger-pid-N), which the records
	// normalise.
	c.args = []string{"-set-annotation", "logger.example/seen", "-add-env", "LOGGER_SEEN"}
	c.scenario = twoCtrs(map[string]string{"logger.example/seen": "before"})
	c.expect = "logger-pid-<pid>"
	c.expectLog = "RunPodSandbox"
	cs = append(cs, c)

	c = sample("differ")
	// It installs itself at two indices (0 and 99) over one socket: an
	// external client, started by the runtime once it serves the socket.
	c.args = []string{"-socket-path", "@CELL@/nri.sock", "-verbose-level", "3"}
	c.external = 2
	c.scenario = twoCtrs(map[string]string{"differ.example/seen": "yes"})
	c.expectLog = "pod0"
	cs = append(cs, c)

	c = sample("template")
	c.scenario = twoCtrs(nil)
	c.expectLog = "Started pod default/pod0"
	cs = append(cs, c)

	c = sample("network-device-injector")
	c.args = []string{"-verbose"}
	c.scenario = twoCtrs(map[string]string{
		"netdevice.noderesource.dev": "- name: nri-nonexistent0\n  new_name: eth33\n  address: 192.168.2.2\n  prefix: 24\n  mtu: 1500\n",
	})
	cs = append(cs, c)

	c = sample("network-logger")
	c.scenario = twoCtrs(nil)
	c.expectLog = "pod0"
	cs = append(cs, c)

	c = sample("rdt")
	c.scenario = twoCtrs(map[string]string{
		"closid.rdt.noderesource.dev/container.c0":           "gold",
		"schemata.rdt.noderesource.dev/container.c0":         "L3:0=ff,MB:0=50",
		"enablemonitoring.rdt.noderesource.dev/container.c1": "true",
	})
	c.expect = "gold"
	cs = append(cs, c)

	c = sample("writable-cgroups")
	c.args = []string{"-host-mount-file", "@CELL@/mountinfo"}
	c.scenario = twoCtrs(map[string]string{"writable-cgroups.noderesource.dev/container.c0": "true"})
	if _, err := os.Stat(filepath.Join(e.root, "containerd-nri", "pkg", "plugin")); err != nil {
		c.skip = "the stand-in has no pkg/plugin yet (being added on branch standin); writable-cgroups imports github.com/containerd/nri/pkg/plugin"
	}
	cs = append(cs, c)

	return cs
}

// clients are all the clients of the differential.
func (e *env) clients(t *testing.T) []client {
	return append(e.samplePlugins(t), e.nriPlugins(t)...)
}

// nriPluginsVersion is the containers/nri-plugins release the Go module
// proxy serves; it requires upstream NRI v0.11.0, which its Upstream builds
// link (its own requirement, unreplaced).
const nriPluginsVersion = "v0.14.0"

// nriPlugins are containers/nri-plugins' plugins, built unchanged in the
// module cache's copy of the release (read-only; go -modfile writes nothing
// there) with its nested module pkg/topology, which the release's zip lacks,
// from ../shared/third_party/nri-plugins-topology.
func (e *env) nriPlugins(t *testing.T) []client {
	topology := filepath.Join(e.thirdParty, "nri-plugins-topology", "pkg", "topology")
	mod, err := goOut(e.root, []string{"GOWORK=off", "GOFLAGS=-mod=mod"}, "mod", "download", "-json", "github.com/containers/nri-plugins@"+nriPluginsVersion)
	skip := ""
	dir := ""
	if err != nil {
		skip = "github.com/containers/nri-plugins@" + nriPluginsVersion + " is not available: " + err.Error()
	} else if dir = jsonField(mod, "Dir"); dir == "" {
		skip = "go mod download gave no directory for github.com/containers/nri-plugins: " + mod
	}
	if _, err := os.Stat(topology); err != nil && skip == "" {
		skip = "no nested module pkg/topology at " + topology
	}
	np := func(name, pkg string) client {
		return client{name: name, module: dir, pkg: "./cmd/plugins/" + pkg, wantUpstream: "v0.11.0",
			extra: []string{"github.com/containers/nri-plugins/pkg/topology@v0.0.0=" + topology}, skip: skip}
	}
	oneCtr := func(annotations map[string]string) scenario {
		return scenario{
			Pods:       []map[string]any{pod("pod0", annotations)},
			Containers: []map[string]any{ctr("ctr0", "pod0", "c0"), ctr("ctr1", "pod0", "c1")},
		}
	}
	var cs []client

	c := np("sgx-epc", "sgx-epc")
	c.scenario = oneCtr(map[string]string{"epc-limit.nri.io/container.c0": "65536", "epc-limit.nri.io/pod": "4096"})
	c.expect = "sgx_epc 65536"
	cs = append(cs, c)

	c = np("memory-qos", "memory-qos")
	c.config = "classes:\n- name: bronze\n  swaplimitratio: 0.5\n- name: silver\n  swaplimitratio: 0.2\nunifiedannotations:\n- memory.swap.max\n- memory.high\n"
	c.args = []string{"-vv"}
	c.scenario = oneCtr(map[string]string{
		"class.memory-qos.nri.io":              "bronze",
		"class.memory-qos.nri.io/c1":           "silver",
		"memory.swap.max.memory-qos.nri.io/c0": "max",
	})
	c.expect = "memory.high"
	cs = append(cs, c)

	if dir != "" {
		// The resource-policy template (pkg/resmgr): connects on its own,
		// configured from a file. Its build pulls Kubernetes' client
		// libraries (81 s on first build here), and its cells have no sign
		// of life checked yet (no expect/expectLog): opt in with
		// NRI_THIRDPARTY_POLICIES=1.
		c = np("nri-plugins-template", "template")
		if os.Getenv("NRI_THIRDPARTY_POLICIES") == "" {
			c.skip = "nri-plugins' resource-policy template: opt-in (NRI_THIRDPARTY_POLICIES=1) until its cells check a sign of life; its build pulls Kubernetes' client libraries"
		}
		c.external = 1
		c.args = []string{"-nri-socket", "@CELL@/nri.sock", "-nri-plugin-index", "10", "-pid-file", "@CELL@/pid",
			"-state-dir", "@CELL@/state", "-config-file", filepath.Join(dir, "sample-configs", "template-config.yaml")}
		c.scenario = oneCtr(nil)
		cs = append(cs, c)
	}
	return cs
}

// jsonField is the string field name of the JSON object in s.
func jsonField(s, name string) string {
	var m map[string]any
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		return ""
	}
	v, _ := m[name].(string)
	return v
}
