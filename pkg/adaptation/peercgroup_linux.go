//go:build linux

package adaptation

import (
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"
)

// peerCgroup reads the cgroup of the process at the other end of a unix
// socket without racing pid reuse: SO_PEERPIDFD (Linux >= 6.5) pins the
// very process that connected; its /proc/<pid>/cgroup is read and then the
// pidfd is signalled with 0: if that process has exited meanwhile its pid
// may have been reused and what was read is refused. Without SO_PEERPIDFD
// the cgroup is not read rather than guessed (errIdentityUnsupported).
func peerCgroup(conn net.Conn) (string, error) {
	uc, ok := conn.(syscall.Conn)
	if !ok {
		return "", fmt.Errorf("%w: not a unix socket", errIdentityUnsupported)
	}
	raw, err := uc.SyscallConn()
	if err != nil {
		return "", err
	}
	var pidfd, pid int
	var sockErr error
	if err := raw.Control(func(fd uintptr) {
		pidfd, sockErr = unix.GetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_PEERPIDFD)
		if sockErr != nil {
			return
		}
		var cred *unix.Ucred
		cred, sockErr = unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED)
		if cred != nil {
			pid = int(cred.Pid)
		}
	}); err != nil {
		return "", err
	}
	if sockErr != nil {
		if pidfd > 0 {
			unix.Close(pidfd)
		}
		if errors.Is(sockErr, unix.ENOPROTOOPT) || errors.Is(sockErr, unix.EINVAL) {
			return "", fmt.Errorf("%w: %w", errIdentityUnsupported, sockErr)
		}
		return "", fmt.Errorf("peer pidfd: %w", sockErr)
	}
	defer unix.Close(pidfd)
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cgroup")
	if err != nil {
		return "", fmt.Errorf("peer pid %d: %w", pid, err)
	}
	if err := unix.PidfdSendSignal(pidfd, 0, nil, 0); err != nil {
		return "", fmt.Errorf("peer pid %d exited before its cgroup was verified: %w", pid, err)
	}
	return parseProcCgroup(string(data))
}
