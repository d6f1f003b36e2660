/*
 * handover.pml: a model of plugin handover in pkg/adaptation, for spin.
 *
 * One opted-in plugin name (one shared slot, registry.go) and three
 * connections to it, each a plugin instance supporting delta rounds
 * (api.FeatureDeltaSync), so that every way of joining in handover.go is
 * reachable:
 *
 *   A (0)  joins first: a fresh join (journal cursor and full Synchronize
 *          under the sync gate);
 *   B (1)  takes over from A: phase 1 outside the gate (cursor, drain,
 *          snapshot, delta rounds), catch-up and switch under it;
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
 * stateMask; what a plugin knows (it handled the event, was synchronized
 * with a state that has it, or was sent it in a delta round) is known[i].
 * RPCs to a plugin are atomic steps that succeed if its process is alive; a
 * plugin's role is what it was last told (belief[i]).
 *
 * The journal (journal.go) is the events noted with their dispatch number
 * (jseq), while any cursor is open. A cursor (cOpen/cNext/cKnown: one per
 * connection for its join, and RES for slot.resume, the standby's) opens at
 * the dispatch count; a delta round (cursor.since) adds to known[p] the
 * events noted at or after the cursor's next position and moves the cursor
 * past the latest one noted; the switch checks cursor.knows(dispatched).
 *
 * Not modeled here (issue 17's models, beside this one, take four of them
 * up: legacy.pml, plugins written for upstream taken over by name and
 * index; notice.pml, the role notices with no lock held and a plugin
 * callback during the ACTIVE notice; drain.pml, an operation in flight
 * that outlasts the drain; grace.pml, a grace timer that fired against a
 * reactivation): plugins written for upstream taken over by name and index,
 * builtin and pre-installed plugins (never displaced), instances without
 * delta rounds (their one full Synchronize is committed without the cursor
 * check, so a container exit between it and the switch reaches only the
 * predecessor: exactly-once needs FeatureDeltaSync or exits under the gate),
 * the journal's bound (an overrun means a full round, as a closed cursor
 * does here) and objects (each event changes its own object: no event
 * overwrites another's entry), failed CreateContainers, rollout generations
 * and versions (only instance ids), timeouts and hung plugins (an RPC
 * succeeds or the process is dead; drain never times out: drain.pml has
 * its patience), and Stop. A container exit is in the runtime's state
 * before it is dispatched, so the documented window of docs/proposal.md
 * "What the journal cannot see" (an exit dispatched just before a cursor
 * opens, stored only after SyncFn answered) is outside the model.
 *
 * The switch and its notices (swap, then tell) all happen under the
 * adaptation's lock here: no event is dispatched between the switch and
 * the successor's first event. Issue 17's design sends the notices with no
 * lock held, the successor receiving events only from its acknowledgement;
 * notice.pml checks that window (an exit in it reaches nobody and is in the
 * successor's delta round, or waits for the acknowledgement; a failed
 * ACTIVE notice reinstates the old instance), so S2 and S4 below are about
 * this step, N4 and N5 there about the window. The grace timer fires and
 * retires the standby in one step (or is stopped first): grace.pml shows
 * that graceOver's token makes the two steps of Go this one.
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
 *      (handled by it, in the state it synchronized with, or in a delta round
 *      from the journal), unless a commit gave up after maxCatchUps rounds,
 *      which it logs;
 *   S6 at most one live instance believes it is active.
 * D  no deadlock: every runtime operation finishes (watchdog).
 * Liveness (ltl live): an instance that synchronized becomes active, unless
 * it crashed, was displaced by a newer candidate, superseded, or dropped as a
 * standby.
 *
 * Negative variants (each must fail; see hack/model/check.sh):
 *   BUG_ACTIVE_FIRST     ACTIVE told before SUPERSEDED/STANDBY      -> S6
 *   BUG_NO_SEQ_CHECK     switch without the cursor check
 *                        (cursor.knows(dispatched))                 -> S5
 *   BUG_LATE_ACTIVE      ACTIVE told after the adaptation's lock,
 *                        the successor receiving events from the
 *                        switch, before its notice                  -> S4
 *   BUG_NO_RESERVE       gate reserved by the reactivation itself,
 *                        not when the loss is noticed               -> S2w
 *   BUG_STANDBY_DISPATCH the standby stays in the dispatch list     -> S1
 *   BUG_KEEP_GATE        a failed reactivation keeps the gate       -> D
 *   BUG_MISSED_FAILS     an event dispatched during the commit fails
 *                        the join instead of another delta round   -> liveness
 *   BUG_NO_DRAIN         phase 1 takes the runtime's state without
 *                        draining the BlockPluginSync holds taken
 *                        before its cursor opened                   -> S5
 *   BUG_RESUME_AT_LOSS   the standby's cursor opens when the loss is
 *                        noticed, not at the switch that made it one -> S5
 */

