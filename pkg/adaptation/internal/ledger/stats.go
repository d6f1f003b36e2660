package ledger

import "strings"

// Stats is what the ledger holds: its owner's tests check its bounds by it.
type Stats struct {
	Objects  int // live objects, and tombstones while a cursor is open
	Cursors  int // open cursors
	Removals int // relayed removals remembered
	// Limit is the most objects it holds before it is dropped: past its
	// bound it is not trusted, past the next one dropped.
	Limit int
	// Updating are the containers with an UpdateFn call in flight: the
	// runtime may have applied it, the ledger not noted it yet.
	Updating []string
}

// Stats tells what the ledger holds now.
func (l *Ledger) Stats() Stats {
	l.mu.Lock()
	defer l.mu.Unlock()
	st := Stats{Objects: len(l.objs), Cursors: l.open, Removals: len(l.gone), Limit: 2*(l.bound+1) + minLedgerBound}
	for key, n := range l.updating {
		if id, ok := strings.CutPrefix(key, "ctr/"); ok && n > 0 {
			st.Updating = append(st.Updating, id)
		}
	}
	return st
}
