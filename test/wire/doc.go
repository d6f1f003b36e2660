// Package wire holds the cross-process wire-compatibility tests: messages we
// encode are decoded by test/upstream/wirepeer, a separate binary linked only
// against upstream containerd/nri v0.12.5's pkg/api, and messages it encodes
// are decoded by our api package. The two API packages never share a binary
// (both register the same protobuf names, which panics), so this package
// imports ours only and talks to the peer through stdin and stdout.
package wire
