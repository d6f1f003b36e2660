//go:build !nribugs

package ledger

// Issue 39's findings 3 and 4, each with its fix reverted, for the
// adaptation's exploration to prove it finds them (built with -tags
// nribugs). Here they are constants: every revert compiles away.
const (
	BugMissesUpdates = false // Applied and replies' updates are not noted
	BugBringsBack    = false // a listing brings back, uncounted, a container whose removal was relayed
)
