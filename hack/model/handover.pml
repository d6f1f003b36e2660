/*
 * handover.pml: a model of plugin handover in pkg/adaptation, for spin.
 *
 * One opted-in plugin name (one shared slot, registry.go) and three
 * connections to it, each a plugin instance supporting delta rounds
 * (api.FeatureDeltaSync), so that every way of joining in handover.go is
 * reachable:
 *
 *   A (0)  joins first: a fresh join (full Synchronize under the sync gate);
 *   B (1)  takes over from A: phase 1 outside the gate, catch-up and switch
 *          under it;
 *   C (2)  registers at any time: a new instance (displacing B while B is the
 *          candidate, or superseding it later), or A restarted by the kubelet
 *          with A's instance id.
 *
 * The runtime runs NOPS operations under BlockPluginSync (each dispatches one
 * event) and NEXIT container exits that bypass the gate (containerd's
 * NotifyContainerExit -> StopContainer). Standby grace is on or off (both are
 * explored). Every plugin process may be killed at any step (process
 * killer): its connection then closes (plugin.connectionLost), unless the
 * runtime noticed first (a failed request).
 *
 * Events are bits of a mask. The runtime's state (what SyncFn reports) is
 * stateMask; what a plugin knows (it handled the event, or was synchronized
 * with a state that has it) is known[i]. RPCs to a plugin are atomic steps
 * that succeed if its process is alive; a plugin's role is what it was last
 * told (belief[i]).
 *
 * Not modeled: plugins written for upstream taken over by name and index,
 * builtin and pre-installed plugins (never displaced), instances without
 * delta rounds (their one full Synchronize is committed without the sequence
 * check, so a container exit between it and the switch reaches only the
 * predecessor: exactly-once needs FeatureDeltaSync or exits under the gate),
 * rollout generations and versions (only instance ids), timeouts and hung
 * plugins (an RPC succeeds or the process is dead), and Stop.
 *
 * Safety (assertions; `make model` names each):
 *   S1 no event is handled by two instances;
 *   S2 no event is handled by none while an instance is active (alive and
 *      told ACTIVE), and
 *   S2w no runtime operation that passed BlockPluginSync after the loss of
 *      the active instance was noticed dispatches to nobody while its standby
 *      waits to be reactivated: the documented window is the rest of the
 *      runtime operations already past the gate when the loss was noticed
 *      (and events bypassing the gate, which S5 covers);
 *   S3 a superseded instance is never active again unless it is the
 *      designated standby: an instance told SUPERSEDED never becomes active,
 *      and a restart of a superseded instance id does not take over from the
 *      instance that superseded it;
 *   S4 an instance handles events only after it was told ACTIVE (issue 10,
 *      finding 11);
 *   S5 an instance becomes active knowing every event dispatched so far
 *      (handled by it or in the state it synchronized with), unless the
 *      commit gave up after maxCatchUps rounds, which it logs;
 *   S6 at most one live instance believes it is active.
 * D  no deadlock: every runtime operation finishes (watchdog).
 * Liveness (ltl live): an instance that synchronized becomes active, unless
 * it crashed, was displaced by a newer candidate, superseded, or dropped as a
 * standby.
 *
 * Negative variants (each must fail; see hack/model/check.sh):
 *   BUG_ACTIVE_FIRST     ACTIVE told before SUPERSEDED/STANDBY      -> S6
 *   BUG_NO_SEQ_CHECK     switch without the dispatch sequence check -> S5
 *   BUG_LATE_ACTIVE      ACTIVE told after the adaptation's lock    -> S4
 *   BUG_NO_RESERVE       gate reserved by the reactivation itself,
 *                        not when the loss is noticed               -> S2w
 *   BUG_STANDBY_DISPATCH the standby stays in the dispatch list     -> S1
 *   BUG_KEEP_GATE        a failed reactivation keeps the gate       -> D
 *   BUG_MISSED_FAILS     an event dispatched during the commit fails
 *                        the join instead of another delta round   -> liveness
 */

#define NI 3
#define NONE 255
#define A 0
#define B 1
#define C 2

#define NEV 3 /* events: NOPS + NEXIT at most */
#define MAXCATCHUPS 4 /* handover.go maxCatchUps */

mtype = { rnone, ractive, rstandby, rgone }; /* what a plugin was last told */

/* The bounds, from MODEL_CONFIG="NOPS NEXIT NKILL WITH_C C_IS_A" (see
 * init), so that one compiled pan checks every configuration: NOPS runtime
 * operations under BlockPluginSync and NEXIT container exits run while B
 * (and C if WITH_C) join, NKILL processes may be killed, and C is A
 * restarted (with A's instance id) if C_IS_A. */
