//go:build linux

package adaptation

import (
	"errors"
	"net"
	"syscall"

	"golang.org/x/sys/unix"
)

// peerPid returns the pid of the process at the other end of a unix socket,
// for logs.
func peerPid(conn net.Conn) (int, error) {
	uc, ok := conn.(syscall.Conn) // a *net.UnixConn, possibly wrapped (deadlineConn)
	if !ok {
		return 0, errors.New("not a unix socket")
	}
	raw, err := uc.SyscallConn()
	if err != nil {
		return 0, err
	}
	var (
		cred    *unix.Ucred
		credErr error
	)
	if err := raw.Control(func(fd uintptr) {
		cred, credErr = unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED)
	}); err != nil {
		return 0, err
	}
	if credErr != nil {
		return 0, credErr
	}
	return int(cred.Pid), nil
}
