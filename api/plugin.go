package api

import (
	"errors"
	"fmt"
	"strings"
)

// Well-known locations and environment variables shared by runtimes and plugins.
// The values are part of the protocol contract: an upstream plugin finds our
// runtime (and vice versa) only if both agree on them.
const (
	// DefaultSocketPath is where the runtime listens for externally started plugins.
	DefaultSocketPath = "/var/run/nri/nri.sock"
	// PluginSocketEnvVar tells a runtime-launched plugin which inherited file
	// descriptor is its already connected socket.
	PluginSocketEnvVar = "NRI_PLUGIN_SOCKET"
	// PluginNameEnvVar tells a runtime-launched plugin the name it was started as.
	PluginNameEnvVar = "NRI_PLUGIN_NAME"
	// PluginIdxEnvVar tells a runtime-launched plugin the index it was started with.
	PluginIdxEnvVar = "NRI_PLUGIN_IDX"
)

// ParsePluginName splits a plugin (file) name of the form "NN-name" into its
// two-digit index and the base name. Runtimes order plugins by that index, so
// a name without a valid one is rejected rather than guessed at.
func ParsePluginName(name string) (string, string, error) {
	idx, base, found := strings.Cut(name, "-")
	if !found {
		return "", "", fmt.Errorf("invalid plugin name %q: expected <2-digit index>-<name>", name)
	}
	if err := CheckPluginIndex(idx); err != nil {
		return "", "", err
	}
	return idx, base, nil
}

// CheckPluginIndex reports whether idx is exactly two decimal digits, the only
// form that sorts the same lexically and numerically.
func CheckPluginIndex(idx string) error {
	if len(idx) != 2 {
		return fmt.Errorf("invalid plugin index %q: want two digits, 00 to 99", idx)
	}
	for i := range len(idx) {
		if idx[i] < '0' || idx[i] > '9' {
			return fmt.Errorf("invalid plugin index %q: want two digits, 00 to 99", idx)
		}
	}
	return nil
}

// CheckPluginName reports whether name is usable as a plugin name: non-empty
// and limited to [a-zA-Z0-9_.+-], so it is safe in file names, log lines and
// the "NN-name" identifiers runtimes build from it.
func CheckPluginName(name string) error {
	if name == "" {
		return errors.New("invalid plugin name: name is empty")
	}
	for _, r := range name {
		if !isPluginNameRune(r) {
			return fmt.Errorf("invalid plugin name %q: contains invalid character %q", name, r)
		}
	}
	return nil
}

func isPluginNameRune(r rune) bool {
	switch {
	case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9':
		return true
	}
	return strings.ContainsRune("-_.+", r)
}
