// Package net holds the socket plumbing NRI peers share: a close-on-exec
// socketpair for runtimes that launch plugins themselves, a net.Conn for an
// inherited socket descriptor, and a listener that hands out one connection
// that already exists.
//
// Its exported API is that of upstream containerd/nri's pkg/net, so code
// written against upstream's package builds unchanged against this one.
package net
