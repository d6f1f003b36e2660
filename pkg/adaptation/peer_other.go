//go:build !linux

package adaptation

import (
	"errors"
	"net"
)

func peerPid(net.Conn) (int, error) {
	return 0, errors.New("peer pid is not available on this platform")
}
