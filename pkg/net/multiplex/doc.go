// Package multiplex carries several logical connections over one stream
// connection, the way every NRI peer splits its socket into the plugin
// service and the runtime service.
//
// The framing is upstream containerd/nri's (pkg/net/multiplex), byte for
// byte, so either end may run upstream's implementation: every frame is an
// 8-byte header, the big-endian uint32 connection id and the big-endian
// uint32 payload length, followed by the payload. A payload is at most one
// ttrpc message (10-byte header + 4 MiB); longer writes are split into
// several frames, sent back to back. Opening a connection sends nothing: both
// ends simply use the same well-known ids (PluginServiceConn,
// RuntimeServiceConn). Frames for an id nobody opened are dropped.
//
// The exported API is upstream's. Two things differ, neither visible on the
// wire: a Read with a buffer smaller than the pending payload returns what
// fits and keeps the rest for the next Read (upstream fails it with ENOMEM),
// and when the trunk ends, frames that had already arrived are still
// delivered before reads report the end (upstream may drop them).
package multiplex