byte nops, nexit, nkill;
bool withC, cIsA;

/* registry (registry.go), under g.mu: the shared slot of the name */
byte sActive = NONE;  /* slot.active */
byte sCand = NONE;    /* slot.candidate */
byte sStandby = NONE; /* slot.standby */
byte listMask;        /* registry.plugins: who receives events */
bool retiredId[NI];   /* slot.retired, by instance id */
bool graceOn;         /* handoverPolicy.grace > 0 */
bool graceArmed;      /* slot.graceT running */

/* per connection */
byte id[NI];      /* instance id */
bool alive[NI];   /* the plugin's process runs */
bool closing[NI]; /* plugin.closing */
mtype belief[NI];
byte known[NI];

/* runtime */
bool lk;        /* the Adaptation's lock */
byte nd;        /* Adaptation.dispatched */
byte stateMask; /* the runtime's state (SyncFn) */
byte dispMask;  /* events dispatched */
byte handled[NEV];

/* sync gate (syncgate.go) */
byte readers;
bool writer;
byte q[4];
byte qlen;

/* The properties' names, always false: an assertion `expr || name` fails
 * showing the name. Hidden: not part of the state. */
hidden byte S1_no_duplicate, S2_no_loss, S2w_window, S3_never_again, S4_active_first, S5_made_whole, S6_one_active, D_no_deadlock;

/* bookkeeping for the properties */
bool synced[NI];  /* synchronized (phase 1, or full under the gate) */
bool became[NI];  /* told ACTIVE since it last synchronized */
bool excused[NI]; /* crashed, displaced, superseded or dropped */
bool toldSuperseded[NI];
byte supBy[NI]; /* by instance id: the connection that superseded it */
byte reactivating;
byte lossSeq;
byte busy; /* runtime operations not finished */

/* syncGate.enqueue */
inline enqueue(t) {
	atomic { q[qlen] = t; qlen++ }
}

/* syncGate.lockTicket */
inline lockTicket(t) {
	atomic {
		qlen > 0 && q[0] == t && !writer && readers == 0 ->
		q[0] = q[1]; q[1] = q[2]; q[2] = q[3]; q[3] = NONE; qlen--;
		writer = true
	}
}

/* syncGate.Unlock */
inline gateUnlock() {
	writer = false
}

/* registry.startReactivation; g.mu is held */
inline startReactivation(p) {
	reactivating++;
	lossSeq++;
#ifndef BUG_NO_RESERVE
	enqueue(p);
#endif
	run reactivate(p)
}

/* registry.remove (and rebuild): out of its slot and of event delivery; a
 * lost active instance with a standby reserves the gate at once. */
inline remove(p) {
	atomic {
		sb = NONE;
		if
		:: p == sCand -> sCand = NONE
		:: p != sCand && p == sStandby -> sStandby = NONE; graceArmed = false
		:: p != sCand && p != sStandby && p == sActive ->
			sActive = NONE; listMask = 0;
			if
			:: sStandby != NONE -> sb = sStandby; graceArmed = false
			:: else -> skip
			fi
		:: else -> skip
		fi;
		if
		:: sActive == NONE && sCand == NONE && sStandby == NONE ->
			retiredId[0] = false; retiredId[1] = false; retiredId[2] = false
		:: else -> skip
		fi;
		if
		:: sb != NONE -> startReactivation(sb)
		:: else -> skip
		fi
	}
}

/* plugin.shutdown / plugin.supersede (disconnect): out of delivery first,
 * then the notice (the plugin hears it if its process is alive) */
inline shutdown(p) {
	remove(p);
	atomic {
		if
		:: !closing[p] ->
			closing[p] = true;
			if
			:: alive[p] -> belief[p] = rgone
			:: else -> skip
			fi
		:: else -> skip
		fi
	}
}

/* S6 before telling p it is active */
inline onlyActive(p) {
	j = 0;
	do
	:: j < NI ->
		assert(j == p || !(alive[j] && belief[j] == ractive) || S6_one_active);
		j++
	:: else -> break
	od
}

/* registry.tellRole(p, ACTIVE); on failure p.shutdown */
inline tellActive(p) {
	if
	:: atomic { alive[p] -> onlyActive(p); belief[p] = ractive; became[p] = true }
	:: atomic { !alive[p] -> skip }; shutdown(p)
	fi
}

