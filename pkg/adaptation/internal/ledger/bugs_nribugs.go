//go:build nribugs

package ledger

// With -tags nribugs the reverts are variables the adaptation's tests set;
// see bugs.go.
var (
	BugMissesUpdates bool
	BugBringsBack    bool
)
