//go:build linux

package adaptation

import (
	"errors"
	"net"
	"syscall"

	"golang.org/x/sys/unix"
)

// peerCredentials returns the credentials of the process at the other end of
// a unix socket (SO_PEERCRED): the kernel's record of who connected, taken
// when the connection was made, which the peer cannot forge or change later.
func peerCredentials(conn net.Conn) (PeerCredentials, error) {
	uc, ok := conn.(syscall.Conn) // a *net.UnixConn, possibly wrapped (deadlineConn)
	if !ok {
		return unknownPeer, errors.New("not a unix socket")
	}
	raw, err := uc.SyscallConn()
	if err != nil {
		return unknownPeer, err
	}
	var (
		cred    *unix.Ucred
		credErr error
	)
	if err := raw.Control(func(fd uintptr) {
		cred, credErr = unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED)
	}); err != nil {
		return unknownPeer, err
	}
	if credErr != nil {
		return unknownPeer, credErr
	}
	return PeerCredentials{PID: int(cred.Pid), UID: int(cred.Uid), GID: int(cred.Gid)}, nil
}
