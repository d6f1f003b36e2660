package api

import ours "github.com/nri-handover/nri/api"

// Identifiers of upstream's pkg/api that come from its code generators
// rather than from the protocol, so our api package has no counterpart:
// provided here so that code naming them builds on the stand-in. The WASM
// plugin host (PluginPlugin, NewPluginPlugin, Wazero*) is not provided; see
// README.md.

// Plugin is the plugin service as upstream's WASM plugin generator names it:
// the same methods as PluginService, so either is accepted where the other
// is expected.
type Plugin interface {
	PluginService
}

// HostFunctions is what a WASM plugin may call in its host, under the name
// upstream's WASM generator gives it; the same methods as
// HostFunctionsService.
type HostFunctions interface {
	HostFunctionsService
}

// PluginPluginAPIVersion is the version of upstream's WASM plugin ABI, which
// a caller may log or compare; nothing here implements that ABI.
const PluginPluginAPIVersion = 1

// File_pkg_api_api_proto is the descriptor of the NRI protocol's proto file:
// ours, registered by our api package under the same proto package
// (nri.pkg.api.v1alpha1) and message names as upstream's, though by the file
// path "api.proto" rather than "pkg/api/api.proto". Linking upstream's
// descriptor as well would register those names twice.
//
//nolint:revive,stylecheck // upstream's generated name
var File_pkg_api_api_proto = ours.File_api_proto
