/*
 * gate.pml: SyncFn only under the gate held exclusively (README.md,
 * rule 1) and the join under the gate (rule 4a), against the runtime's
 * per-container state, for spin.
 *
 * containerd's (and CRI-O's) NRI glue keeps a state per container (created,
 * running, stopped) beside its store: SyncFn resets it from the store, and
 * StopContainer is relayed only if that state says created/running (then
 * set to stopped), so an exit and a graceful stop relay it once. A
 * container exit is handled in two steps: the store says stopped, then the
 * exit's StopContainer is relayed under the runtime's mutex (rmu), without
 * the gate.
 *
 * Actors: X, the instance serving the name (a legacy plugin taken over by
 * the join, or none: a fresh join) and J joining under the gate; a graceful
 * stop of container c0 (gated: it kills c0, waits for it to stop, then
 * relays its own StopContainer); a CreateContainer of c1 (gated: relayed,
 * then the container is in the store). J's join: queue for the gate, SyncFn
 * (the runtime's state, rmu held) with J's full Synchronize, the switch in
 * a hold taken before SyncFn returns (hold.pml), which may fail (rule 6: X
 * stays routed); release the gate. The adaptation's relays are atomic here
 * (hold.pml has r.mu, the ledger and the hold).
 *
 * Properties:
 *   R1 the instance routed at the end knows c0 stopped: its stop was
 *      relayed to it, or was in the state it synchronized with;
 *   R2 the instance routed at the end knows every container in the store:
 *      c1 was relayed to it, or was in the state it synchronized with.
 *
 * Variants that must fail (hack/model/check.sh):
 *   BUG_SYNC_OUTSIDE_GATE (finding 5) SyncFn without the gate while the
 *       graceful stop is in flight: it resets c0's state to stopped
 *       between the exit and its relay; neither the exit nor the graceful
 *       stop relays it                                  -> R1
 *   BUG_JOIN_OUTSIDE_GATE (finding 6) a fresh join synchronizing outside
 *       the gate: c1 relayed before J is routed, in the store after SyncFn
 *                                                       -> R2
 *   DESIGN_CRASH_EXIT     a container that exits by itself (no graceful
 *       stop holding the gate): its exit bypasses the gate, so SyncFn under
 *       the gate may run between the store update and the relay
 *       -> R1 (a real counterexample of the design: see README)
 */

#define RUN 1
#define STOPPED 2

bool rmu;
byte readers; bool writer, wq;

byte store0 = RUN, cst0 = RUN; /* c0: the store, the per-container NRI state */
bool c1store, c1cst;

bool xPresent;   /* a legacy instance X serves the name */
bool routedJ;
bool joinDone;
bool xKnowsStop, jKnowsStop, xKnowsC1, jKnowsC1;
byte running;

hidden byte R1_stop_relayed, R2_routed_knows;

/* containerd's stopContainer: relayed only if needsStopping */
inline stopRelay() {
	if
	:: cst0 == RUN -> cst0 = STOPPED;
		if
		:: routedJ -> jKnowsStop = true
		:: !routedJ && xPresent -> xKnowsStop = true
		:: else
		fi
	:: else
	fi
}

proctype exitHandler() {
	store0 = STOPPED;
	atomic { !rmu -> rmu = true; stopRelay(); rmu = false; running-- }
}

proctype gracefulStop() {
	atomic { !writer && !wq -> readers++ };
	atomic { running++; run exitHandler() }; /* kill: the exit comes asynchronously */
	store0 == STOPPED; /* waits for the container to stop */
	atomic { !rmu -> rmu = true; stopRelay(); rmu = false };
	atomic { readers--; running-- }
}

proctype crashExit() {
	store0 = STOPPED;
	atomic { !rmu -> rmu = true; stopRelay(); rmu = false; running-- }
}

proctype createOp() {
	atomic { !writer && !wq -> readers++ };
	atomic {
		!rmu -> rmu = true;
		if
		:: routedJ -> jKnowsC1 = true
		:: !routedJ && xPresent -> xKnowsC1 = true
		:: else
		fi;
		c1cst = true; rmu = false
	};
	c1store = true; /* the CRI layer stores it after the relay */
	atomic { readers--; running-- }
}

proctype join() {
#if !defined(BUG_SYNC_OUTSIDE_GATE) && !defined(BUG_JOIN_OUTSIDE_GATE)
	atomic { wq = true };
	atomic { readers == 0 && !writer -> writer = true; wq = false };
#endif
	atomic {
		!rmu -> rmu = true;
		/* SyncFn: the per-container state reset from the store, J's full
		 * Synchronize with the store's state */
		if
		:: store0 == STOPPED -> cst0 = STOPPED
		:: else -> cst0 = RUN
		fi;
		c1cst = c1store;
		jKnowsC1 = c1store;
		jKnowsStop = (store0 == STOPPED)
	};
#ifdef BUG_SYNC_OUTSIDE_GATE
	/* the old phase 1: the snapshot now, the switch later */
	rmu = false;
#endif
	/* the switch in a hold taken before SyncFn returns; it may fail */
	atomic {
		if
		:: routedJ = true
		:: skip /* rule 6: X stays routed */
		fi;
#ifndef BUG_SYNC_OUTSIDE_GATE
		rmu = false;
#endif
		writer = false; joinDone = true; running--
	}
}

init {
	atomic {
#ifndef BUG_JOIN_OUTSIDE_GATE
		if
		:: xPresent = true
		:: xPresent = false
		fi;
		running = 3;
		run gracefulStop();
#else
		/* a fresh join and one CreateContainer */
		running = 2;
#endif
		run join();
		run createOp();
#ifdef DESIGN_CRASH_EXIT
		running++;
		run crashExit();
#endif
	};
	running == 0;
	assert(store0 != STOPPED || (routedJ && jKnowsStop) || (!routedJ && (!xPresent || xKnowsStop)) || R1_stop_relayed);
	assert(!c1store || (routedJ && jKnowsC1) || (!routedJ && (!xPresent || xKnowsC1)) || R2_routed_knows)
}