/* registry.tell: the old instances hear they are superseded (or standing
 * by) before the new one hears it is active */
inline tell(p) {
#ifdef BUG_ACTIVE_FIRST
	tellActive(p);
#endif
	if
	:: dropped != NONE -> excused[dropped] = true; shutdown(dropped)
	:: else -> skip
	fi;
	if
	:: from != NONE && asStandby ->
		atomic {
			if
			:: alive[from] -> belief[from] = rstandby
			:: else -> skip
			fi
		}
	:: from != NONE && !asStandby ->
		excused[from] = true; toldSuperseded[from] = true; shutdown(from)
	:: else -> skip
	fi;
#if !defined(BUG_ACTIVE_FIRST) && !defined(BUG_LATE_ACTIVE)
	tellActive(p);
#endif
}

/* registry.swap, under g.mu (the caller holds the adaptation's lock) */
inline swap(p) {
	atomic {
		if
		:: closing[p] -> ok = false
		:: !closing[p] && sCand != p && sStandby != p -> ok = false; excused[p] = true
		:: !closing[p] && sStandby == p && sActive != NONE -> ok = false; excused[p] = true
		:: else ->
			assert((known[p] & dispMask) == dispMask || gaveUp || S5_made_whole);
			assert(!toldSuperseded[p] || S3_never_again);
			assert(sStandby == p || supBy[id[p]] == NONE || supBy[id[p]] != sActive || S3_never_again);
			from = sActive; dropped = NONE; asStandby = false;
			if
			:: sCand == p -> sCand = NONE
			:: else -> skip
			fi;
			if
			:: sStandby == p -> sStandby = NONE; retiredId[id[p]] = false
			:: sStandby != p && sStandby != NONE ->
				dropped = sStandby; sStandby = NONE; graceArmed = false
			:: else -> skip
			fi;
			sActive = p;
			if
			:: from != NONE ->
				retiredId[id[from]] = true; supBy[id[from]] = p;
				if
				:: graceOn -> sStandby = from; asStandby = true; graceArmed = true
				:: else -> skip
				fi
			:: else -> skip
			fi;
			listMask = 1 << p;
#ifdef BUG_STANDBY_DISPATCH
			if
			:: sStandby != NONE -> listMask = listMask | (1 << sStandby)
			:: else -> skip
			fi;
#endif
			ok = true
		fi
	}
}

/* registry.switchTo: under the adaptation's lock, with the dispatch
 * sequence check when check is set */
inline switchTo(p, check) {
	atomic {
		!lk -> lk = true;
		missed = false;
#ifndef BUG_NO_SEQ_CHECK
		if
		:: check && nd != r -> missed = true
		:: else -> skip
		fi;
#endif
		if
		:: !missed -> swap(p)
		:: else -> skip
		fi
	};
	if
	:: !missed && ok -> tell(p)
	:: else -> skip
	fi;
	lk = false;
#ifdef BUG_LATE_ACTIVE
	if
	:: ok && !missed -> tellActive(p)
	:: else -> skip
	fi
#endif
}

/* registry.commit: the caller holds the sync gate. haveBase tells whether
 * phase 1 synchronized p already. ok tells the outcome. A snapshot
 * (registry.snapshot, changesSince) reads the dispatch count, then the
 * state; the state read and the synchronize RPC carrying it are one step. */
inline commit(p) {
	ok = false;
	if
	:: atomic { !(sCand == p || sStandby == p) -> excused[p] = true }; /* pending: errDisplaced */
		goto cdone
	:: else -> skip
	fi;
	if
	:: !haveBase ->
		r = nd;
		if
		:: atomic { alive[p] -> snap = stateMask; known[p] = snap; bmask = snap; synced[p] = true; snap = 0 }
		:: atomic { !alive[p] -> skip }; goto cdone
		fi;
		catchUp = false
	:: else -> catchUp = true
	fi;
	round = 0;
	do
	:: true ->
		if
		:: catchUp ->
			r = nd;
			if
			:: atomic {
				stateMask == bmask -> skip /* an empty delta is not sent */
			}
			:: atomic {
				stateMask != bmask && alive[p] ->
				snap = stateMask; known[p] = known[p] | snap; bmask = snap; snap = 0
			}
			:: atomic { stateMask != bmask && !alive[p] -> skip }; goto cdone
			fi
		:: else -> skip
		fi;
		if
		:: round == MAXCATCHUPS - 1 -> gaveUp = true; switchTo(p, false); break
		:: else -> switchTo(p, true);
			if
#ifdef BUG_MISSED_FAILS
			:: missed -> ok = false; break
#else
			:: missed -> catchUp = true; round++
#endif
			:: else -> break
			fi
		fi
	od;
cdone:
	skip
}

