/*
 * workload.pml: a workload group of a plugin written for upstream, opted in
 * by its pod's annotation (pkg/adaptation/workloadgroup.go; issue 33), for
 * spin. The switch of an unmodified plugin: nothing is asked of the plugin
 * but one full Synchronize, and the older instance stays connected, idle.
 *
 * Instances of one name and index from pods of one workload, each with its
 * pod's pod-template-generation: A (1) and B (2), A2 and B2 (A and B
 * restarted by the kubelet in their pods, once these died: same
 * generation), C (3, with WITH_C: a later rollout; its registration
 * interleaves with A's and B's at any step). Each registers (placeInGroup, under g.mu: the candidate if newer
 * than the candidate or active one, which goes idle; else idle), is
 * configured (admit, configured), and a candidate joins as upstream's join does
 * (joinUnderGate, join): the sync gate, one full Synchronize, the
 * switch in the same critical section (switchHeld, swap: refused if it is
 * no longer the candidate, or no newer than the active one; the active one
 * goes idle), the gate released; idled and made the candidate again, it
 * joins once more. When a member goes (its connection closes: a kill, the
 * close callback at any later step), the newest idle member joins if
 * nobody is joining and it is newer than the active one or nobody is active
 * (groupNext: a reactivation with a second full Synchronize, or a candidate
 * a newer one had displaced). Events are relayed one at a time under the
 * gate's read side to the dispatch list (the active member; rebuilt at
 * every move). Any registered instance may send an unsolicited update at
 * any time (groupMayUpdate: the active one's, or a candidate's while nobody
 * is active).
 *
 * Abstracted: plugins of other names, the ledger and holds (the switch is
 * taken inside the SyncFn call, so no event passes between the Synchronize
 * and the switch: one step here with the gate held), timers (an idle
 * instance has none), the order of members of one generation (two of them
 * are never connected at once here).
 *
 * Properties (assertions):
 *   I1 an event reaches only an active instance: never an idle one;
 *   E1 an instance receiving an event knows every earlier one (by relay or
 *      in its Synchronize): no gap at a switch or a reactivation;
 *   E2 at most one instance receives each event;
 *   U1 an accepted unsolicited update comes from the only instance that
 *      may receive events: never from an idle one beside the active one;
 *   R1 at a switch to p no registered instance is newer than p (a
 *      restarted older instance, idle again, never takes over);
 *   R2 at the end the newest connected instance is the active one.
 *
 * Variants that must fail (hack/model/check.sh):
 *   BUG_IDLE_LISTED   the instance a switch replaces goes idle but stays in
 *                     the dispatch list                          -> I1
 *   BUG_IDLE_UPDATE   an idle instance's updates are accepted     -> U1
 *   BUG_CONNECT_ORDER the newest connection takes over (upstream's PR #281
 *                     "shadowing"): placement and switch ignore the
 *                     generation                                 -> R1
 *   BUG_NO_REJOIN     only a group with nobody active joins an idle member
 *                     (the code before this model): a candidate displaced
 *                     by a newer one that died stays idle         -> R2
 *
 * Admission's rows for the group (issue 39), with WITH_O: the workload ran
 * a build WithHandover first, O (generation 1, opted in, its pod annotated
 * too), active when the model starts; A is not run. B and B2 (generation
 * 2) are its rollback to an upstream-stub build or its rollout with
 * NRI_PLUGIN_HANDOVER=off: members that turn handover off. The rows: a
 * member no newer than O stays idle (beside); a newer one takes over at
 * its switch, which retires O (turnsOff: O is told it was superseded and
 * exits), the same switch as every plugin's that did not opt in. And with
 * CHART: B, B2 and C run the chart upgraded (their pods' labels carry the
 * chart's next version); a pod's workload is its controller's name, so
 * they are the workload of A all the same.
 *
 *   BUG_GROUP_KEEPS_OPTED the group's switch knows nothing of O (issue 39
 *                     finding 1): O stays in the dispatch list    -> E2
 *   BUG_WORKLOAD_BY_LABELS with CHART: a pod's workload is its labels, so
 *                     the upgraded pods are another workload, another
 *                     group whose newest serves beside (issue 39
 *                     finding 7)                                  -> E2
 */

