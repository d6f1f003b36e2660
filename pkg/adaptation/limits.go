package adaptation

import (
	"encoding/binary"
	"fmt"
	"net"
	"sync/atomic"

	"github.com/nri-handover/nri/api"
)

// Limits on what a peer may make the runtime keep or allocate. Anyone who can
// open the NRI socket is a peer, and what it registers with lives as long as
// its connection (and an instance id as long as the successor that retired
// it), so every field is bounded. Real plugins use a fraction of each.
const (
	maxPluginNameLen    = 128 // bytes of a plugin's name
	maxPluginVersionLen = 128 // bytes of a plugin's version
	maxInstanceIDLen    = 128 // bytes of an instance id (a pod UID has 36)
	maxFeatures         = 16  // protocol features a plugin may ask for
	maxFeatureLen       = 64  // bytes of one feature name

	// maxUnregisteredMessage is the largest ttrpc message a connection may
	// declare before it registered: a RegisterPluginRequest within the
	// limits above is far smaller. Without it, every connection could make
	// the runtime allocate ttrpc's largest message (4 MiB) for as long as
	// the registration timeout, by sending a 10-byte message header.
	maxUnregisteredMessage = 64 << 10
)

// checkRegistration refuses a registration whose fields exceed the limits.
func checkRegistration(req *api.RegisterPluginRequest) error {
	name := req.GetPluginName()
	for _, f := range []struct {
		what  string
		value string
		limit int
	}{
		{"name", name, maxPluginNameLen},
		{"version", req.GetPluginVersion(), maxPluginVersionLen},
		{"NRI version", req.GetNRIVersion(), maxPluginVersionLen},
		{"instance id", req.GetInstanceId(), maxInstanceIDLen},
	} {
		if len(f.value) > f.limit {
			return fmt.Errorf("plugin %.32q registered with a %s of %d bytes, at most %d are allowed",
				name, f.what, len(f.value), f.limit)
		}
	}
	features := req.GetFeatures()
	if len(features) > maxFeatures {
		return fmt.Errorf("plugin %.32q asks for %d features, at most %d are allowed", name, len(features), maxFeatures)
	}
	for _, f := range features {
		if len(f) > maxFeatureLen {
			return fmt.Errorf("plugin %.32q asks for a feature of %d bytes, at most %d are allowed", name, len(f), maxFeatureLen)
		}
	}
	return nil
}

// ttrpcHeaderLen is the size of a ttrpc message header: length (4 bytes),
// stream id (4), type (1) and flags (1).
const ttrpcHeaderLen = 10

// unregisteredConn is one of a plugin connection's two ttrpc connections
// while the plugin has not registered: it follows the ttrpc message framing
// of what it reads and fails the connection as soon as a message header
// declares more than maxUnregisteredMessage bytes, before ttrpc allocates a
// buffer of that size. Once the plugin registered it only passes bytes on.
type unregisteredConn struct {
	net.Conn
	registered func() bool
	reject     func(error) // ends the plugin's whole connection
	trusted    atomic.Bool

	// Read is called by one goroutine (ttrpc's receiver): no lock needed.
	hdr       [ttrpcHeaderLen]byte
	hdrLen    int    // header bytes seen of the current message
	remaining uint32 // payload bytes of the current message still to come
}

func newUnregisteredConn(conn net.Conn, registered func() bool, reject func(error)) *unregisteredConn {
	return &unregisteredConn{Conn: conn, registered: registered, reject: reject}
}

func (c *unregisteredConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	if c.trusted.Load() || n == 0 {
		return n, err
	}
	if c.registered() {
		c.trusted.Store(true)
		return n, err
	}
	if ferr := c.follow(b[:n]); ferr != nil {
		c.reject(ferr)
		return 0, ferr
	}
	return n, err
}

// follow advances the message framing over b.
func (c *unregisteredConn) follow(b []byte) error {
	for len(b) > 0 {
		if c.remaining > 0 {
			k := min(uint32(len(b)), c.remaining)
			c.remaining -= k
			b = b[k:]
			continue
		}
		k := copy(c.hdr[c.hdrLen:], b)
		c.hdrLen += k
		b = b[k:]
		if c.hdrLen < ttrpcHeaderLen {
			return nil
		}
		c.hdrLen = 0
		c.remaining = binary.BigEndian.Uint32(c.hdr[:4])
		if c.remaining > maxUnregisteredMessage {
			return fmt.Errorf("unregistered peer declared a message of %d bytes, at most %d are accepted before registration",
				c.remaining, maxUnregisteredMessage)
		}
	}
	return nil
}
