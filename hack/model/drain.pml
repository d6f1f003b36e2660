/*
 * drain.pml: a runtime operation in flight that outlasts a takeover's
 * drain (pkg/adaptation handover.go registry.prepare, syncgate.go
 * syncGate.drain/enqueue/lockTicket/RLock), for spin.
 *
 * The sync gate is handover.pml's: read holds (BlockPluginSync) in two
 * buckets, a writer, a queue of tickets that keeps new readers out while a
 * writer waits (a waiting writer must not starve). A takeover's phase 1
 * (registry.prepare) opens its journal cursor and drains: it waits until
 * the read holds taken before it have been released, keeping nobody out
 * (new holds go to the other bucket).
 *
 * LONG is an operation whose read hold was taken before the candidate's
 * cursor opened and that outlasts the drain's patience: it ends only after
 * every other operation (NSHORT of them, starting at any time) has
 * finished. So the other operations can always start and finish while it
 * holds its read hold exactly when the model cannot deadlock; a watchdog
 * names the deadlock.
 *
 * The candidate waits for the drain up to a patience (its expiry may come
 * at any step while the drain waits); on expiry the candidate is refused
 * (registry.fail, the predecessor keeps serving): it never takes the gate
 * while the long operation is in flight. After a drain that completed, it
 * takes the gate for its commit as handover.pml models (lockTicket: every
 * read hold out then is one taken after the drain).
 *
 * Not modeled: events and the journal (handover.pml), the predecessor,
 * other candidates and reactivations (a reactivation reserves the gate at
 * the loss of the active instance, by design: operations then wait for the
 * standby, handover.pml S2w), operations that become long after the drain
 * completed (a writer waiting behind one keeps the others out, as upstream
 * NRI's synchronization does).
 *
 * Property (watchdog):
 *   F1 while the long operation holds its read hold, the other operations
 *      start and finish: no operation waits on a writer that waits on the
 *      long operation (once nothing can move, every operation is done).
 *
 * Negative variant (must fail; see hack/model/check.sh):
 *   BUG_DRAIN_FALLBACK on the drain's expiry the candidate is synchronized
 *                      under the gate while operations wait (syncGate.Lock
 *                      behind the long operation; the code before issue 17)
 *                                                                   -> F1
 */

#define NONE 255
#define NSHORT 2
#define CAND 0 /* the candidate's ticket */

/* sync gate (syncgate.go) */
byte readers;
bool writer;
byte q[1];
byte qlen;
byte held[2]; /* syncGate.held: read holds by bucket */
bit gcur;     /* syncGate.cur */

byte shortsDone; /* other operations finished */
byte busy;       /* operations not finished */
bool refused;    /* the candidate was refused */
bool committed;  /* the candidate took over */

hidden byte F1_no_freeze;

/* syncGate.enqueue */
inline enqueue(t) {
	atomic { q[qlen] = t; qlen++ }
}

/* syncGate.lockTicket */
inline lockTicket(t) {
	atomic { qlen > 0 && q[0] == t && !writer && readers == 0 -> q[0] = NONE; qlen--; writer = true }
}

/* BlockPluginSync (syncGate.RLock) */
inline rlock(hb) {
	atomic { !writer && qlen == 0 -> readers++; hb = gcur; held[hb]++ }
}

/* Unblock (syncGate.RUnlock) */
inline runlock(hb) {
	readers--; held[hb]--
}

/* the long operation: its hold was taken in init, in bucket 0 */
proctype longOp() {
	atomic { shortsDone == NSHORT -> runlock(0); busy-- }
}

/* any other runtime operation under BlockPluginSync */
proctype shortOp() {
	bit hb;
	rlock(hb);
	atomic { runlock(hb); shortsDone++; busy--; hb = 0 }
}

/* registry.admit for a takeover: registry.prepare (journal.openCursor,
 * syncGate.drain within the patience, snapshot and rounds), then
 * syncGate.Lock, registry.commit, syncGate.Unlock */
proctype candidate() {
	bit dold;
	/* syncGate.drain: the other bucket first, then flip, then wait for
	 * the old bucket, or give up when the patience expires */
	atomic { held[1 - gcur] == 0 -> dold = gcur; gcur = 1 - gcur };
	if
	:: atomic { held[dold] == 0 -> dold = 0 };
		/* snapshot, synchronize, delta rounds: no lock */
		enqueue(CAND);
		lockTicket(CAND);
		atomic { committed = true; writer = false }
	:: true ->
		/* ctx done: the patience expired */
#ifdef BUG_DRAIN_FALLBACK
		/* "synchronizing it while they wait": the full round under the gate */
		enqueue(CAND);
		lockTicket(CAND);
		atomic { committed = true; writer = false }
#else
		refused = true
#endif
	fi;
	dold = 0;
	busy--
}

proctype watchdog() {
end:
	timeout -> assert(busy == 0 || F1_no_freeze)
}

init {
	byte i;
	q[0] = NONE;
	atomic {
		/* the long operation is in flight when the takeover begins */
		readers = 1; held[0] = 1;
		busy = NSHORT + 2;
		run longOp();
		run candidate();
		i = 0;
		do
		:: i < NSHORT -> run shortOp(); i++
		:: else -> break
		od;
		i = 0;
		run watchdog()
	}
}
