/*
 * hold.pml: the redesigned handover core, "ledger + hold" (issue 30,
 * hack/model/README.md, the design's rules 2-6), for spin.
 *
 * One plugin name and three connections to it:
 *   P (0)  the predecessor, active at the start: legacy (did not opt in),
 *          opted-in, or opted-in with delta rounds (pKind);
 *   S (1)  the successor: opted-in, with or without delta rounds;
 *   T (2)  optional third instance registering at any time: it displaces S
 *          while S is the pending candidate, else it takes over from
 *          whoever serves (a second takeover).
 * Standby grace on or off. The runtime runs NOPS gated operations (read
 * side of the gate, BlockPluginSync) and NEXIT container exits, which
 * bypass the gate; every event relay takes the runtime's mutex (rmu) first,
 * then the adaptation relays it under r.mu (mu), one event at a time, to the
 * routed instance. Any plugin process may be killed at any step (NKILL);
 * its close callback runs at any later step, or a round trip notices first.
 * A round trip to a live plugin may fail nondeterministically (NFAIL: a
 * slow plugin's request timeout; the adaptation drops it). A round trip to
 * a healthy plugin that cannot complete (a circular wait) ends only by
 * spin's `timeout` (nothing else can move): the adaptation then drops the
 * plugin as its request timeout would, and the model remembers the plugin
 * was healthy (not excused).
 *
 * Model names -> the design (README.md, "The design's rules"):
 *   mu            r.mu, the adaptation's lock (events relayed under it)
 *   rmu           the runtime's own mutex (containerd's NRI lock): taken by
 *                 every event relay, by SyncFn and by UpdateFn
 *   readers/wq/writer  the gate (BlockPluginSync read side; a join under the
 *                 gate queues as writer: wq keeps new operations out)
 *   held          the hold (rule 3); one holder at a time
 *   nd, lseq[e]   the dispatch sequence and the ledger: per object (one per
 *                 event) the sequence of the latest event; reseeded by SyncFn
 *   cur[i]        a cursor: what instance i was given up to sequence cur[i];
 *                 a delta round gives every object with lseq > cur
 *   route         the routed (active) instance; standby, cand: the slot's
 *                 standby and pending candidate; vacant: nobody opted-in
 *                 serves the name (the next committer joins under the gate)
 *   deferred      UpdateContainers calls deferred from inside a hold's round
 *                 trip, applied after the release
 *   inHoldRT[i]   a hold's round trip to i is in flight (the callback knows
 *                 it is called from inside one)
 *
 * Abstracted: every event changes its own object (the ledger's latest state
 * per object is the event itself); the plugin's event handlers do not call
 * back (only its RoleChange/ACTIVE handler may call UpdateContainers); a
 * full Synchronize never calls back; event relays to a dead plugin fail and
 * drop it, relays to a live one succeed; containerd's per-container state
 * and its interplay with SyncFn (gate.pml); an idle-instant commit (idle.pml);
 * the grace timer (grace.pml: here a standby stays until the end); legacy
 * admission (legacy.pml: here a legacy predecessor is taken over by a join
 * under the gate and evicted at the switch).
 *
 * Properties (assertions; `make model` names each):
 *   E1 made whole: an instance becomes routed knowing every event dispatched
 *      so far (relayed to it, or in its snapshot, full or delta round);
 *   E2 exactly one serves at the end: when every process is done, if some
 *      instance is alive, synchronized and not excused (crashed, displaced,
 *      superseded, dropped by a nondeterministic failure), the routed
 *      instance is alive, connected and knows every dispatched event (so
 *      each event reached exactly one instance: by relay, or by a round);
 *   E3 events go only to the routed instance, only after it was told ACTIVE
 *      (legacy plugins get no notices);
 *   A1 at most one connected live instance believes it is ACTIVE;
 *   G1 no SyncFn while an operation holds the gate's read side;
 *   M1 no plugin round trip of a holder awaited while r.mu is held;
 *   W1 every wait bounded: no healthy plugin is dropped because its round
 *      trip could only end by its timeout (a circular wait);
 *   deadlock: an invalid end state (a process blocked forever).
 *
 * Negative variants (each must fail; hack/model/check.sh):
 *   BUG_ACTIVE_UNDER_RMU  (finding 1, old design) a successor without delta
 *       rounds is routed "activating" before its ACTIVE notice; an exit
 *       waits for the answer holding the runtime's mutex; UpdateContainers
 *       is not deferred                         -> the exit reaches no one
 *   BUG_REACT_REFUSED     (finding 2) a standby's reactivation is refused
 *       while a newer candidate is pending       -> nobody serves
 *   BUG_SHARED_VACANCY    (finding 3) a displaced candidate clears the
 *       slot's vacancy flag its successor waits on -> nobody serves
 *   BUG_HOLD_UNDER_MU     the holder keeps r.mu across its round trips and
 *       the deferred updates                     -> deadlock with rmu
 *   BUG_STALE_REACTIVATION (issue 39 finding 5) a reactivation queued
 *       behind a successor's hold runs whatever happened since: it swaps
 *       the standby in over the completed takeover  -> A1
 */

