package nri

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	oci "github.com/opencontainers/runtime-spec/specs-go"

	types "github.com/containerd/nri/types/v1"
)

type fakeTask struct {
	specCalls int
	spec      *oci.Spec
}

func (t *fakeTask) ID() string  { return "ctr-1" }
func (t *fakeTask) Pid() uint32 { return 4242 }
func (t *fakeTask) Spec(context.Context) (*oci.Spec, error) {
	t.specCalls++
	if t.spec == nil {
		return nil, errors.New("no spec")
	}
	return t.spec, nil
}

// plugin writes an executable v0.1 plugin that saves its stdin and
// arguments next to itself and prints output, exiting with code.
func plugin(t *testing.T, dir, name, output string, code int) string {
	t.Helper()
	path := filepath.Join(dir, name)
	script := "#!/bin/sh\necho \"$@\" > '" + path + ".args'\ncat > '" + path + ".stdin'\nprintf '%s' '" + output + "'\nexit " + string(rune('0'+code)) + "\n"
	if err := os.WriteFile(path, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

func client(t *testing.T, conf string) *Client {
	t.Helper()
	path := filepath.Join(t.TempDir(), "conf.json")
	if err := os.WriteFile(path, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := loadConfig(path)
	if err != nil {
		t.Fatal(err)
	}
	return &Client{conf: c}
}

// On a node without /etc/nri/conf.json (the normal case) there is nothing
// to run, and the task is not even asked for its spec.
func TestNoConfigurationNoPlugins(t *testing.T) {
	conf, err := loadConfig(filepath.Join(t.TempDir(), "absent.json"))
	if err != nil || conf.Version != Version || len(conf.Plugins) != 0 {
		t.Fatalf("missing configuration: %+v, %v", conf, err)
	}
	c := &Client{conf: conf}
	if p := c.Plugins(); p == nil || len(p) != 0 {
		t.Fatalf("plugins %#v, want an empty list", p)
	}
	task := &fakeTask{}
	res, err := c.InvokeWithSandbox(context.Background(), task, types.Create, &Sandbox{ID: "sb"})
	if res != nil || err != nil || task.specCalls != 0 {
		t.Fatalf("invoke without plugins: %v, %v, %d spec calls", res, err, task.specCalls)
	}
}

func TestNewOnThisHost(t *testing.T) {
	if _, err := os.Stat(DefaultConfPath); err == nil {
		t.Skipf("%s exists here", DefaultConfPath)
	}
	path := os.Getenv("PATH")
	t.Cleanup(func() { os.Setenv("PATH", path) })
	c, err := New()
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Plugins()) != 0 {
		t.Fatalf("plugins %v", c.Plugins())
	}
	if !strings.HasSuffix(os.Getenv("PATH"), ":"+DefaultBinaryPath) {
		t.Errorf("PATH %q does not end in %s", os.Getenv("PATH"), DefaultBinaryPath)
	}
}

func TestMalformedConfiguration(t *testing.T) {
	path := filepath.Join(t.TempDir(), "conf.json")
	if err := os.WriteFile(path, []byte("{not json"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := loadConfig(path); err == nil {
		t.Fatal("malformed configuration accepted")
	}
}

func TestInvokeRunsPluginsInOrder(t *testing.T) {
	dir := t.TempDir()
	first := plugin(t, dir, "first", `{"plugin":"first","version":"0.1","metadata":{"k":"v"}}`, 0)
	second := plugin(t, dir, "second", `{"plugin":"second","version":"0.1"}`, 0)
	c := client(t, `{"version":"0.1","plugins":[{"type":"`+first+`","conf":{"a":1}},{"type":"`+second+`"}]}`)
	if got := strings.Join(c.Plugins(), ","); got != first+","+second {
		t.Fatalf("plugins %s", got)
	}
	task := &fakeTask{spec: &oci.Spec{
		Annotations: map[string]string{"an": "1"},
		Linux: &oci.Linux{
			CgroupsPath: "/pod/ctr",
			Namespaces:  []oci.LinuxNamespace{{Type: oci.NetworkNamespace, Path: "/run/netns/x"}, {Type: oci.PIDNamespace}},
			Resources:   &oci.LinuxResources{CPU: &oci.LinuxCPU{Cpus: "1"}},
		},
	}}
	res, err := c.InvokeWithSandbox(context.Background(), task, types.Create, &Sandbox{ID: "sb", Labels: map[string]string{"l": "x"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 2 || res[0].Plugin != "first" || res[0].Metadata["k"] != "v" || res[1].Plugin != "second" {
		t.Fatalf("results %+v", res)
	}
	args, _ := os.ReadFile(first + ".args")
	if strings.TrimSpace(string(args)) != "invoke" {
		t.Errorf("plugin arguments %q", args)
	}

	var firstReq, secondReq types.Request
	for p, r := range map[string]*types.Request{first: &firstReq, second: &secondReq} {
		data, err := os.ReadFile(p + ".stdin")
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(data, r); err != nil {
			t.Fatal(err)
		}
	}
	if firstReq.ID != "ctr-1" || firstReq.Pid != 4242 || firstReq.State != types.Create || firstReq.SandboxID != "sb" ||
		firstReq.Labels["l"] != "x" || firstReq.Version != "0.1" || string(firstReq.Conf) != `{"a":1}` {
		t.Errorf("first request %+v", firstReq)
	}
	s := firstReq.Spec
	if s.CgroupsPath != "/pod/ctr" || s.Namespaces["network"] != "/run/netns/x" || s.Namespaces["pid"] != "" ||
		s.Annotations["an"] != "1" || string(s.Resources) != `{"cpu":{"cpus":"1"}}` {
		t.Errorf("request spec %+v (resources %s)", s, s.Resources)
	}
	if len(firstReq.Results) != 0 || len(secondReq.Results) != 1 || secondReq.Results[0].Plugin != "first" || secondReq.Conf != nil {
		t.Errorf("the second plugin saw results %+v, conf %s", secondReq.Results, secondReq.Conf)
	}
}

func TestInvokeFailures(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name, output string
		code         int
		want         string
	}{
		{"reported error", `{"plugin":"p","error":"no can do"}`, 0, "plugin: %s: no can do"},
		{"garbage", `nonsense`, 0, `plugin: %s: failed to unmarshal plugin output output: "nonsense": `},
		{"exit code and nothing", ``, 3, "plugin: %s: failed to unmarshal plugin output output: <empty> exit code: 3: "},
		{"exit code with a result", `{"plugin":"p"}`, 1, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := plugin(t, dir, strings.ReplaceAll(tc.name, " ", "-"), tc.output, tc.code)
			c := client(t, `{"plugins":[{"type":"`+p+`"}]}`)
			_, err := c.Invoke(context.Background(), &fakeTask{spec: &oci.Spec{}}, types.Delete)
			want := strings.ReplaceAll(tc.want, "%s", p)
			switch {
			case want == "" && err != nil:
				t.Fatalf("error %v", err)
			case want != "" && (err == nil || !strings.HasPrefix(err.Error(), want)):
				t.Fatalf("error %v, want one starting with %q", err, want)
			}
		})
	}
	t.Run("missing binary", func(t *testing.T) {
		c := client(t, `{"plugins":[{"type":"`+filepath.Join(dir, "absent")+`"}]}`)
		if _, err := c.Invoke(context.Background(), &fakeTask{spec: &oci.Spec{}}, types.Create); err == nil {
			t.Fatal("a missing plugin ran")
		}
	})
	t.Run("task without a spec", func(t *testing.T) {
		c := client(t, `{"plugins":[{"type":"x"}]}`)
		if _, err := c.Invoke(context.Background(), &fakeTask{}, types.Create); err == nil || err.Error() != "no spec" {
			t.Fatalf("error %v", err)
		}
	})
}
