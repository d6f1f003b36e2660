//go:build !linux

package adaptation

import "net"

// peerCgroup is not implemented here: the workload rule does not apply and
// the supersede policy on credentials decides alone.
func peerCgroup(net.Conn) (string, error) {
	return "", errIdentityUnsupported
}
