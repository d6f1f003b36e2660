/*
 * notice.pml: the role notices of a switch, with no lock held, and a
 * plugin callback during the ACTIVE notice (pkg/adaptation handover.go
 * switchTo, swap, tell, tellRole; callback.go callUpdateFn; dispatch.go
 * StopContainer), for spin.
 *
 * The deadlock it is about: the runtime's UpdateFn takes the runtime's own
 * mutex (containerd's NRI mutex); a container exit (NotifyContainerExit ->
 * StopContainer) holds that mutex while it waits for the adaptation's lock.
 * An ACTIVE notice sent under the adaptation's lock, whose handler calls
 * UpdateContainers, then waits for a handler that waits for the runtime's
 * mutex, held by an exit that waits for the adaptation's lock: the notice
 * times out and the successor is disconnected.
 *
 * One opted-in name: O (0), the active instance, and S (1), its successor,
 * which finished its commit under the sync gate (handover.pml: it knows
 * every event dispatched up to its switch). The gate is held through the
 * notices, so the only events are container exits (NEXIT), which bypass it.
 * The switch, as issue 17 has it:
 *   (a) under the adaptation's lock (registry.swap): S becomes the slot's
 *       active instance, activating: not yet receiving events; O becomes a
 *       standby: out of event delivery; a journal cursor opens;
 *   (b) the lock released, the notices: O told STANDBY, then S told ACTIVE;
 *       S's handler may call UpdateContainers (the runtime's mutex)
 *       meanwhile. An exit dispatched in this window reaches neither: if S
 *       supports delta rounds the journal keeps it; if not, the exit waits
 *       (the adaptation's lock released while it waits, the runtime's mutex
 *       held) until the notice is over, ACTIVE acknowledged or failed;
 *   (c) on the acknowledgement, a delta round with what the journal kept
 *       (if S supports them), then under the adaptation's lock, if nothing
 *       was dispatched since that round, S starts receiving events (else
 *       another round); then O is superseded, unless kept as a grace
 *       standby (graceOn);
 *   (d) if the ACTIVE notice fails (S's process died, or the request timed
 *       out) or a round fails, S is removed and O reinstated: a delta round
 *       with what it missed since (a), then it receives events again.
 * Any process may be killed at any step (two killers). A request times out
 * only when nothing else can move (spin's timeout): the hung plugin is one
 * the model cannot tell from a deadlock, so every timeout is checked (N1).
 *
 * The STANDBY notice is not a step here (O's handler calls nothing back;
 * handover.pml has the order of the notices, S6). handover.pml makes
 * (a)-(c) one step under the adaptation's lock: no event is dispatched
 * between a switch and the successor's first event there, which is what
 * N4 and N5 show of the window here.
 *
 * Not modeled: runtime operations under BlockPluginSync (the gate keeps
 * them out until the commit is over), the journal's bound, grace timers
 * and losses after the takeover (handover.pml, grace.pml), a failed
 * STANDBY notice (O is then removed, as a killed O is).
 *
 * Safety (assertions, named in `make model`; a deadlock is an invalid end
 * state):
 *   N1 no circular wait: a notice ends by its timeout only for a successor
 *      without delta rounds while an exit waits for its acknowledgement
 *      (that exit holds the runtime's mutex: if S's handler calls
 *      UpdateContainers meanwhile, the notice's timeout is what ends the
 *      wait, and (d) reinstates O);
 *   N2 no event is handled by two instances (never two receiving events);
 *   N3 the takeover ends with one instance receiving events: S, or O
 *      reinstated, unless both processes died, or O's died and S's notice
 *      timed out (N1's case: only a successor without delta rounds);
 *   N4 no event reaches S before its ACTIVE acknowledgement;
 *   N5 an instance starts (or starts again) receiving events knowing every
 *      event dispatched so far: an exit dispatched in the window reaches S
 *      after its acknowledgement or is in the delta round (nothing lost).
 *
 * Negative variants (each must fail; see hack/model/check.sh):
 *   BUG_NOTICE_UNDER_LOCK the notices and the acknowledgement under the
 *                         adaptation's lock (the code before issue 17) -> N1
 *   BUG_NO_REINSTATE      a failed ACTIVE notice leaves O superseded    -> N3
 */

