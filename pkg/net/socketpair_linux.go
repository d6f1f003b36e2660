package net

import "golang.org/x/sys/unix"

// socketpairCloexec sets close-on-exec atomically, at creation.
func socketpairCloexec() ([2]int, error) {
	return unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
}
