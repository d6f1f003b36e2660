package ledger

// Stats is what the ledger holds: its owner's tests check its bounds by it.
type Stats struct {
	Objects  int // live objects, and tombstones while a cursor is open
	Cursors  int // open cursors
	Removals int // relayed removals remembered
	// Limit is the most objects it holds before it is dropped: past its
	// bound it is not trusted, past the next one dropped.
	Limit int
}

// Stats tells what the ledger holds now.
func (l *Ledger) Stats() Stats {
	l.mu.Lock()
	defer l.mu.Unlock()
	return Stats{Objects: len(l.objs), Cursors: l.open, Removals: len(l.gone), Limit: 2*(l.bound+1) + minLedgerBound}
}