#define NI 3
#define P 0
#define S 1
#define T 2
#define NONE 255
#define NEV 3

mtype = { rnone, ractive, rstandby, rgone };

/* configuration (MODEL_CONFIG, see init) */
byte pKind;        /* 0 legacy, 1 opted-in, 2 opted-in with delta rounds */
bool graceOn;
bool withT;
byte nops, nexit;  /* events: 0..nops-1 gated, then exits */
byte nkill, nfail; /* budgets */

bool delta[NI];
bool legacy[NI];

/* locks */
bool mu, rmu;
byte hmu; /* the holder holding r.mu (_pid + 1), 0: none */
byte readers; bool wq, writer;
bool held;

/* registry */
byte route = P;
byte standby = NONE;
byte cand = NONE;
bool vacant;
byte deferred;
bool inHoldRT[NI];

/* plugins */
bool alive[NI], closed[NI], synced[NI], excused[NI], stuck[NI];
mtype told[NI];
byte known[NI];
byte cur[NI];
bool req[NI], rep[NI]; /* an ACTIVE notice sent / answered */

/* runtime, ledger */
byte nd;
byte lseq[NEV];
byte disp;
byte state;
byte running; /* worker processes not finished */
#ifdef BUG_ACTIVE_UNDER_RMU
bool activating;
#endif

hidden byte E1_made_whole, E2_one_serves, E3_routed_only, A1_one_active, G1_no_syncfn_in_op, M1_no_rt_under_mu, W1_bounded;
hidden byte i_;

inline ledgerAll(p) {
	i_ = 0;
	do
	:: i_ < NEV -> if :: lseq[i_] != 0 -> known[p] = known[p] | (1 << i_) :: else fi; i_++
	:: else -> break
	od;
	i_ = 0
}

inline ledgerSince(p) {
	i_ = 0;
	do
	:: i_ < NEV -> if :: lseq[i_] > cur[p] -> known[p] = known[p] | (1 << i_) :: else fi; i_++
	:: else -> break
	od;
	i_ = 0
}

/* the registry drops p (close callback, failed round trip); under g.mu */
inline remove(p) {
	closed[p] = true;
	if
	:: cand == p -> cand = NONE
	:: else
	fi;
	if
	:: standby == p -> standby = NONE
	:: else
	fi;
	if
	:: route == p ->
		route = NONE;
		if
		:: standby != NONE -> running++; run reactivate(standby)
		:: else -> vacant = true
		fi
	:: else
	fi
}

/* a plain round trip (a delta or full round, a STANDBY or SUPERSEDED
 * notice): ok tells whether it succeeded; on failure p is dropped */
