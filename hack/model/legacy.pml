/*
 * legacy.pml: plugins written for upstream (legacy: not opted in to
 * handover) and opted-in instances registering with one name and index,
 * in any order (pkg/adaptation registry.go place, refuseBesideHolder,
 * legacyPredecessors, supersede.go maySupersede, handover.go swap and
 * tell), for spin.
 *
 * The rule: a legacy plugin never runs beside an opted-in instance of its
 * name and index. Admission is one decision, made at each switch (the step
 * under the adaptation's lock and g.mu where a plugin becomes active), and
 * made early at registration only to avoid a synchronization for nothing:
 *   - an opted-in instance's switch evicts every ACTIVE legacy plugin of
 *     its name and index (out of event delivery at the switch, told
 *     superseded after it), or is refused if it may not supersede one;
 *   - a legacy plugin's own switch (the end of its commit) is refused
 *     while an opted-in instance holds its name and index (the slot's
 *     active instance, or the one activating: switched, its ACTIVE notice
 *     not yet acknowledged). If that holder may supersede it, it would be
 *     evicted anyway; if it may not, the two may not run side by side
 *     either (the early checks make that case one where the legacy plugin
 *     registered after the holder and was not refused then).
 * The early checks: a legacy plugin registering while an opted-in instance
 * is the slot's active one or its candidate is refused
 * (refuseBesideHolder); an opted-in instance registering while a placed
 * legacy plugin of its name and index exists that it may not supersede is
 * refused (maySupersede). Whether they are made is chosen at init: the
 * property holds without them.
 *
 * Plugins: L1, L2 legacy (the second one if nLeg == 2); O1, O2 opted in
 * (O2, if nOpt == 2, takes over from O1 or displaces it as the candidate).
 * Every registration, synchronization and commit interleaves with the
 * others. Commits hold the sync gate (syncGate.Lock in registry.admit),
 * an opted-in one through its notices (issue 17's notice.pml); the ACTIVE
 * notice may fail, and the standby (the instance the switch superseded) is
 * then reinstated. The policy (SupersedePolicy) lets the opted-in
 * instances supersede the legacy plugins or not (mayS, chosen at init).
 *
 * Not modeled: events (a plugin receives events while it is in the
 * dispatch list: listed), phase 1 and the journal (handover.pml), crashes
 * (they only take plugins out), grace standbys (out of delivery like a
 * superseded instance), restarts (retired instance ids, handover.pml),
 * other names and indices.
 *
 * Property (assertion at every change of the dispatch list):
 *   L1 never a legacy plugin and an opted-in instance of the same name and
 *      index both in the dispatch list (receiving events).
 *
 * Negative variant (must fail; see hack/model/check.sh):
 *   BUG_ADMIT_AT_REGISTRATION a legacy plugin's admission is checked only
 *                      at its registration (the early check always made,
 *                      none at its switch; the code before issue 17): one
 *                      that registered before the opted-in instance and
 *                      commits after its switch runs beside it       -> L1
 */

#define NONE 255
#define NP 4
#define L1 0
#define L2 1
#define O1 2
#define O2 3

byte nLeg, nOpt; /* legacy plugins, opted-in instances */
bool mayS;       /* the opted-in instances may supersede the legacy plugins */
bool early;      /* the early checks at registration are made */

bool gate; /* the sync gate, held by a commit */

/* registry (registry.go), under g.mu */
bool placed[NP];    /* registered: in a slot */
bool closing[NP];   /* refused, evicted, displaced, superseded or failed */
bool listed[NP];    /* in the dispatch list (registry.plugins) */
byte sActive = NONE;  /* the opted-in slot's active instance (or activating) */
bool activating;      /* sActive switched, its ACTIVE notice not acknowledged */
byte sCand = NONE;    /* slot.candidate */
byte sStandby = NONE; /* the instance sActive's switch superseded, until the ack */

hidden byte L1_apart;

/* L1 */
inline apart() {
	assert(!((listed[L1] || listed[L2]) && (listed[O1] || listed[O2])) || L1_apart)
}

/* a placed legacy plugin that has not closed */
#define legacyPlaced ((placed[L1] && !closing[L1]) || (placed[L2] && !closing[L2]))

