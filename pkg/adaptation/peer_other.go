//go:build !linux

package adaptation

import (
	"errors"
	"net"
)

// peerCredentials is not implemented here: the credentials stay unknown, so
// SupersedeSameUID refuses every takeover (see PeerCredentials).
func peerCredentials(net.Conn) (PeerCredentials, error) {
	return unknownPeer, errors.New("peer credentials are not available on this platform")
}
