// Package v1 holds the types of NRI v0.1, the deprecated protocol in which a
// runtime executes each configured plugin binary with the JSON of a Request
// on stdin and reads the JSON of a Result from its stdout. containerd still
// drives it for pod sandboxes through the root package of this module. The
// JSON field names are the protocol and match upstream's.
package v1

import (
	"encoding/json"
	"errors"
)

// Plugin is one configured v0.1 plugin.
//
// Deprecated: NRI 0.1.0-style plugins should only be used through the v010-adapter plugin
type Plugin struct {
	// Type is the plugin's executable, looked up in PATH.
	Type string `json:"type"`
	// Conf is passed to the plugin in Request.Conf.
	Conf json.RawMessage `json:"conf,omitempty"`
}

// ConfigList is the v0.1 configuration, /etc/nri/conf.json.
//
// Deprecated: NRI 0.1.0-style plugins should only be used through the v010-adapter plugin
type ConfigList struct {
	Version string    `json:"version"`
	Plugins []*Plugin `json:"plugins"`
}

// Spec is the part of a container's OCI spec a plugin sees.
//
// Deprecated: NRI 0.1.0-style plugins should only be used through the v010-adapter plugin
type Spec struct {
	// Resources is the OCI Linux or Windows resources, as JSON.
	Resources   json.RawMessage   `json:"resources"`
	Namespaces  map[string]string `json:"namespaces,omitempty"`
	CgroupsPath string            `json:"cgroupsPath,omitempty"`
	Annotations map[string]string `json:"annotations,omitempty"`
}

// State is the lifecycle step a plugin is invoked for.
//
// Deprecated: NRI 0.1.0-style plugins should only be used through the v010-adapter plugin
type State string

// The states of the protocol.
const (
	Create State = "create"
	Delete State = "delete"
	Update State = "update"
	Pause  State = "pause"
	Resume State = "resume"
)

// Request is what a plugin reads on stdin.
//
// Deprecated: NRI 0.1.0-style plugins should only be used through the v010-adapter plugin
type Request struct {
	Conf    json.RawMessage `json:"conf,omitempty"`
	Version string          `json:"version"`
	State   State           `json:"state"`
	ID      string          `json:"id"`
	// SandboxID equals ID for a sandbox, is empty for an unsandboxed container.
	SandboxID string `json:"sandboxID,omitempty"`
	// Pid is the container's process, -1 if none.
	Pid     int               `json:"pid,omitempty"`
	Spec    *Spec             `json:"spec"`
	Labels  map[string]string `json:"labels,omitempty"`
	Results []*Result         `json:"results,omitempty"`
}

// IsSandbox tells whether the request is for a sandbox.
//
// Deprecated: NRI 0.1.0-style plugins should only be used through the v010-adapter plugin
func (r *Request) IsSandbox() bool { return r.ID == r.SandboxID }

// NewResult starts the result of plugin for r.
//
// Deprecated: NRI 0.1.0-style plugins should only be used through the v010-adapter plugin
func (r *Request) NewResult(plugin string) *Result {
	return &Result{Plugin: plugin, Version: r.Version, Metadata: map[string]string{}}
}

// Result is what a plugin writes on stdout.
//
// Deprecated: NRI 0.1.0-style plugins should only be used through the v010-adapter plugin
type Result struct {
	Plugin   string            `json:"plugin"`
	Version  string            `json:"version"`
	Error    string            `json:"error"`
	Metadata map[string]string `json:"metadata,omitempty"`
}

// Err is the plugin's error, if it reported one.
//
// Deprecated: NRI 0.1.0-style plugins should only be used through the v010-adapter plugin
func (r *Result) Err() error {
	if r.Error == "" {
		return nil
	}
	return errors.New(r.Error)
}
