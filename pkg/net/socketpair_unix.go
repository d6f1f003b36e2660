//go:build unix && !linux

package net

import (
	"syscall"

	"golang.org/x/sys/unix"
)

// socketpairCloexec holds the fork lock between creating the pair and
// marking it close-on-exec, so that no child started meanwhile inherits it
// (not every unix has SOCK_CLOEXEC).
func socketpairCloexec() ([2]int, error) {
	syscall.ForkLock.RLock()
	defer syscall.ForkLock.RUnlock()
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM, 0)
	if err != nil {
		return fds, err
	}
	unix.CloseOnExec(fds[0])
	unix.CloseOnExec(fds[1])
	return fds, nil
}