#define NI 3
#define NONE 255
#define A 0
#define B 1
#define C 2

#define NEV 3 /* events: NOPS + NEXIT at most */
#define MAXCATCHUPS 4 /* handover.go maxCatchUps */
#define PREGATE 2 /* handover.go preGateRounds */
#define RES 3 /* the cursor of slot.resume */

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
byte held[2]; /* syncGate.held: read holds by bucket */
bit gcur;     /* syncGate.cur: the bucket new holds go to */

/* journal (journal.go). A closed journal forgets last too (Go keeps it; a
 * cursor opened later starts at or after it, so it changes nothing). */
byte jopen;     /* journal.open: cursors open */
byte jlast;     /* journal.last */
byte jseq[NEV]; /* journal.objs: the dispatch number each event was noted with; 0: not noted */
/* cursors: 0..2 the one each connection's join (or reactivation with a
 * full round) opens, RES slot.resume */
bool cOpen[4];
byte cNext[4];  /* cursor.next */
byte cKnown[4]; /* cursor.known */

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
bool gaveUp; /* a commit switched after maxCatchUps rounds without the check */

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

/* syncGate.drain: waits until every read hold taken before it was called
 * has been released, keeping nobody out (new holds go to the other bucket).
 * Like Go, which holds g.mu from the flip to the first look at the old
 * bucket, it is one step unless it has to wait (an atomic sequence that
 * blocks lets others run, then goes on). */
inline drain() {
	atomic { held[1 - gcur] == 0 -> dold = gcur; gcur = 1 - gcur; held[dold] == 0 -> dold = 0 }
}

/* journal.openCursor: at the dispatch count (the event being dispatched,
 * if any, counts as known) */
inline openCursor(c) {
	jopen++; cOpen[c] = true; cNext[c] = nd; cKnown[c] = nd
}

/* cursor.close; the journal's contents go with the last cursor */
inline closeCursor(c) {
	if
	:: cOpen[c] ->
		cOpen[c] = false; cNext[c] = 0; cKnown[c] = 0; jopen--;
		if
		:: jopen == 0 -> jseq[0] = 0; jseq[1] = 0; jseq[2] = 0; jlast = 0
		:: else -> skip
		fi
	:: else -> skip
	fi
}

/* journal.note for event e, after its relay, under the adaptation's lock:
 * recorded only while a cursor is open. It is in the relay's step: in Go a
 * cursor may open (it reads dispatched without the adaptation's lock)
 * between the two; it then counts the event as known and reports it too,
 * which only adds to what its plugin is told. */
inline note(e) {
	if
	:: jopen > 0 -> jseq[e] = nd; jlast = nd
	:: else -> skip
	fi
}

/* cursor.since: sok is false if the cursor was closed (its standby went
 * away; an overrun would do the same), else dm is the events noted at or
 * after cursor.next, and the cursor moves past the latest event noted */
inline since(c) {
	sok = cOpen[c]; dm = 0;
	if
	:: sok ->
		j = 0;
		do
		:: j < NEV ->
			if
			:: jseq[j] != 0 && jseq[j] >= cNext[c] -> dm = dm | (1 << j)
			:: else -> skip
			fi;
			j++
		:: else -> break
		od;
		j = 0;
		if
		:: jlast >= cNext[c] -> cNext[c] = jlast + 1; cKnown[c] = jlast
		:: else -> skip
		fi
	:: else -> skip
	fi
}

/* registry.catchUp: a delta round with what the journal recorded since
 * cursor c, if anything (sent); the read and the synchronize RPC carrying it
 * are one step. failed: errJournalOverrun (closed cursor) or a dead plugin. */
inline catchUp(c, p) {
	atomic {
		since(c);
		sent = false; failed = false;
		if
		:: !sok -> failed = true
		:: sok && dm != 0 && alive[p] -> known[p] = known[p] | dm; sent = true
		:: sok && dm != 0 && !alive[p] -> failed = true
		:: else -> skip
		fi;
		sok = false; dm = 0
	}
}

