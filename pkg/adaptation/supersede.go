package adaptation

// Who may supersede whom.
//
// Superseding is the power to evict a running plugin: the runtime tells the
// active instance it is SUPERSEDED and disconnects it. Anyone who can open the
// NRI socket can register an opted-in instance with any plugin name, so
// without a rule any local process with access to the socket could switch off
// a resource-policy or security plugin of another user by registering its
// name. The rule compares the credentials the kernel recorded for both
// connections (SO_PEERCRED, read once when the connection was accepted, so a
// peer can neither forge them nor change them later): by default the
// successor must run as the same user as every instance it would replace.
//
// Builtin and pre-installed plugins are never displaced at all (admission's builtin row);
// the policy decides only between external plugins.

import (
	"errors"
	"strconv"
)

// PeerCredentials are the credentials of a plugin's process as the kernel
// recorded them when the plugin connected to the NRI socket (SO_PEERCRED on
// Linux). Fields are -1 where the platform cannot tell them, and for builtin
// plugins, which have no connection.
type PeerCredentials struct {
	PID, UID, GID int
}

// unknownPeer is the credentials of a peer the platform cannot identify.
var unknownPeer = PeerCredentials{PID: -1, UID: -1, GID: -1}

// String formats the credentials for logs and errors.
func (c PeerCredentials) String() string {
	if c.UID < 0 {
		return "unknown credentials"
	}
	return "pid " + strconv.Itoa(c.PID) + " uid " + strconv.Itoa(c.UID) + " gid " + strconv.Itoa(c.GID)
}

// SupersedePolicy decides whether an opted-in plugin instance connected with
// the successor's credentials may supersede (evict) an instance connected
// with the predecessor's: the active instance of its name, its standby, a
// pending candidate, or a plugin written for upstream with its name and
// index. A non-nil error refuses the successor's registration
// (SHUTDOWN_REASON_REGISTRATION_REJECTED) with an error that names both
// instances and both uids, followed by this one; the predecessor keeps
// running as if the successor had never connected.
//
// A runtime can tighten the default with its own function, for example
// requiring the same GID too, or an allow-list of uids.
type SupersedePolicy func(predecessor, successor PeerCredentials) error

// errUnknownPeer is SupersedeSameUID's refusal when a uid is not known.
var errUnknownPeer = errors.New("peer credentials are not known on this platform; a runtime can allow it with WithSupersedePolicy(SupersedeAnyPeer)")

// SupersedeSameUID is the default policy: the successor must run as the same
// user (uid) as the instance it replaces. A process can then evict only
// plugins it could already kill. Unknown credentials are refused.
func SupersedeSameUID(predecessor, successor PeerCredentials) error {
	if predecessor.UID < 0 || successor.UID < 0 {
		return errUnknownPeer
	}
	if predecessor.UID != successor.UID {
		return errors.New("a plugin may only be superseded by a process of the same user")
	}
	return nil
}

// SupersedeAnyPeer lets any process that can connect to the NRI socket
// supersede any external plugin, whoever runs it. It relaxes the default for
// runtimes whose socket is reachable only by one trusted user anyway, or
// where plugins of one name run as different users across rollouts.
func SupersedeAnyPeer(_, _ PeerCredentials) error { return nil }

// WithSupersedePolicy sets who may supersede whom (default SupersedeSameUID).
func WithSupersedePolicy(policy SupersedePolicy) Option {
	return func(r *Adaptation) error {
		if policy == nil {
			return errors.New("nil supersede policy")
		}
		r.reg.policy.supersede = policy
		return nil
	}
}