inline rt(p, ok) {
#ifndef BUG_HOLD_UNDER_MU
	assert(hmu != _pid + 1 || M1_no_rt_under_mu);
#endif
	atomic {
		if
		:: alive[p] && !closed[p] -> ok = true
		:: alive[p] && !closed[p] && nfail > 0 -> nfail--; ok = false; excused[p] = true
		:: !alive[p] || closed[p] -> ok = false
		fi;
		if
		:: !ok && !closed[p] -> remove(p)
		:: else
		fi
	}
}

/* the ACTIVE notice: the plugin's handler (handler(p)) may call
 * UpdateContainers before it answers */
inline activeRT(p, ok) {
#if !defined(BUG_ACTIVE_UNDER_RMU) && !defined(BUG_HOLD_UNDER_MU)
	assert(hmu != _pid + 1 || M1_no_rt_under_mu);
#endif
	inHoldRT[p] = true;
	req[p] = true;
	atomic {
		if
		:: rep[p] -> ok = true
		:: !alive[p] || closed[p] -> ok = false
		:: alive[p] && !closed[p] && nfail > 0 -> nfail--; ok = false; excused[p] = true
		:: timeout -> ok = false; stuck[p] = true
		fi;
		req[p] = false; rep[p] = false; inHoldRT[p] = false;
		if
		:: ok -> told[p] = ractive
		:: !ok && !closed[p] -> remove(p)
		:: else
		fi
	}
}

/* a plugin's RoleChange handler for ACTIVE */
proctype handler(byte p) {
end:
	do
	:: req[p] && !rep[p] && alive[p] ->
		if
		:: skip
		:: true -> /* UpdateContainers from the handler */
#ifdef BUG_ACTIVE_UNDER_RMU
			atomic { !rmu -> rmu = true }; rmu = false
#else
			if
			:: inHoldRT[p] -> /* deferred, applied after the release */
				deferred++
			:: else -> /* UpdateFn: the runtime's mutex */
				atomic { !rmu -> rmu = true }; rmu = false
			fi
#endif
		fi;
		atomic { if :: req[p] && alive[p] -> rep[p] = true :: else fi }
	od
}

/* the updates this hold deferred (taken at its release) applied through
 * UpdateFn, which takes the runtime's mutex */
inline applyDeferred() {
	do
	:: mine > 0 -> atomic { !rmu -> rmu = true }; atomic { rmu = false; mine-- }
	:: else -> break
	od
}

inline takeHold() {
	atomic { !held -> held = true };
	atomic { !mu -> mu = true; hmu = _pid + 1 }
}

/* the end of a hold: release (under r.mu), then the deferred updates */
inline release() {
#ifdef BUG_HOLD_UNDER_MU
	atomic { mine = deferred; deferred = 0 };
	applyDeferred();
	atomic { hmu = 0; mu = false; held = false }
#else
	atomic { mine = deferred; deferred = 0; hmu = 0; mu = false; held = false };
	applyDeferred()
#endif
}

inline dropMu() {
#ifndef BUG_HOLD_UNDER_MU
	hmu = 0; mu = false
#else
	skip
#endif
}

inline takeMu() {
#ifndef BUG_HOLD_UNDER_MU
	atomic { !mu -> mu = true; hmu = _pid + 1 }
#else
	skip
#endif
}

/* the adaptation relays event e under r.mu (the caller holds rmu) */
inline relay(e) {
	byte r;
	bool lost;
#ifdef BUG_ACTIVE_UNDER_RMU
	atomic { !mu -> mu = true };
	if
	:: activating -> /* waits for the ACTIVE answer, holding rmu */
		mu = false;
		atomic { !activating && !mu -> mu = true }
	:: else
	fi;
#else
	atomic { !held && !mu -> mu = true };
#endif
	atomic {
		nd++; lseq[e] = nd; disp = disp | (1 << e); state = state | (1 << e);
		r = route;
		if
		:: r != NONE && alive[r] && !closed[r] ->
			assert(told[r] == ractive || legacy[r] || E3_routed_only);
			known[r] = known[r] | (1 << e)
		:: r != NONE && !alive[r] && !closed[r] -> lost = true
		:: else
		fi
	};
	atomic {
		if
		:: lost -> remove(r)
		:: else
		fi;
		mu = false; r = 0; lost = false
	}
}

