/*
 * grace.pml: the standby's grace timer against its reactivation
 * (pkg/adaptation handover.go graceOver, slot.stopGrace, registry.remove,
 * startReactivation, reactivate), for spin.
 *
 * One opted-in name. A (0) is the active instance; S (1) is the standby its
 * switch kept from the instance it superseded, with a grace timer
 * (time.AfterFunc(grace, graceOver)) armed. Any of them may be lost
 * (kill -9, then registry.remove). When A is lost while S stands by,
 * remove() stops S's grace timer and queues S's reactivation, both under
 * the registry's lock g.mu. time.Timer.Stop does not wait for a timer that
 * already fired: its goroutine may be running graceOver, blocked on g.mu.
 *
 * The timer is two steps, as in Go: it fires (the AfterFunc goroutine
 * starts; Stop can no longer prevent it), then graceOver takes g.mu and
 * decides. graceOver carries the token its timer was armed with
 * (slot.graceSeq when the switch armed it); slot.stopGrace and the start of
 * a reactivation change the slot's token, so a graceOver whose timer is no
 * longer the slot's current one does nothing.
 *
 * handover.pml's grace timer is one atomic step (it fires and retires the
 * standby at once, or is stopped first): that is what this model shows the
 * token makes of the two steps. A timer that fired and then finds its token
 * stale does nothing, as a timer stopped in time.
 *
 * Not modeled: the sync gate (the reactivation's reserved ticket: it orders
 * the reactivation against runtime operations, not against the timer), the
 * journal and events (handover.pml), notices (an instance told to go is
 * out of the slot at once).
 *
 * Property (assertion, named in `make model`):
 *   G1 a standby whose reactivation was queued is never retired by a stale
 *      grace timer: once every process is done, if S's reactivation was
 *      queued, S is the active instance unless its process died; so exactly
 *      one instance ends up active.
 *
 * Negative variant (must fail; see hack/model/check.sh):
 *   BUG_STALE_GRACE  graceOver checks only that the plugin is still the
 *                    slot's standby, not that its timer is the current one
 *                    (the check before issue 17)                      -> G1
 */

#define NONE 255
#define A 0
#define S 1

/* registry (registry.go), under g.mu */
bool mu;                /* g.mu */
byte sActive = A;       /* slot.active */
byte sStandby = S;      /* slot.standby */
bool graceArmed = true; /* slot.graceT set and not fired */
byte graceSeq = 1;      /* slot.graceSeq: the current timer's token */

bool alive[2];
bool closing[2];

/* bookkeeping for the property */
bool queued; /* S's reactivation was queued (startReactivation) */
byte busy;   /* processes not done */

hidden byte G1_no_stale_grace;

/* slot.stopGrace: the timer is stopped if it did not fire, and its token
 * is no longer the current one in any case */
inline stopGrace() {
	graceArmed = false; graceSeq++
}

/* slot.leaveStandby */
inline leaveStandby() {
	sStandby = NONE; stopGrace()
}

/* registry.remove after plugin.connectionLost; g.mu is taken */
inline remove(p) {
	atomic {
		!mu -> mu = true;
		if
		:: p == sStandby -> leaveStandby()
		:: p == sActive ->
			sActive = NONE;
			if
			:: sStandby != NONE ->
				stopGrace();
				/* startReactivation: the reactivation's start is also a
				 * new token */
				graceSeq++; queued = true; busy++; run reactivate(sStandby)
			:: else -> skip
			fi
		:: else -> skip
		fi;
		closing[p] = true;
		mu = false
	}
}

/* registry.reactivate: commit checks pending(p), then swap under g.mu
 * makes it active if it is still the standby and nobody else is active */
proctype reactivate(byte p) {
	atomic {
		!mu -> mu = true;
		if
		:: sStandby == p && sActive == NONE && !closing[p] ->
			sActive = p; leaveStandby()
		:: else -> skip /* errDisplaced, or it closed: p.shutdown */
		fi;
		mu = false;
		busy--
	}
}

/* time.AfterFunc(grace, func() { g.graceOver(s, p, seq) }) */
proctype graceTimer(byte p; byte seq) {
	bool retire;
end:
	atomic { graceArmed -> graceArmed = false }; /* fired: Stop returns false from now on */
	atomic {
		!mu -> mu = true;
#ifdef BUG_STALE_GRACE
		retire = (sStandby == p);
#else
		retire = (sStandby == p && graceSeq == seq);
#endif
		if
		:: retire -> leaveStandby(); closing[p] = true /* p.shutdown(SUPERSEDED, "standby grace period over") */
		:: else -> skip
		fi;
		mu = false;
		retire = false
	}
}

/* kill -9 of A, of S, or of neither; the close callback runs remove */
proctype killer() {
	if
	:: skip
	:: atomic { alive[A] -> alive[A] = false }; remove(A)
	:: atomic { alive[S] -> alive[S] = false }; remove(S)
	fi;
	busy--
}

/* once nothing can move, every process is done and G1 holds */
proctype watchdog() {
end:
	timeout -> assert(busy == 0 || G1_no_stale_grace);
	assert(!queued || sActive == S || !alive[S] || G1_no_stale_grace)
}

init {
	alive[A] = true; alive[S] = true;
	atomic {
		busy = 2;
		run graceTimer(S, graceSeq);
		run killer();
		run killer();
		run watchdog()
	}
}
