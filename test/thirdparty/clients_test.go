package thirdparty

import (
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

// nriPlugins are containers/nri-plugins v0.14.0's plugins; none yet.
func (e *env) nriPlugins(t *testing.T) []client { return nil }