proctype gatedOp(byte e) {
	atomic { !writer && !wq -> readers++ };
	atomic { !rmu -> rmu = true };
	relay(e);
	atomic { rmu = false; readers--; running-- }
}

proctype exitEv(byte e) {
	atomic { !rmu -> rmu = true };
	relay(e);
	atomic { rmu = false; running-- }
}

/* the switch, under r.mu (rules 3-5): from is the instance switched away
 * from (NONE after a loss) */
inline swapTo(c, from) {
	assert((known[c] & disp) == disp || E1_made_whole);
	assert(told[c] == ractive || legacy[c]);
	route = c;
	vacant = false;
	if
	:: cand == c -> cand = NONE
	:: else
	fi;
	if
	:: from != NONE && !closed[from] && !legacy[from] && graceOn ->
		standby = from; cur[from] = nd; told[from] = rstandby
	:: from != NONE && !closed[from] ->
		closed[from] = true; excused[from] = true; told[from] = rgone
	:: else
	fi
}

/* rule 5: the standby s reactivated in a hold after the loss of the active
 * instance */
proctype reactivate(byte s) {
	bool ok;
	byte mine;
	takeHold();
	if
#ifdef BUG_STALE_REACTIVATION
	:: closed[s] -> /* its reason is not checked again: a takeover completed meanwhile is undone */
#else
	:: standby != s || closed[s] || route != NONE ->
#endif
		atomic { if :: route == NONE && standby == NONE -> vacant = true :: else fi; hmu = 0; mu = false; held = false; running-- }
		goto out
#ifdef BUG_REACT_REFUSED
	:: cand != NONE -> /* refused: the pending candidate will take over */
		atomic { hmu = 0; mu = false; held = false; running-- }
		goto out
#endif
	:: else
	fi;
	dropMu();
	rt(s, ok); /* delta since its resume cursor, or a full round */
	if
	:: ok -> atomic { if :: delta[s] -> ledgerSince(s) :: else -> ledgerAll(s) fi; cur[s] = nd }
	:: else
	fi;
	if
	:: ok -> activeRT(s, ok)
	:: else
	fi;
	takeMu();
	atomic {
		if
		:: ok && !closed[s] -> standby = NONE; swapTo(s, NONE)
		:: else -> if :: route == NONE && standby == NONE -> vacant = true :: else fi
		fi
	};
	release();
	running--;
out:
	skip
}

/* a candidate c: registration, its rounds, then a takeover from the ledger
 * (rule 4b) or a join under the gate (rule 4a) */
