package adaptation

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestSupersedePolicies(t *testing.T) {
	root := PeerCredentials{PID: 10, UID: 0, GID: 0}
	rootOtherGroup := PeerCredentials{PID: 11, UID: 0, GID: 7}
	nobody := PeerCredentials{PID: 12, UID: 65534, GID: 65534}
	for _, tc := range []struct {
		name        string
		policy      SupersedePolicy
		pred, succ  PeerCredentials
		wantRefusal string
	}{
		{"same uid", SupersedeSameUID, root, rootOtherGroup, ""},
		{"other uid", SupersedeSameUID, root, nobody, "same user"},
		{"other uid, the other way round", SupersedeSameUID, nobody, root, "same user"},
		{"unknown successor", SupersedeSameUID, root, unknownPeer, "not known"},
		{"unknown predecessor", SupersedeSameUID, unknownPeer, root, "not known"},
		{"any peer, other uid", SupersedeAnyPeer, root, nobody, ""},
		{"any peer, unknown", SupersedeAnyPeer, unknownPeer, unknownPeer, ""},
		{"tightened: same gid too", sameUIDAndGID, root, rootOtherGroup, "group"},
		{"tightened: same uid and gid", sameUIDAndGID, root, root, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.policy(tc.pred, tc.succ)
			switch {
			case tc.wantRefusal == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.wantRefusal != "" && (err == nil || !strings.Contains(err.Error(), tc.wantRefusal)):
				t.Fatalf("error %v, want one containing %q", err, tc.wantRefusal)
			}
		})
	}
}

// sameUIDAndGID is a runtime's own, tighter policy.
func sameUIDAndGID(pred, succ PeerCredentials) error {
	if err := SupersedeSameUID(pred, succ); err != nil {
		return err
	}
	if pred.GID != succ.GID {
		return errors.New("not the same group")
	}
	return nil
}

func TestWithSupersedePolicyRefusesNil(t *testing.T) {
	r := &Adaptation{}
	r.reg = newRegistry(r)
	if err := WithSupersedePolicy(nil)(r); err == nil {
		t.Fatal("a nil policy was accepted")
	}
}

// as gives an instance the credentials of another process.
func as(p *plugin, uid, gid int) *plugin {
	p.cred = PeerCredentials{PID: 1000 + uid, UID: uid, GID: gid}
	return p
}

// legacyPlugin is an external plugin written for upstream, active.
func (g *registry) legacyPlugin(t *testing.T, idx, base string, uid int) *plugin {
	t.Helper()
	p := as(g.r.newPlugin(kindExternal), uid, uid)
	p.setName(idx, base)
	_ = g.track(p)
	if _, err := g.place(p); err != nil {
		t.Fatal(err)
	}
	g.activate(t, p)
	return p
}

// Every instance a successor would evict is checked at registration: the
// refusal names both instances and both uids, and the slot is unchanged.
func TestSupersedeRules(t *testing.T) {
	type setup func(t *testing.T, g *registry) *plugin // returns the instance to be kept
	active := func(t *testing.T, g *registry) *plugin {
		a := as(g.optedIn("10", "p", "a", 0, ""), 0, 0)
		if _, err := g.place(a); err != nil {
			t.Fatal(err)
		}
		g.activate(t, a)
		return a
	}
	for _, tc := range []struct {
		name   string
		setup  setup
		policy SupersedePolicy
		uid    int
		victim string // the instance named in the refusal; "" means accepted
	}{
		{"active, same uid", active, nil, 0, ""},
		{"active, other uid", active, nil, 65534, "10-p instance a (uid 0)"},
		{"active, other uid, any peer", active, SupersedeAnyPeer, 65534, ""},
		{"active, tightened", active, sameUIDAndGID, 0, ""},
		{"pending candidate, other uid", func(t *testing.T, g *registry) *plugin {
			c := as(g.optedIn("10", "p", "c", 0, ""), 0, 0)
			if _, err := g.place(c); err != nil {
				t.Fatal(err)
			}
			return c
		}, nil, 65534, "10-p instance c (uid 0)"},
		{"standby, other uid", func(t *testing.T, g *registry) *plugin {
			a := active(t, g)
			b := as(g.optedIn("10", "p", "b", 0, ""), 65534, 65534)
			g.policy.supersede = SupersedeAnyPeer // b was let in
			if _, err := g.place(b); err != nil {
				t.Fatal(err)
			}
			g.activate(t, b)
			g.policy.supersede = nil
			if a.slot.standby != a {
				t.Fatal("a is not the standby")
			}
			t.Cleanup(a.slot.stopGrace)
			return a
		}, nil, 65534, "10-p instance a (uid 0)"},
		{"plugin written for upstream, other uid", func(t *testing.T, g *registry) *plugin {
			return g.legacyPlugin(t, "10", "p", 0)
		}, nil, 65534, "10-p (uid 0)"},
		{"plugin written for upstream with another index", func(t *testing.T, g *registry) *plugin {
			return g.legacyPlugin(t, "20", "p", 0)
		}, nil, 65534, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := testRegistry(handoverPolicy{grace: time.Hour, supersede: tc.policy})
			kept := tc.setup(t, g)
			held := *kept.slot
			succ := as(g.optedIn("10", "p", "s", 0, ""), tc.uid, tc.uid)
			displaced, err := g.place(succ)
			if tc.victim == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("instance s of uid %d was let in", tc.uid)
			}
			for _, want := range []string{"10-p instance s (uid 65534)", tc.victim} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not name %q", err, want)
				}
			}
			if displaced != nil || succ.slot != nil {
				t.Errorf("the refused instance was placed (displaced %v)", displaced)
			}
			if s := kept.slot; s.active != held.active || s.candidate != held.candidate || s.standby != held.standby {
				t.Errorf("the slot changed: %+v, was %+v", *s, held)
			}
		})
	}
}