#define NI 6
#define A 0
#define B 1
#define A2 2
#define B2 3
#define C 4
#define O 5
#define NONE 255
#define NG 2 /* groups: 1 only for the upgraded pods under BUG_WORKLOAD_BY_LABELS */

/* The configuration, set with -D by hack/model/check.sh. */
#ifndef NEV
#define NEV 2   /* events relayed */
#endif
#ifndef NKILL
#define NKILL 2 /* kills */
#endif


mtype = { UNREG, CAND, ACTIVE, IDLE, GONE, OPTED };

byte gen[NI];
byte grp[NI];      /* its workload group */
mtype st[NI];
bool alive[NI];    /* its process runs; its connection is open */
bool killed[NI];   /* kill -9 */
bool removed[NI];  /* its connection's close was handled */
bool listed[NI];   /* in the dispatch list */
bool admitted[NI]; /* configured */
bool joining[NI];  /* its join loop runs */
byte seen[NI];     /* the events it knows: relayed to it, or up to its Synchronize */
byte act[NG], cand[NG]; /* each group's active member and candidate */
bool gate;         /* the sync gate, held by a join */
byte nd;           /* events relayed */
byte nkill;
bool withC;
byte busy = 3;     /* processes not done but init: the kubelet, killer, runtime, instances, joins */

hidden byte I1_idle_no_events, E1_no_gap, E2_one_receives, U1_one_writer, R1_newest_takes_over, R2_newest_serves;
hidden byte rp, rn; /* the runtime's loop */
hidden byte i, best, g;

#define placed(q) (st[q] == CAND || st[q] == ACTIVE || st[q] == IDLE)

/* U1, checked at every change of the group: an unsolicited update that
 * groupMayUpdate accepts (the active member's, or the candidate's while
 * nobody is active) comes from the only instance that may receive events. */
#ifdef BUG_IDLE_UPDATE
#define mayUpdate(p) (act[grp[p]] == p || act[grp[p]] == NONE && cand[grp[p]] == p || st[p] == IDLE)
#else
#define mayUpdate(p) (act[grp[p]] == p || act[grp[p]] == NONE && cand[grp[p]] == p)
#endif
/* Another instance of p's group is listed. O is not counted: before its
 * switch a member that turns handover off for O may update as any plugin
 * written for upstream may (upstream's UpdateContainers; so outside a
 * group too). */
#define otherListed(p) (act[grp[p]] != NONE && act[grp[p]] != p && listed[act[grp[p]]])
inline writers() {
	i = 0;
	do
	:: i < NI ->
		assert(!(alive[i] && placed(i) && mayUpdate(i)) || !otherListed(i) || U1_one_writer);
		i++
	:: else -> break
	od;
	i = 0
}

/* rebuild: the dispatch list is the active member. g.mu is held. */
inline rebuild() {
	i = 0;
	do
	:: i < NI ->
#ifdef BUG_IDLE_LISTED
		listed[i] = listed[i] || (act[grp[i]] == i || st[i] == OPTED);
		if
		:: st[i] == GONE -> listed[i] = false
		:: else -> skip
		fi;
#else
		listed[i] = (act[grp[i]] == i || st[i] == OPTED);
#endif
		i++
	:: else -> break
	od;
	i = 0;
	writers()
}

/* groupNext: the newest idle member that runs is the candidate if nobody
 * is joining and it is newer than the active one or nobody is active; it
 * joins now if configured, else once configured. g.mu is held. */
