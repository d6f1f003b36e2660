/*
 * idle.pml: the commit never waits for an idle instant (README.md,
 * rule 4b; finding 0), for spin.
 *
 * The runtime runs a stream of overlapping operations on the gate's read
 * side: a new one starts before the last one in flight ends (a 30 s
 * graceful stop, creates starting meanwhile), so the number in flight never
 * drops to zero. Each relays its event under r.mu, one step here. The
 * takeover's commit in the new design takes the hold and r.mu once (no
 * event in flight) and does not look at the operations; the old design
 * waited for an instant with no operation in flight.
 *
 * Liveness (ltl p0, acceptance search with weak fairness): the commit
 * eventually happens.
 *
 * Variant that must fail (hack/model/check.sh):
 *   BUG_IDLE_COMMIT  the commit waits for an idle instant -> acceptance
 *                    cycle (the commit never happens)
 */

byte readers = 1; /* an operation in flight from the start */
bool mu, held, committed;
byte events;

active proctype stream() {
	do
	:: atomic { readers == 1 -> readers++ } /* the next operation starts */
	:: atomic { readers == 2 && !held && !mu -> events = 1 - events } /* a relay, under r.mu */
	:: atomic { readers == 2 -> readers-- } /* the older one ends */
	od
}

active proctype commit() {
#ifdef BUG_IDLE_COMMIT
	readers == 0;
#endif
	atomic { !held -> held = true };
	atomic { !mu -> mu = true };
	mu = false; /* the round trips, without r.mu */
	atomic { !mu -> mu = true; committed = true; mu = false; held = false }
}

ltl p0 { <> committed }