/* Adaptation.relay (dispatch.go) for event e, under the adaptation's lock,
 * with plugin.relay's failure handling (handleRequestError: a transport
 * failure disconnects the plugin). gated/ep: the operation holds
 * BlockPluginSync, which it took when lossSeq was ep. */
inline relay(e, gated, ep) {
	atomic {
	nd++;
	dispMask = dispMask | (1 << e);
	lst = listMask;
	got = 0;
	j = 0;
	do
	:: j < NI ->
		if
		:: (lst >> j) & 1 && !closing[j] ->
			if
			:: atomic {
				alive[j] ->
				handled[e]++;
				assert(handled[e] == 1 || S1_no_duplicate);
				known[j] = known[j] | (1 << e);
				got = got | (1 << j)
			}
			:: atomic { !alive[j] -> skip }; shutdown(j)
			fi
		:: else -> skip
		fi;
		j++
	:: else -> break
	od;
	atomic {
		j = 0;
		do
		:: j < NI ->
			assert(!(alive[j] && belief[j] == ractive) || ((got >> j) & 1) || S2_no_loss);
			assert(!((got >> j) & 1) || belief[j] == ractive || S4_active_first);
			j++
		:: else -> break
		od;
		assert(!gated || got != 0 || reactivating == 0 || ep != lossSeq || S2w_window)
	};
	lst = 0; got = 0; j = 0; sb = 0
	}
}

/* A runtime operation under BlockPluginSync: Adaptation.BlockPluginSync,
 * one event (Adaptation.CreateContainer etc., dispatch.go), the runtime
 * applying it to its state, Unblock. */
proctype runtimeOp(byte e) {
	byte lst, got, j, sb, ep;
	atomic { !writer && qlen == 0 -> readers++; ep = lossSeq }; /* syncGate.RLock */
	atomic { !lk -> lk = true; relay(e, true, ep); lk = false };
	atomic { stateMask = stateMask | (1 << e); readers--; ep = 0; busy-- }
}

/* A container exit: containerd's NotifyContainerExit -> Adaptation.StopContainer,
 * which does not take BlockPluginSync; the exit is in the runtime's state first. */
proctype exitEvent(byte e) {
	byte lst, got, j, sb;
	stateMask = stateMask | (1 << e);
	atomic { !lk -> lk = true; relay(e, false, 0); lk = false; busy-- }
}

/* An instance connecting and joining: Adaptation.serveConn (listener.go),
 * plugin.start -> RegisterPlugin -> registry.screen / registry.place /
 * handoverPolicy.mayClaim, then registry.admit: takeoverFrom, phase 1
 * (snapshot + synchronize outside the gate), syncGate.Lock, registry.commit,
 * switchTo, swap, tell, syncGate.Unlock; registry.fail on failure. */
proctype join(byte i) {
	byte sb, displaced, r, snap, bmask, round, from, dropped, j;
	bool haveBase, catchUp, missed, ok, gaveUp, asStandby;
	/* RegisterPlugin */
	if
	:: atomic { !alive[i] -> skip }; goto out /* lost before registration */
	:: atomic {
		alive[i] && retiredId[id[i]] -> skip
	}; /* mayClaim: superseded and its successors live */
		shutdown(i); goto out
	:: atomic {
		alive[i] && !retiredId[id[i]] ->
		displaced = sCand; sCand = i
	}
	fi;
	if
	:: displaced != NONE -> excused[displaced] = true; shutdown(displaced) /* screen */
	:: else -> skip
	fi;
	haveBase = (sActive != NONE); /* admit: takeoverFrom */
	/* phase 1: the predecessor keeps handling events */
	if
	:: haveBase ->
		r = nd;
		if
		:: atomic { alive[i] -> snap = stateMask; known[i] = snap; bmask = snap; synced[i] = true; snap = 0 }
		:: atomic { !alive[i] -> skip }; shutdown(i); goto out
		fi
	:: else -> skip
	fi;
	enqueue(i);
	lockTicket(i);
	commit(i);
	gateUnlock();
	if
	:: !ok -> shutdown(i)
	:: else -> skip
	fi;
out:
	atomic { sb = 0; displaced = 0; r = 0; bmask = 0; round = 0; from = 0; dropped = 0; j = 0;
		haveBase = false; catchUp = false; missed = false; ok = false; gaveUp = false; asStandby = false }
}