inline groupNext(g) {
	best = NONE;
	i = 0;
	do
	:: i < NI ->
		if
		:: st[i] == IDLE && grp[i] == g && alive[i] && (best == NONE || gen[i] > gen[best]) -> best = i
		:: else -> skip
		fi;
		i++
	:: else -> break
	od;
	i = 0;
#ifdef BUG_NO_REJOIN
	if
	:: best != NONE && cand[g] == NONE && act[g] == NONE && !(listed[O] && gen[best] <= gen[O]) ->
#else
	if
	:: best != NONE && cand[g] == NONE && (act[g] == NONE || gen[best] > gen[act[g]]) && !(listed[O] && gen[best] <= gen[O]) ->
#endif
		st[best] = CAND; cand[g] = best;
		if
		:: !joining[best] && admitted[best] -> joining[best] = true; busy++; run join(best)
		:: else -> skip /* its join loop, or its configuration, takes it from here */
		fi
	:: else -> skip
	fi;
	best = NONE
}

/* remove: the connection of p closed. g.mu is held. */
inline remove(p) {
	removed[p] = true;
	if
	:: placed(p) ->
		if
		:: act[grp[p]] == p -> act[grp[p]] = NONE
		:: else -> skip
		fi;
		if
		:: cand[grp[p]] == p -> cand[grp[p]] = NONE
		:: else -> skip
		fi;
		st[p] = GONE;
		rebuild();
		groupNext(grp[p])
	:: st[p] == OPTED -> st[p] = GONE; rebuild() /* its own slot: nobody of the group is started for it */
	:: else -> skip
	fi
}

/* R1: nobody registered is newer than p, which is being switched to. */
inline newest(p) {
	i = 0;
	do
	:: i < NI ->
		assert(!placed(i) || grp[i] != grp[p] || gen[i] <= gen[p] || R1_newest_takes_over);
		i++
	:: else -> break
	od;
	i = 0
}

/* joinUnderGate and join for member p. */
proctype join(byte p) {
again:
	atomic { !gate -> gate = true };
	if
	:: atomic { alive[p] -> seen[p] = nd } /* one full Synchronize: the state of now */
		/* the switch, in the same critical section */
		atomic {
			if
			:: st[p] == CAND ->
#ifdef BUG_CONNECT_ORDER
				if
				:: true ->
#else
				if
				:: act[grp[p]] != NONE && gen[p] <= gen[act[grp[p]]] || listed[O] && gen[p] <= gen[O] -> /* errIdled; beside */
					st[p] = IDLE; cand[grp[p]] = NONE
				:: else ->
#endif
					newest(p);
					if
					:: act[grp[p]] != NONE -> st[act[grp[p]]] = IDLE
					:: else -> skip
					fi;
					st[p] = ACTIVE; act[grp[p]] = p; cand[grp[p]] = NONE;
#ifndef BUG_GROUP_KEEPS_OPTED
					if
					:: st[O] == OPTED -> /* turnsOff: told it was superseded, it exits */
						st[O] = GONE; alive[O] = false
					:: else -> skip
					fi;
#endif
					rebuild()
				fi
			:: else -> skip /* idled (errIdled) or gone (errDisplaced) */
			fi;
			gate = false
		}
	:: atomic { !alive[p] -> gate = false } /* the Synchronize failed */
	fi;
	atomic {
		if
		:: st[p] == CAND && alive[p] -> goto again /* idled, then the candidate again */
		:: else -> joining[p] = false
		fi;
		busy--
	}
}

/* An instance's process: it registers and is configured. */
proctype instance(byte p) {
	atomic {
		if
		:: !alive[p] -> goto out /* killed before it registered */
		:: else -> skip
		fi;
		/* placeInGroup */
		best = (cand[grp[p]] != NONE -> cand[grp[p]] : act[grp[p]]);
#ifdef BUG_CONNECT_ORDER
		if
		:: false ->
#else
		if
		:: best != NONE && gen[p] <= gen[best] || listed[O] && gen[p] <= gen[O] -> /* newer; beside */
#endif
			st[p] = IDLE
		:: else ->
			if
			:: cand[grp[p]] != NONE -> st[cand[grp[p]]] = IDLE
			:: else -> skip
			fi;
			st[p] = CAND; cand[grp[p]] = p
		fi;
		best = NONE;
		writers()
	};
	atomic { /* configured: admit, configured */
		admitted[p] = true;
		if
		:: st[p] == IDLE -> groupNext(grp[p])
		:: st[p] == CAND && !joining[p] -> joining[p] = true; busy++; run join(p)
		:: else -> skip
		fi
	};
out:
	busy--
}