/* slot.leaveStandby: the standby, its grace timer and its cursor end */
inline leaveStandby() {
	sStandby = NONE; graceArmed = false; closeCursor(RES)
}

/* registry.startReactivation; g.mu is held */
inline startReactivation(p) {
	reactivating++;
	lossSeq++;
#ifndef BUG_NO_RESERVE
	enqueue(p);
#endif
#ifdef BUG_RESUME_AT_LOSS
	closeCursor(RES); openCursor(RES);
#endif
	run reactivate(p)
}

/* registry.remove (and rebuild): out of its slot and of event delivery; a
 * lost active instance with a standby reserves the gate at once (the
 * standby keeps its cursor for the reactivation). */
inline remove(p) {
	atomic {
		sb = NONE;
		if
		:: p == sCand -> sCand = NONE
		:: p != sCand && p == sStandby -> leaveStandby()
		:: p != sCand && p != sStandby && p == sActive ->
			sActive = NONE; listMask = 0;
			if
			:: sStandby != NONE -> sb = sStandby; graceArmed = false /* stopGrace */
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

/* registry.swap, under g.mu (the caller holds the adaptation's lock); a new
 * standby gets slot.resume, a cursor at the dispatch count */
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
			:: sStandby == p -> leaveStandby(); retiredId[id[p]] = false
			:: sStandby != p && sStandby != NONE ->
				dropped = sStandby; leaveStandby()
			:: else -> skip
			fi;
			sActive = p;
			if
			:: from != NONE ->
				retiredId[id[from]] = true; supBy[id[from]] = p;
				if
				:: graceOn -> sStandby = from; asStandby = true; graceArmed = true;
#ifndef BUG_RESUME_AT_LOSS
					/* no event is in flight: from knows every one so far */
					openCursor(RES)
#else
					skip
#endif
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

/* registry.switchTo: under the adaptation's lock, with the check
 * cursor.knows(dispatched) when cursor c is given (not NONE) */
inline switchTo(p, c) {
	atomic {
		!lk -> lk = true;
		missed = false;
#ifndef BUG_NO_SEQ_CHECK
		if
		:: c != NONE && nd > cKnown[c] -> missed = true
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

/* registry.commit: the caller holds the sync gate. c is the cursor p's
 * knowledge of the runtime's state ends at (NONE: none, p gets its full
 * round now, with a cursor c = p opened first); reac tells a reactivation,
 * whose first round is the delta since c (RES) even if empty. ok tells the
 * outcome. The state read and the synchronize RPC carrying it are one step. */
inline commit(p) {
	ok = false; failed = false;
	if
	:: atomic { !(sCand == p || sStandby == p) -> excused[p] = true }; /* pending: errDisplaced */
		goto cdone
	:: else -> skip
	fi;
	if
	:: reac ->
		atomic {
			since(c);
			if
			:: !sok -> c = NONE /* what it missed was not kept: a full round */
			:: sok && alive[p] -> known[p] = known[p] | dm; synced[p] = true
			:: sok && !alive[p] -> failed = true
			fi;
			sok = false; dm = 0
		};
		if
		:: failed -> goto cdone
		:: else -> skip
		fi
	:: else -> skip
	fi;
	if
	:: c == NONE ->
		c = p;
		atomic { openCursor(c) }; /* no operation is in flight: nothing to drain */
		if
		:: atomic { alive[p] -> known[p] = stateMask; synced[p] = true }
		:: atomic { !alive[p] -> skip }; goto cdone
		fi
	:: else -> skip
	fi;
	round = 0;
	do
	:: true ->
		catchUp(c, p);
		if
		:: failed -> goto cdone
		:: else -> skip
		fi;
		if
		:: round == MAXCATCHUPS - 1 -> gaveUp = true; switchTo(p, NONE); break
		:: else -> switchTo(p, c);
			if
#ifdef BUG_MISSED_FAILS
			:: missed -> ok = false; break
#else
			:: missed -> round++
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

/* A runtime operation under BlockPluginSync: Adaptation.BlockPluginSync
 * (syncGate.RLock, a hold in bucket hb), one event (Adaptation.CreateContainer
 * etc., dispatch.go: relay, then journal.note, under the adaptation's lock),
 * the runtime applying it to its state, Unblock (syncGate.RUnlock). */
proctype runtimeOp(byte e) {
	byte lst, got, j, sb, ep, hb;
	atomic { !writer && qlen == 0 -> readers++; hb = gcur; held[hb]++; ep = lossSeq };
	atomic { !lk -> lk = true; relay(e, true, ep); note(e); lk = false };
	atomic { stateMask = stateMask | (1 << e); readers--; held[hb]--; hb = 0; ep = 0; busy-- }
}

/* A container exit: containerd's NotifyContainerExit -> Adaptation.StopContainer,
 * which does not take BlockPluginSync; the exit is in the runtime's state first. */
proctype exitEvent(byte e) {
	byte lst, got, j, sb;
	stateMask = stateMask | (1 << e);
	atomic { !lk -> lk = true; relay(e, false, 0); note(e); lk = false; busy-- }
}

/* An instance connecting and joining: Adaptation.serveConn (listener.go),
 * plugin.start -> RegisterPlugin -> registry.screen / registry.place /
 * handoverPolicy.mayClaim, then registry.admit: takeoverFrom, phase 1
 * (registry.prepare: journal.openCursor, syncGate.drain, snapshot + full
 * synchronize, up to preGateRounds delta rounds, all outside the gate),
 * syncGate.Lock, registry.commit (catchUp, switchTo, swap, tell),
 * syncGate.Unlock, cursor.close; registry.fail on failure. */
proctype join(byte i) {
	byte sb, displaced, round, from, dropped, j, dm, c, dold;
	bool haveBase, missed, ok, asStandby, reac, failed, sent, sok;
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
	c = NONE;
	/* phase 1 (registry.prepare): the predecessor keeps handling events */
	if
	:: haveBase ->
		c = i;
		atomic { openCursor(c) };
#ifndef BUG_NO_DRAIN
		drain();
#endif
		if
		:: atomic { alive[i] -> known[i] = stateMask; synced[i] = true }
		:: atomic { !alive[i] -> closeCursor(c) }; shutdown(i); goto out
		fi;
		round = 0;
		do
		:: round < PREGATE ->
			catchUp(c, i);
			if
			:: failed -> atomic { closeCursor(c) }; shutdown(i); goto out
			:: !failed && !sent -> break
			:: else -> round++
			fi
		:: else -> break
		od
	:: else -> skip
	fi;
	enqueue(i);
	lockTicket(i);
	reac = false;
	commit(i);
	/* admit's cursor closes when it returns (Go: after Unlock; it is read no more) */
	atomic { gateUnlock(); closeCursor(i) };
	if
	:: !ok -> shutdown(i)
	:: else -> skip
	fi;
out:
	atomic { sb = 0; displaced = 0; round = 0; from = 0; dropped = 0; j = 0; dm = 0; c = 0; dold = 0;
		haveBase = false; missed = false; ok = false; asStandby = false; reac = false;
		failed = false; sent = false; sok = false }
}

/* registry.reactivate, started by registry.startReactivation from
 * registry.remove: under the gate reserved when the loss was noticed, the
 * standby is told what changed since its switch made it one (slot.resume),
 * in a round marked as a reactivation, then the same catch-up and check. */
proctype reactivate(byte i) {
	byte sb, round, from, dropped, j, dm, c;
	bool missed, ok, asStandby, reac, failed, sent, sok;
	became[i] = false;
#ifdef BUG_NO_RESERVE
	enqueue(i);
#endif
	/* i's own cursor (c = i if the resume cursor is gone) is free: its join
	 * closed it with the gate, before anyone could supersede i */
	atomic { lockTicket(i); assert(!cOpen[i]) };
	c = RES; reac = true;
	commit(i);
	/* the reactivation is over when the gate opens; a cursor commit opened
	 * for a full round (c = i) closes with it */
#ifdef BUG_KEEP_GATE
	atomic {
		reactivating--;
		closeCursor(i);
		if
		:: ok -> gateUnlock()
		:: else -> skip
		fi
	};
#else
	atomic { reactivating--; closeCursor(i); gateUnlock() };
#endif
	if
	:: !ok -> shutdown(i)
	:: else -> skip
	fi;
	atomic { sb = 0; round = 0; from = 0; dropped = 0; j = 0; dm = 0; c = 0;
		missed = false; ok = false; asStandby = false; reac = false;
		failed = false; sent = false; sok = false }
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

/* time.AfterFunc(grace, registry.graceOver): slot.leaveStandby, then the
 * notice */
proctype graceTimer() {
	byte sb, p;
end:
	do
	:: atomic { graceArmed -> p = sStandby; leaveStandby(); excused[p] = true };
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