#define NONE 255
#define O 0
#define S 1
#define NEXIT 2

bool sDelta; /* S supports delta rounds (api.FeatureDeltaSync) */
bool graceOn;

/* locks */
bool lk;  /* the Adaptation's lock */
bool rmu; /* the runtime's mutex (containerd's NRI mutex) */

/* registry, under g.mu */
byte sActive = O;     /* slot.active (S while activating) */
byte sStandby = NONE; /* slot.standby */
bool activating;      /* S switched, not yet receiving events */
byte listMask = 1;    /* who receives events: O */

bool alive[2];
bool closing[2];

/* the ACTIVE notice */
bool req;     /* sent */
bool replied; /* S's handler returned */
bool gaveUp;  /* the runtime stopped waiting for it */
bool acked;   /* the runtime has S's acknowledgement */
byte waiting; /* exits waiting for the notice to end */
bool resolved;

/* events */
byte dispMask;   /* dispatched */
byte handled[NEXIT];
byte known[2];
bool jopen;      /* the cursor opened at the switch */
byte jmask;      /* events the journal kept since */

hidden byte N1_no_deadlock, N2_no_duplicate, N3_one_active, N4_after_ack, N5_none_lost;

#ifdef BUG_NOTICE_UNDER_LOCK
#define takeLock skip /* the takeover holds it from (a) to the end */
#define dropLock skip
#else
#define takeLock !lk -> lk = true
#define dropLock lk = false
#endif

/* registry.remove after plugin.connectionLost (the killer); g.mu only */
inline remove(p) {
	atomic {
		listMask = listMask & ~(1 << p);
		if
		:: sStandby == p -> sStandby = NONE
		:: sActive == p && !activating -> sActive = NONE
		:: else -> skip /* activating: the takeover sees it fail */
		fi;
		closing[p] = true
	}
}

/* A delta round to p with what the journal kept since the switch (outside
 * the lock), then under the lock: p receives events if nothing was
 * dispatched since the round read the journal, else another round. ok
 * tells whether p now receives events. */
inline bringIn(p) {
	ok = false; failed = false;
	do
	:: atomic {
		if
		:: alive[p] && !closing[p] -> seen = jmask; known[p] = known[p] | jmask
		:: else -> failed = true
		fi
	};
		if
		:: failed -> break
		:: else -> skip
		fi;
		atomic {
			takeLock;
			if
			:: jmask == seen && alive[p] && !closing[p] ->
				assert((known[p] & dispMask) == dispMask || N5_none_lost);
				listMask = 1 << p; sActive = p; activating = false; ok = true
			:: jmask == seen && !(alive[p] && !closing[p]) -> failed = true
			:: else -> skip
			fi;
			if
			:: !ok -> dropLock
			:: else -> skip
			fi
		};
		if
		:: ok || failed -> break
		:: else -> skip
		fi
	od
}

/* registry.switchTo and the notices (tell), for S; the commit holds the
 * sync gate throughout */