/* A legacy plugin: RegisterPlugin -> registry.place (refuseBesideHolder),
 * configure, registry.admit: syncGate.Lock, registry.commit (its full
 * synchronize from inside SyncFn), switchTo -> swap, syncGate.Unlock. */
proctype legacy(byte q) {
	atomic {
		if
		:: early && (sActive != NONE || sCand != NONE) -> closing[q] = true /* REGISTRATION_REJECTED */
		:: else -> placed[q] = true
		fi
	};
	if
	:: closing[q] -> goto out
	:: else -> skip
	fi;
	atomic { !gate -> gate = true };
	/* synchronized; the switch: */
	atomic {
#ifndef BUG_ADMIT_AT_REGISTRATION
		if
		:: sActive != NONE -> closing[q] = true /* refused beside the holder */
		:: else -> listed[q] = true
		fi;
#else
		listed[q] = true;
#endif
		apart();
		gate = false
	};
out:
	skip
}

/* An opted-in instance: RegisterPlugin -> registry.place (maySupersede;
 * displaces a pending candidate), phase 1 (no lock), syncGate.Lock,
 * registry.commit -> switchTo -> swap (the decision), the notices with no
 * lock held (evicted legacy plugins superseded, the old instance told
 * STANDBY, p told ACTIVE), the ACTIVE acknowledgement (p starts receiving
 * events, the old instance is superseded) or its failure (p removed, the
 * old instance reinstated), syncGate.Unlock. */
proctype opted(byte p) {
	byte displaced, from;
	bool ok;
	atomic {
		if
		:: early && !mayS && legacyPlaced -> closing[p] = true /* may not supersede */
		:: else -> displaced = sCand; sCand = p; placed[p] = true
		fi
	};
	if
	:: closing[p] -> goto out
	:: displaced != NONE -> closing[displaced] = true /* screen: SUPERSEDED */
	:: else -> skip
	fi;
	/* phase 1 */
	atomic { !gate -> gate = true };
	atomic {
		if
		:: closing[p] || sCand != p -> ok = false /* errDisplaced */
		:: !mayS && (listed[L1] || listed[L2]) -> ok = false /* may not supersede an active one */
		:: else ->
			/* legacyPredecessors: out of delivery now, told superseded
			 * with the notices */
			if
			:: listed[L1] -> listed[L1] = false; closing[L1] = true
			:: else -> skip
			fi;
			if
			:: listed[L2] -> listed[L2] = false; closing[L2] = true
			:: else -> skip
			fi;
			sCand = NONE; from = sActive;
			if
			:: from != NONE -> listed[from] = false; sStandby = from
			:: else -> skip
			fi;
			sActive = p; activating = true; ok = true
		fi;
		apart()
	};
	if
	:: ok ->
		if
		:: atomic { /* ACTIVE acknowledged */
			listed[p] = true; activating = false;
			if
			:: sStandby != NONE -> closing[sStandby] = true; sStandby = NONE
			:: else -> skip
			fi;
			apart()
		}
		:: atomic { /* ACTIVE failed: p removed, the standby reinstated */
			closing[p] = true; activating = false; sActive = sStandby;
			if
			:: sStandby != NONE -> listed[sStandby] = true; sStandby = NONE
			:: else -> skip
			fi;
			apart()
		}
		fi
	:: else -> closing[p] = true
	fi;
	gate = false;
out:
	atomic { displaced = 0; from = 0; ok = false }
}

init {
	if
	:: nLeg = 1
	:: nLeg = 2
	fi;
	if
	:: nOpt = 1
	:: nOpt = 2
	fi;
	if
	:: mayS = true
	:: mayS = false
	fi;
#ifdef BUG_ADMIT_AT_REGISTRATION
	early = true;
#else
	if
	:: early = true
	:: early = false
	fi;
#endif
	atomic {
		run legacy(L1);
		if
		:: nLeg == 2 -> run legacy(L2)
		:: else -> skip
		fi;
		run opted(O1);
		if
		:: nOpt == 2 -> run opted(O2)
		:: else -> skip
		fi
	}
}