proctype candidate(byte c) {
	bool ok;
	byte mine;
	byte from;
	/* registration: displaces a pending candidate */
	atomic {
		if
		:: cand != NONE && cand != c ->
			closed[cand] = true; excused[cand] = true; told[cand] = rgone;
#ifdef BUG_SHARED_VACANCY
			vacant = false; /* the displaced one clears the slot's flag */
#endif
			cand = NONE
		:: else
		fi;
		cand = c
	};
	/* with delta rounds: snapshot from the ledger and its full round outside
	 * any lock, then (maybe) a catch-up round */
	if
	:: delta[c] ->
		atomic { ledgerAll(c); cur[c] = nd };
		rt(c, ok);
		if
		:: !ok -> goto gone
		:: else
		fi;
		synced[c] = true;
		if
		:: skip
		:: rt(c, ok); if :: !ok -> goto gone :: else fi; atomic { ledgerSince(c); cur[c] = nd }
		fi
	:: else
	fi;
retry:
	/* wait until someone serves (take over from it) or the name is vacant
	 * (join under the gate); a reactivation in progress is neither */
	atomic {
		(cand != c || closed[c]) || (route != NONE && !closed[route]) || vacant
	};
	if
	:: cand != c || closed[c] -> goto gone
	:: route != NONE && !closed[route] && !legacy[route] -> goto takeover
	:: else -> goto underGate
	fi;

takeover: /* rule 4b */
	takeHold();
	if
	:: cand != c || closed[c] -> atomic { hmu = 0; mu = false; held = false }; goto gone
	:: route == NONE || closed[route] || legacy[route] -> atomic { hmu = 0; mu = false; held = false }; goto retry
	:: else
	fi;
	from = route;
#ifdef BUG_ACTIVE_UNDER_RMU
	if
	:: !delta[c] -> /* old design: no hold; routed "activating" first */
		atomic {
			held = false;
			ledgerAll(c); cur[c] = nd; synced[c] = true;
			route = c; activating = true; hmu = 0; mu = false
		};
		rt(from, ok); /* STANDBY */
		activeRT(c, ok);
		atomic {
			!mu -> activating = false;
			if
			:: ok && !closed[c] -> assert((known[c] & disp) == disp || E1_made_whole);
				route = NONE; swapTo(c, from)
			:: else -> /* reinstate */
				route = from;
				if
				:: closed[from] -> route = NONE; if :: standby == NONE -> vacant = true :: else fi
				:: else
				fi
			fi
		};
		goto done
	:: else
	fi;
#endif
	dropMu();
	/* the last delta, or the one full round at the hold */
	rt(c, ok);
	if
	:: !ok -> goto failed
	:: else -> atomic { if :: delta[c] -> ledgerSince(c) :: else -> ledgerAll(c) fi; cur[c] = nd; synced[c] = true }
	fi;
	/* STANDBY (grace) or SUPERSEDED notice to the old one */
	rt(from, ok);
	if
	:: ok && graceOn -> told[from] = rstandby
	:: ok && !graceOn -> told[from] = rgone
	:: else
	fi;
	assert(told[from] != ractive || closed[from] || !alive[from] || A1_one_active);
	activeRT(c, ok);
	if
	:: !ok -> goto failed
	:: else
	fi;
	takeMu();
	atomic {
		if
		:: !closed[c] && !closed[from] -> swapTo(c, from)
		:: !closed[c] && closed[from] -> swapTo(c, NONE)
		:: closed[c] -> ok = false /* lost after its answer: as a failure */
		fi;
		if
		:: !ok -> hmu = 0; mu = false
		:: else
		fi
	};
	if
	:: !ok -> goto failed
	:: else
	fi;
	release();
	goto done;
failed: /* rule 6: the old instance is still routed; told ACTIVE again */
	if
	:: !closed[from] && told[from] != ractive -> activeRT(from, ok)
	:: else
	fi;
	takeMu();
	release();
	goto gone;

underGate: /* rule 4a: queue for the gate, SyncFn + full Synchronize */
	atomic { wq = true };
	atomic { readers == 0 && !writer -> writer = true; wq = false };
	atomic { !rmu -> rmu = true };
	assert(readers == 0 || G1_no_syncfn_in_op);
	atomic {
		/* SyncFn: the runtime's state; the ledger reseeded from it */
		nd++;
		i_ = 0;
		do
		:: i_ < NEV -> if :: (state >> i_) & 1 -> lseq[i_] = nd :: else -> lseq[i_] = 0 fi; i_++
		:: else -> break
		od;
		i_ = 0
	};
	rt(c, ok); /* the full Synchronize, inside SyncFn */
	if
	:: ok -> atomic { known[c] = known[c] | state; cur[c] = nd; synced[c] = true }
	:: else -> atomic { rmu = false; writer = false }; goto gone
	fi;
#ifndef BUG_JOIN_GAP
	/* the hold taken before SyncFn returns (the runtime's mutex still
	 * held): no event is dispatched between the state the plugin got and
	 * the switch */
	takeHold();
	rmu = false;
#else
	/* the design as written: SyncFn returns, then the switch in a hold */
	rmu = false;
	takeHold();
#endif
	if
	:: cand != c || closed[c] -> atomic { hmu = 0; mu = false; held = false; writer = false }; goto gone
	:: else
	fi;
	from = route;
	dropMu();
	activeRT(c, ok);
	takeMu();
	atomic {
		if
		:: ok && !closed[c] -> if :: from != NONE && closed[from] -> from = NONE :: else fi; swapTo(c, from)
		:: else
		fi
	};
	release();
	writer = false;
	goto done;
gone:
	atomic { if :: cand == c -> cand = NONE :: else fi };
done:
	atomic { from = 0; ok = false; running-- }
}