/* registry.reactivate, started by registry.startReactivation from
 * registry.remove: the standby re-synchronized under the gate reserved when
 * the loss was noticed. */
proctype reactivate(byte i) {
	byte sb, r, snap, bmask, round, from, dropped, j;
	bool haveBase, catchUp, missed, ok, gaveUp, asStandby;
	became[i] = false;
#ifdef BUG_NO_RESERVE
	enqueue(i);
#endif
	lockTicket(i);
	haveBase = false;
	commit(i);
	/* the reactivation is over when the gate opens */
#ifdef BUG_KEEP_GATE
	atomic {
		reactivating--;
		if
		:: ok -> gateUnlock()
		:: else -> skip
		fi
	};
#else
	atomic { reactivating--; gateUnlock() };
#endif
	if
	:: !ok -> shutdown(i)
	:: else -> skip
	fi;
	atomic { sb = 0; r = 0; bmask = 0; round = 0; from = 0; dropped = 0; j = 0;
		haveBase = false; catchUp = false; missed = false; ok = false; gaveUp = false; asStandby = false }
}

/* kill -9 of one plugin process (any of them) at any step, or of none, then
 * ttrpc's close callback: plugin.connectionLost (registry.remove, then
 * closing). nkill of them run. */
proctype killer() {
	byte i, sb;
	if
	:: i = NONE
	:: atomic { alive[A] -> alive[A] = false; excused[A] = true; i = A }
	:: atomic { alive[B] -> alive[B] = false; excused[B] = true; i = B }
	:: atomic { alive[C] -> alive[C] = false; excused[C] = true; i = C }
	fi;
	if
	:: i != NONE -> remove(i); closing[i] = true
	:: else -> skip
	fi;
	atomic { i = 0; sb = 0 }
}

/* No deadlock: once nothing can move (timeout), every runtime operation
 * has finished. (The acceptance search does not report invalid end states;
 * this does, in every mode. A join or reactivation that never finishes
 * violates ltl live; counting them here too would cost partial order
 * reduction, their last steps being local.) */
proctype watchdog() {
end:
	timeout -> assert(busy == 0 || D_no_deadlock)
}

/* time.AfterFunc(grace, registry.graceOver) */
proctype graceTimer() {
	byte sb, p;
end:
	do
	:: atomic { graceArmed -> graceArmed = false; p = sStandby; sStandby = NONE; excused[p] = true };
		shutdown(p)
	od
}

init {
	byte e;
	c_code {
		char *cfg = getenv("MODEL_CONFIG");
		int o = 2, x = 1, k = 1, wc = 0, ca = 0;
		if (cfg != NULL && sscanf(cfg, "%d %d %d %d %d", &o, &x, &k, &wc, &ca) != 5) {
			fprintf(stderr, "MODEL_CONFIG is not NOPS NEXIT NKILL WITH_C C_IS_A: %s", cfg);
			exit(2);
		}
		now.nops = o; now.nexit = x; now.nkill = k; now.withC = wc; now.cIsA = ca;
	};
	assert(nops + nexit <= NEV);
	id[A] = A; id[B] = B;
	if
	:: cIsA -> id[C] = A /* A restarted by the kubelet */
	:: else -> id[C] = C
	fi;
	if
	:: graceOn = true
	:: graceOn = false
	fi;
	supBy[0] = NONE; supBy[1] = NONE; supBy[2] = NONE;
	q[0] = NONE; q[1] = NONE; q[2] = NONE; q[3] = NONE;
	alive[A] = true; alive[B] = true; alive[C] = withC;
	atomic {
		run join(A);
		e = 0;
		do
		:: e < nkill -> run killer(); e++
		:: else -> break
		od;
		run graceTimer();
		run watchdog()
	};
	/* the successors come once A joined (or failed to) */
	(became[A] || closing[A]);
	atomic {
		run join(B);
		if
		:: withC -> run join(C)
		:: else -> skip
		fi;
		e = 0;
		do
		:: e < nops -> busy++; run runtimeOp(e); e++
		:: e >= nops && e < nops + nexit -> busy++; run exitEvent(e); e++
		:: else -> break
		od;
		e = 0
	}
}

/* Liveness: an instance that synchronized becomes active unless excused. */
ltl live {
	[] ((synced[0] -> <> (became[0] || excused[0])) &&
	    (synced[1] -> <> (became[1] || excused[1])) &&
	    (synced[2] -> <> (became[2] || excused[2])))
}