/* The kubelet: restarts A and B in their pods once they died; or does not
 * (yet). */
active proctype kubelet() {
	bool a2, b2;
	do
#ifndef NO_RESTART
	:: atomic { !a2 && removed[A] -> a2 = true; alive[A2] = true; busy++; run instance(A2) }
	:: atomic { !b2 && removed[B] -> b2 = true; alive[B2] = true; busy++; run instance(B2) }
#endif
	:: true -> break
	od;
	atomic { a2 = false; b2 = false; busy-- }
}

/* kill -9 of any instance that runs; its connection's close is handled in
 * the same step (the relay to it and its Synchronize fail until then:
 * nothing the properties look at). */
#define kill(q) :: atomic { nkill < NKILL && alive[q] -> alive[q] = false; killed[q] = true; nkill++; remove(q) }

active proctype killer() {
	do
	kill(A)
	kill(B)
	kill(A2)
	kill(B2)
	kill(C)
	kill(O)
	:: true -> break
	od;
	busy--
}

/* The runtime's operations: each relays its event under the gate's read
 * side to the dispatch list. */
active proctype runtime() {
	do
	:: nd < NEV ->
		atomic {
			!gate -> nd++;
			rn = 0;
			rp = 0;
			do
			:: rp < NI ->
				if
				:: listed[rp] ->
					rn++;
					assert(st[rp] == ACTIVE || st[rp] == OPTED || I1_idle_no_events);
					if
					:: alive[rp] ->
						assert(seen[rp] == nd - 1 || E1_no_gap);
						seen[rp] = nd
					:: else -> skip /* the relay fails: it is dropped */
					fi
				:: else -> skip
				fi;
				rp++
			:: else -> break
			od;
			assert(rn <= 1 || E2_one_receives);
			rp = 0; rn = 0
		}
	:: else -> break
	od;
	busy--
}

init {
	gen[A] = 1; gen[A2] = 1; gen[B] = 2; gen[B2] = 2; gen[C] = 3; gen[O] = 1;
	i = 0;
	do
	:: i < NI -> st[i] = UNREG; i++
	:: else -> break
	od;
	i = 0;
	act[0] = NONE; act[1] = NONE; cand[0] = NONE; cand[1] = NONE;
#if defined(CHART) && defined(BUG_WORKLOAD_BY_LABELS)
	grp[B] = 1; grp[B2] = 1; grp[C] = 1;
#endif
#ifdef WITH_C
	withC = true;
#endif
	atomic {
#ifdef WITH_O
		st[O] = OPTED; alive[O] = true; listed[O] = true; seen[O] = nd; /* active, synchronized */
		alive[B] = true;
		busy = busy + 1;
		run instance(B);
#else
		alive[A] = true; alive[B] = true;
		busy = busy + 2;
		run instance(A); run instance(B);
#endif
		if
		:: withC -> alive[C] = true; busy++; run instance(C)
		:: else -> skip
		fi
	};
	/* the end: every other process done */
	(busy == 0 && !gate);
	atomic {
		g = 0;
		do
		:: g < NG ->
			best = NONE;
			i = 0;
			do
			:: i < NI ->
				if
				:: alive[i] && placed(i) && grp[i] == g && (best == NONE || gen[i] > gen[best]) -> best = i
				:: else -> skip
				fi;
				i++
			:: else -> break
			od;
			assert(best == NONE || act[g] == best || R2_newest_serves);
			g++
		:: else -> break
		od
	}
}
