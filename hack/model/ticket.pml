/*
 * ticket.pml: a displaced candidate's switch ticket against a loss (issue 39
 * finding 2), for spin.
 *
 * One plugin name: A active at the start; B and C register in either order
 * and join from the ledger (a round from the ledger, then their switch
 * ticket is queued, then the switch in a hold: the last round with
 * dispatch paused, and the swap). A registration displaces the pending
 * candidate (place). A may be lost at any time (NKILL 2: the joining
 * candidate may be lost too). At the loss of the active instance while a
 * candidate joins from the ledger, the slot reserves an urgent hold for that
 * candidate: events wait for its switch (the proposal's failure-modes row,
 * "A dies while B synchronizes from the ledger: events wait for B's
 * switch"), and the reservation ends when the candidate switches in or is
 * lost. NEV events are relayed, each under the hold's rules, to the routed
 * instance.
 *
 * Abstracted: the gate, the runtime's mutex and exits (hold.pml); the
 * ledger's cursors (a round gives every event dispatched so far); notices
 * and failures in the hold (hold.pml); a candidate switching in from nobody
 * switches from the ledger (the reservation keeps events for it).
 *
 * Properties:
 *   W1 an event dispatched after the loss of the active instance, while the
 *      candidate that was joining at the loss is alive, waits for that
 *      candidate's switch: it never reaches no instance;
 *   E2 at the end, if an instance is alive and connected, the routed one is,
 *      and it knows every dispatched event;
 *   deadlock: an invalid end state.
 *
 * Variant that must fail (hack/model/check.sh):
 *   BUG_STALE_TICKET (finding 2) a displaced candidate's ticket stays the
 *       slot's switch; the loss urges that stale ticket instead of reserving
 *       an urgent hold for the joining candidate; the ticket ends at once (its
 *       candidate was displaced)                                     -> W1
 */

#ifndef NEV
#define NEV 1
#endif
#ifndef NKILL
#define NKILL 1
#endif
#define A 0
#define B 1
#define C 2
#define NI 3
#define NONE 255

byte route = A;
byte cand = NONE;      /* the pending candidate */
byte switching = NONE; /* the slot's switch ticket (s.switching) */
byte reserved = NONE;  /* an urgent hold reserved at a loss */
byte atLoss = NONE;    /* the candidate joining when the active one was lost */
bool held;             /* a switch hold: dispatch paused */
bool alive[NI], closed[NI];
byte known[NI];
byte disp;
byte nkill = NKILL;
byte running;

hidden byte W1_events_wait_for_joiner, E2_one_serves;

/* the registry drops p (its connection closed) */
inline remove(p) {
	closed[p] = true;
	if
	:: cand == p -> cand = NONE
	:: else
	fi;
	if
	:: route == p ->
		route = NONE;
		atLoss = cand;
#ifdef BUG_STALE_TICKET
		if
		:: switching != NONE -> reserved = switching /* urged: a stale ticket ends at once */
		:: else -> reserved = cand
		fi
#else
		reserved = cand
#endif
	:: else
	fi
}

/* dispatch waits for a hold and for an urgent reservation whose candidate
 * is still joining */
proctype event(byte e) {
	atomic {
		!held && (reserved == NONE || closed[reserved]) ->
		disp = disp | (1 << e);
		if
		:: route != NONE && !closed[route] -> known[route] = known[route] | (1 << e)
		:: else -> assert(atLoss == NONE || !alive[atLoss] || closed[atLoss] || W1_events_wait_for_joiner)
		fi;
		running--
	}
}

proctype candidate(byte c) {
	byte from;
	/* registration: place displaces the pending candidate */
	atomic {
		if
		:: cand != NONE ->
#ifndef BUG_STALE_TICKET
			if
			:: switching == cand -> switching = NONE
			:: else
			fi;
#endif
			closed[cand] = true;
			cand = NONE
		:: else
		fi;
		cand = c
	};
	/* its round from the ledger, outside any lock */
	atomic { known[c] = known[c] | disp };
	/* its switch ticket queued */
	atomic { if :: cand == c && !closed[c] -> switching = c :: else fi };
	/* the ticket's turn: the switch in a hold */
	atomic { !held -> held = true };
	atomic {
		if
		:: cand != c || closed[c] ->
			if :: switching == c -> switching = NONE :: else fi;
			if :: reserved == c -> reserved = NONE :: else fi;
			held = false
		:: else ->
			/* the last round (dispatch paused), the swap */
			known[c] = known[c] | disp;
			from = route;
			if
			:: from != NONE -> closed[from] = true /* superseded */
			:: else
			fi;
			route = c; cand = NONE; switching = NONE;
			if :: reserved == c -> reserved = NONE :: else fi;
			held = false
		fi;
		from = 0;
		running--
	}
}

proctype killer() {
	do
	:: atomic { nkill > 0 && alive[A] -> alive[A] = false; nkill--; if :: !closed[A] -> remove(A) :: else fi }
	:: atomic { nkill > 0 && !alive[A] && alive[C] && !closed[C] -> alive[C] = false; nkill--; remove(C) }
	:: atomic { nkill > 0 && !alive[A] && alive[B] && !closed[B] -> alive[B] = false; nkill--; remove(B) }
	:: break
	od;
	running--
}

init {
	byte e, j;
	atomic {
		alive[A] = true; alive[B] = true; alive[C] = true;
		running = 3 + NEV;
		run candidate(B);
		run candidate(C);
		run killer();
		e = 0;
		do
		:: e < NEV -> run event(e); e++
		:: else -> break
		od
	};
	running == 0;
	atomic {
		e = 0; j = 0;
		do
		:: j < NI -> if :: alive[j] && !closed[j] -> e = 1 :: else fi; j++
		:: else -> break
		od;
		assert(e == 0 || (route != NONE && alive[route] && !closed[route] && (known[route] & disp) == disp) || E2_one_serves)
	}
}
