// Package nri is the legacy NRI v0.1 client that containerd still calls when
// it starts and deletes pod sandboxes: it executes the plugins listed in
// /etc/nri/conf.json (none on a node without that file, the common case,
// where every call returns at once). Its API and behaviour are upstream
// containerd/nri's root package, written from that specification; the
// current protocol lives in pkg/adaptation.
package nri

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"sync"

	oci "github.com/opencontainers/runtime-spec/specs-go"

	types "github.com/containerd/nri/types/v1"
)

const (
	// DefaultBinaryPath is where v0.1 plugins are installed; New appends it
	// to the process's PATH.
	DefaultBinaryPath = "/opt/nri/bin"
	// DefaultConfPath is the v0.1 configuration.
	DefaultConfPath = "/etc/nri/conf.json"
	// Version is the protocol version of a configuration that does not say.
	Version = "0.1"
)

var extendPath sync.Once

// New reads the v0.1 configuration (none: no plugins) and, once per process,
// appends DefaultBinaryPath to PATH so that plugins are found by name, as
// upstream does (children started later inherit that PATH).
//
// Deprecated: NRI 0.1.0-style plugins should only be used through the v010-adapter plugin
func New() (*Client, error) {
	conf, err := loadConfig(DefaultConfPath)
	if err != nil {
		return nil, err
	}
	extendPath.Do(func() {
		err = os.Setenv("PATH", os.Getenv("PATH")+":"+DefaultBinaryPath)
	})
	if err != nil {
		return nil, err
	}
	return &Client{conf: conf}, nil
}

// Client runs the configured v0.1 plugins.
//
// Deprecated: NRI 0.1.0-style plugins should only be used through the v010-adapter plugin
type Client struct {
	conf *types.ConfigList
}

// Plugins lists the configured plugins (their types), so that a runtime can
// warn about their use.
//
// Deprecated: NRI 0.1.0-style plugins should only be used through the v010-adapter plugin
func (c *Client) Plugins() []string {
	names := []string{}
	for _, p := range c.conf.Plugins {
		names = append(names, p.Type)
	}
	return names
}

// Sandbox identifies the pod sandbox a task belongs to.
//
// Deprecated: NRI 0.1.0-style plugins should only be used through the v010-adapter plugin
type Sandbox struct {
	ID     string
	Labels map[string]string
}

// Task is the part of a runtime's task the client needs.
//
// Deprecated: NRI 0.1.0-style plugins should only be used through the v010-adapter plugin
type Task interface {
	ID() string
	Pid() uint32
	Spec(context.Context) (*oci.Spec, error)
}

// Invoke runs every plugin for task in state.
//
// Deprecated: NRI 0.1.0-style plugins should only be used through the v010-adapter plugin
func (c *Client) Invoke(ctx context.Context, task Task, state types.State) ([]*types.Result, error) {
	return c.InvokeWithSandbox(ctx, task, state, nil)
}

// InvokeWithSandbox runs every plugin, in configuration order, for task in
// state; each plugin sees the results of those before it. The first failing
// plugin ends the run with its error. Without plugins it returns at once,
// without asking the task for its spec.
//
// Deprecated: NRI 0.1.0-style plugins should only be used through the v010-adapter plugin
func (c *Client) InvokeWithSandbox(ctx context.Context, task Task, state types.State, sandbox *Sandbox) ([]*types.Result, error) {
	if len(c.conf.Plugins) == 0 {
		return nil, nil
	}
	spec, err := task.Spec(ctx)
	if err != nil {
		return nil, err
	}
	s, err := pluginSpec(spec)
	if err != nil {
		return nil, err
	}
	req := &types.Request{
		Version: c.conf.Version,
		ID:      task.ID(),
		Pid:     int(task.Pid()),
		State:   state,
		Spec:    s,
	}
	if sandbox != nil {
		req.SandboxID, req.Labels = sandbox.ID, sandbox.Labels
	}
	for _, p := range c.conf.Plugins {
		req.Conf = p.Conf
		res, err := invoke(ctx, p.Type, req)
		if err != nil {
			return nil, fmt.Errorf("plugin: %s: %w", p.Type, err)
		}
		req.Results = append(req.Results, res)
	}
	return req.Results, nil
}

// invoke runs "plugin invoke" with req on stdin; the plugin's stderr goes to
// ours.
func invoke(ctx context.Context, plugin string, req *types.Request) (*types.Result, error) {
	payload, err := json.Marshal(req)
	if err != nil {
		return nil, err
	}
	cmd := exec.CommandContext(ctx, plugin, "invoke")
	cmd.Stdin = bytes.NewReader(payload)
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()

	what := "output: <empty>"
	if len(out) > 0 {
		what = fmt.Sprintf("output: %q", out)
	}
	if err != nil {
		var exit *exec.ExitError
		if !errors.As(err, &exit) {
			return nil, err // it did not run
		}
		// It ran and failed: its output may still say why.
		what = fmt.Sprintf("%s exit code: %d", what, exit.ExitCode())
	}
	res := &types.Result{}
	if err := json.Unmarshal(out, res); err != nil {
		return nil, fmt.Errorf("failed to unmarshal plugin output %s: %w", what, err)
	}
	if err := res.Err(); err != nil {
		return nil, err
	}
	return res, nil
}

func loadConfig(path string) (*types.ConfigList, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return &types.ConfigList{Version: Version}, nil
	}
	if err != nil {
		return nil, err
	}
	conf := &types.ConfigList{}
	if err := json.NewDecoder(bytes.NewReader(data)).Decode(conf); err != nil {
		return nil, err
	}
	return conf, nil
}

// pluginSpec is what plugins see of spec: annotations, and the Linux cgroup
// path, resources and namespaces (or the Windows resources).
func pluginSpec(spec *oci.Spec) (*types.Spec, error) {
	s := &types.Spec{Namespaces: map[string]string{}, Annotations: spec.Annotations}
	var resources any
	switch {
	case spec.Linux != nil:
		s.CgroupsPath = spec.Linux.CgroupsPath
		for _, ns := range spec.Linux.Namespaces {
			s.Namespaces[string(ns.Type)] = ns.Path
		}
		resources = spec.Linux.Resources
	case spec.Windows != nil:
		resources = spec.Windows.Resources
	default:
		return s, nil
	}
	data, err := json.Marshal(resources)
	if err != nil {
		return nil, err
	}
	s.Resources = data
	return s, nil
}