proctype killer() {
	byte v;
again:
	do
	:: atomic { nkill > 0 && alive[P] -> v = P; alive[v] = false; excused[v] = true; nkill-- }; break
	:: atomic { nkill > 0 && alive[S] -> v = S; alive[v] = false; excused[v] = true; nkill-- }; break
	:: atomic { nkill > 0 && withT && alive[T] -> v = T; alive[v] = false; excused[v] = true; nkill-- }; break
	:: true -> goto fin
	od;
	/* the close callback, at a later step (unless a round trip noticed
	 * first) */
	atomic { !mu -> if :: !closed[v] -> remove(v) :: else fi };
	if
	:: nkill > 0 -> goto again
	:: else
	fi;
fin:
	atomic { v = 0; running-- }
}

init {
	byte e, j;
	c_code {
		char *cfg = getenv("MODEL_CONFIG");
		int pk = 2, sd = 1, g = 1, wt = 0, o = 1, x = 1, k = 1, f = 0;
		if (cfg != NULL && sscanf(cfg, "%d %d %d %d %d %d %d %d", &pk, &sd, &g, &wt, &o, &x, &k, &f) != 8) {
			fprintf(stderr, "MODEL_CONFIG is not PKIND SDELTA GRACE WITH_T NOPS NEXIT NKILL NFAIL: %s\n", cfg);
			exit(2);
		}
		now.pKind = pk; now.delta[1] = sd; now.delta[2] = sd; now.graceOn = g; now.withT = wt;
		now.nops = o; now.nexit = x; now.nkill = k; now.nfail = f;
	};
	assert(nops + nexit <= NEV);
	atomic {
		legacy[P] = (pKind == 0);
		delta[P] = (pKind == 2);
		alive[P] = true; alive[S] = true; alive[T] = withT;
		synced[P] = true; told[P] = ractive; cur[P] = 0;
		if
		:: !legacy[P] -> run handler(P)
		:: else
		fi;
		run handler(S);
		running = 2;
		run candidate(S);
		run killer();
		if
		:: withT -> running++; run handler(T); run candidate(T)
		:: else
		fi;
		e = 0;
		do
		:: e < nops -> running++; run gatedOp(e); e++
		:: e >= nops && e < nops + nexit -> running++; run exitEv(e); e++
		:: else -> break
		od
	};
	running == 0;
	atomic {
		/* E2, A1 at the end */
		j = 0;
		e = 0;
		do
		:: j < NI ->
			if
			:: alive[j] && synced[j] && !closed[j] && !excused[j] -> e = 1
			:: alive[j] && synced[j] && !excused[j] && stuck[j] -> e = 1
			:: else
			fi;
			j++
		:: else -> break
		od;
		assert(e == 0 || (route != NONE && alive[route] && !closed[route] && (known[route] & disp) == disp) || E2_one_serves);
		j = 0;
		e = 0;
		do
		:: j < NI -> if :: alive[j] && !closed[j] && told[j] == ractive -> e++ :: else fi; j++
		:: else -> break
		od;
		assert(e <= 1 || A1_one_active);
		j = 0;
		do
		:: j < NI -> assert(!stuck[j] || W1_bounded); j++
		:: else -> break
		od
	}
}