proctype takeover() {
	byte from, seen;
	bool ok, failed, timedOut;
	/* (a) registry.swap, under the adaptation's lock */
	atomic {
		!lk -> lk = true;
		known[S] = known[S] | dispMask; /* the commit's rounds and cursor check */
		from = sActive;
		sActive = S; activating = true; listMask = 0;
		if
		:: from != NONE -> sStandby = from
		:: else -> skip
		fi;
		jopen = true
	};
	dropLock;
	/* (b) O told STANDBY (acknowledged), S told ACTIVE, bounded by the
	 * request timeout */
	req = true;
	if
	:: atomic { replied -> acked = true }
	:: atomic { !alive[S] -> gaveUp = true }
	:: atomic { timeout -> assert((!sDelta && waiting > 0) || N1_no_deadlock); gaveUp = true; timedOut = true }
	fi;
	/* (c) */
	if
	:: acked && sDelta -> bringIn(S)
	:: acked && !sDelta ->
		atomic {
			takeLock;
			if
			:: alive[S] && !closing[S] ->
				assert((known[S] & dispMask) == dispMask || N5_none_lost);
				listMask = 1 << S; activating = false; ok = true
			:: else -> dropLock
			fi
		}
	:: else -> skip
	fi;
	if
	:: ok ->
		/* S receives events (the lock is held): O superseded or kept */
		atomic {
			resolved = true;
			if
			:: sStandby != NONE && !graceOn -> closing[sStandby] = true; sStandby = NONE
			:: else -> skip
			fi;
			lk = false
		}
	:: else ->
		/* (d) S removed (p.shutdown), O reinstated */
		atomic {
			takeLock;
			closing[S] = true; activating = false; sActive = NONE;
#ifdef BUG_NO_REINSTATE
			if
			:: sStandby != NONE -> closing[sStandby] = true; sStandby = NONE
			:: else -> skip
			fi;
#endif
			from = sStandby; sStandby = NONE;
			dropLock
		};
		if
		:: from != NONE -> bringIn(from)
		:: else -> skip
		fi;
		atomic {
			resolved = true;
			assert(ok || (!alive[O] && (!alive[S] || timedOut)) || N3_one_active);
#ifdef BUG_NOTICE_UNDER_LOCK
			lk = false
#else
			if
			:: ok -> lk = false /* bringIn keeps it on success */
			:: else -> skip
			fi
#endif
		}
	fi;
	atomic { from = 0; seen = 0; ok = false; failed = false; timedOut = false }
}

/* S's RoleChange handler */
proctype successor() {
end:
	req;
	if
	:: skip
	:: true -> /* UpdateContainers -> the runtime's UpdateFn */
		atomic { !rmu -> rmu = true }; rmu = false
	fi;
	atomic {
		if
		:: alive[S] && !gaveUp -> replied = true
		:: else -> skip
		fi
	}
}

/* A container exit: NotifyContainerExit takes the runtime's mutex, then
 * Adaptation.StopContainer the adaptation's lock: relay to who receives
 * events, journal.note */
proctype exitEvent(byte e) {
	byte j;
	atomic { !rmu -> rmu = true };
	atomic { !lk -> lk = true };
	if
	:: activating && !sDelta ->
		atomic { waiting++; lk = false };
		atomic { !activating && !lk -> lk = true; waiting-- }
	:: else -> skip
	fi;
	atomic {
		dispMask = dispMask | (1 << e);
		j = 0;
		do
		:: j < 2 ->
			if
			:: (listMask >> j) & 1 && alive[j] && !closing[j] ->
				handled[e]++;
				assert(handled[e] == 1 || N2_no_duplicate);
				assert(j != S || acked || N4_after_ack);
				known[j] = known[j] | (1 << e)
			:: else -> skip
			fi;
			j++
		:: else -> break
		od;
		if
		:: jopen -> jmask = jmask | (1 << e)
		:: else -> skip
		fi;
		j = 0;
		lk = false;
		rmu = false
	}
}

/* kill -9 of O, of S, or of neither; the close callback runs remove */
proctype killer() {
	if
	:: skip
	:: atomic { alive[O] -> alive[O] = false }; remove(O)
	:: atomic { alive[S] -> alive[S] = false }; remove(S)
	fi
}

init {
	byte e;
	if
	:: sDelta = true
	:: sDelta = false
	fi;
	if
	:: graceOn = true
	:: graceOn = false
	fi;
	alive[O] = true; alive[S] = true;
	atomic {
		run takeover();
		run successor();
		e = 0;
		do
		:: e < NEXIT -> run exitEvent(e); e++
		:: else -> break
		od;
		e = 0;
		run killer();
		run killer()
	}
}
