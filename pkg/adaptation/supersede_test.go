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
	g.switchNow(t, p)
	return p
}

// The supersede policy decides the lineage before any precedence rule: a
// successor joins the slot whose instances it may all evict, runs beside the
// instances it may evict none of (as two plugins of one name do under
// upstream NRI), and is refused by a slot of which it may evict some but not
// others. A refusal names both instances and both uids; nothing kept changes.
func TestSupersedeRules(t *testing.T) {
	type setup func(t *testing.T, g *registry) *plugin // returns the instance to be kept
	active := func(t *testing.T, g *registry) *plugin {
		a := as(g.optedIn("10", "p", "a", 0, ""), 0, 0)
		if _, err := g.place(a); err != nil {
			t.Fatal(err)
		}
		g.switchNow(t, a)
		return a
	}
	const (
		joins   = "joins"
		beside  = "beside"
		refused = "refused"
	)
	for _, tc := range []struct {
		name    string
		setup   setup
		policy  SupersedePolicy
		uid     int
		outcome string
		victim  string // refused: the instance named in the refusal
	}{
		{"active, same uid", active, nil, 0, joins, ""},
		{"active, other uid", active, nil, 65534, beside, ""},
		{"active, other uid, any peer", active, SupersedeAnyPeer, 65534, joins, ""},
		{"active, tightened", active, sameUIDAndGID, 0, joins, ""},
		{"pending candidate, other uid", func(t *testing.T, g *registry) *plugin {
			c := as(g.optedIn("10", "p", "c", 0, ""), 0, 0)
			if _, err := g.place(c); err != nil {
				t.Fatal(err)
			}
			return c
		}, nil, 65534, beside, ""},
		{"standby of another uid beside an active one of its own", func(t *testing.T, g *registry) *plugin {
			a := active(t, g)
			b := as(g.optedIn("10", "p", "b", 0, ""), 65534, 65534)
			g.policy.supersede = SupersedeAnyPeer // b was let in
			if _, err := g.place(b); err != nil {
				t.Fatal(err)
			}
			g.switchNow(t, b)
			g.policy.supersede = nil
			if a.slot.standby != a {
				t.Fatal("a is not the standby")
			}
			t.Cleanup(a.slot.stopGrace)
			return a
		}, nil, 65534, refused, "10-p instance a (uid 0)"},
		{"plugin written for upstream, other uid", func(t *testing.T, g *registry) *plugin {
			return g.legacyPlugin(t, "10", "p", 0)
		}, nil, 65534, beside, ""},
		{"plugin written for upstream, same uid", func(t *testing.T, g *registry) *plugin {
			return g.legacyPlugin(t, "10", "p", 0)
		}, nil, 0, joins, ""},
		{"plugin written for upstream with another index", func(t *testing.T, g *registry) *plugin {
			return g.legacyPlugin(t, "20", "p", 0)
		}, nil, 65534, beside, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := testRegistry(handoverPolicy{grace: time.Hour, supersede: tc.policy})
			kept := tc.setup(t, g)
			held := *kept.slot
			succ := as(g.optedIn("10", "p", "s", 0, ""), tc.uid, tc.uid)
			displaced, err := g.place(succ)
			if tc.outcome == refused {
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
			} else if err != nil {
				t.Fatalf("refused: %v", err)
			}
			if tc.outcome != joins {
				if s := kept.slot; s.active != held.active || s.candidate != held.candidate || s.standby != held.standby {
					t.Errorf("the slot changed: %+v, was %+v", *s, held)
				}
			}
			if tc.outcome == beside {
				if succ.slot == kept.slot {
					t.Fatal("an instance that may not supersede another shares its slot")
				}
				// At its switch it takes over nothing it may not.
				g.switchNow(t, succ)
				if kept.slot.active != held.active || kept.slot.candidate != held.candidate {
					t.Errorf("the kept instance was displaced at the successor's switch")
				}
			}
		})
	}
}
