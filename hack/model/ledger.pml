/*
 * ledger.pml: what a successor is told (issue 39), for spin.
 *
 * The ledger is the adaptation's record of the runtime's containers. It is
 * exact, or it is not used: every change the adaptation hands the runtime
 * (a plugin's UpdateContainers that UpdateFn applied) is noted in it as the
 * runtime applies it; a relayed removal is remembered, so that a listing
 * taken before the runtime's store caught up does not bring it back, and
 * forgotten once a listing no longer shows it (a relayed creation that no
 * listing has shown yet is kept, for the same reason); every SyncFn under the gate
 * compares the ledger with the listing, and a difference means the runtime
 * does not relay what the ledger needs (moby relays creation only): the
 * ledger is then no longer kept, and a takeover synchronizes as upstream's
 * join does, from SyncFn under the gate.
 *
 * Runtimes (RT): 0 containerd (creation and removal gated, relayed inside
 * the operation), 1 CRI-O (no gate; a removal is relayed before the store
 * changes, and a creation before it is stored), 2 moby (gated; only
 * creation relayed). Containers: c0 exists
 * from the start (the ledger seeded with it), c1 is created; c0 is removed,
 * and one of them is updated to value 2 through UpdateFn, which may fail.
 * A join of another plugin under the gate (J) compares and reseeds at any
 * time. The successor S takes over: if the gate can be taken at once it
 * calls SyncFn (compare, reseed) and lets the gate go; if the gate is busy
 * the ledger is used as it is when trusted: still kept, and the runtime was
 * seen relaying a removal (moby never does); otherwise S waits for the gate.
 * S's switch is in a hold, which keeps new UpdateFn calls until it is
 * released (a plugin's UpdateContainers waits, then gets UpdateFn's
 * answer) but cannot wait for one in flight: UpdateFn takes the runtime's
 * mutex, which an event waiting for the hold may hold (hold.pml,
 * BUG_HOLD_UNDER_MU). An update the runtime applied before S was told but
 * the ledger notes after is the one window left, and is excused. With a ledger still kept, S is told the
 * ledger's state and is routed in the same step (the snapshot, the cursor
 * and the hold); without, S is told SyncFn's listing under the gate, as
 * upstream's join.
 *
 * Values: st[c] and led[c] are 0 for no container, else its value (1, or 2
 * once updated). Abstracted: container states other than present/absent
 * and exits bypassing the gate (gate.pml); several plugins; the ledger's
 * versions and cursors (hold.pml).
 *
 * Properties:
 *   X1 on containerd, every comparison finds no difference;
 *   S1 at the end, S knows every container as the store has it, except a
 *      container changed after S was told by something relayed to no plugin
 *      (another plugin's update, moby's removal): upstream's own limit; and
 *      a container whose UpdateFn call was in flight when S was told.
 *
 * Variants that must fail (hack/model/check.sh):
 *   BUG_UPDATE_NOT_NOTED (finding 3) UpdateFn's change is not noted    -> S1
 *   BUG_REMOVAL_READDED  (finding 4) a listing re-adds a removal relayed
 *       before CRI-O's store changed (RT=1)                              -> S1
 *   BUG_TRUST_ALWAYS     the ledger used by a takeover while the gate is busy
 *       before the runtime was seen relaying a removal (moby, RT=2)      -> S1
 *   BUG_PEND_COUNTED     an update in flight counted as a difference: the
 *       ledger is dropped on containerd                                  -> X1
 */

#ifndef RT
#define RT 0
#endif
#define NC 2

byte st[NC], led[NC], know[NC];
bool gone[NC];    /* a relayed removal, remembered */
bool listed[NC];  /* a SyncFn listing showed it */
bool pend[NC];    /* an UpdateFn call for it in flight */
bool excused[NC]; /* changed after S was told, relayed to no plugin */
bool kept = true; /* the ledger is kept: no comparison differed */
bool seenRemoval; /* the runtime relayed a removal */
bool holding;     /* S's switch holds dispatch and new UpdateFn calls */
bool told;        /* S was told its round and is routed */
bool rmu;         /* the runtime's mutex: relays, SyncFn, UpdateFn */
byte readers; bool writer;
byte running;

hidden byte X1_exact_on_containerd, S1_told_the_node;

/* relay an event for c (v: 0 a removal) under rmu, held by the caller */
inline relay(c, v) {
	if
	:: kept -> led[c] = v; gone[c] = (v == 0)
	:: else
	fi;
	seenRemoval = seenRemoval || v == 0;
	if
	:: told -> know[c] = v
	:: else
	fi
}

/* SyncFn under the gate (writer, rmu held): compare, then reseed */
inline syncUnderGate() {
	d = 0;
	i = 0;
	do
	:: i < NC ->
		if
#ifndef BUG_PEND_COUNTED
		:: pend[i] -> skip                 /* UpdateFn in flight */
#endif
		:: gone[i] && st[i] != 0 -> skip   /* removal relayed, store behind */
		:: led[i] != 0 && st[i] == 0 && !listed[i] -> skip /* creation relayed, store behind */
		:: else -> if :: led[i] != st[i] -> d++ :: else fi
		fi;
		i++
	:: else -> break
	od;
	assert(RT != 0 || d == 0 || X1_exact_on_containerd);
#ifdef BUG_TRUST_ALWAYS
	d = 0;
#endif
	if
	:: d > 0 -> kept = false
	:: else
	fi;
	i = 0;
	do
	:: i < NC ->
		if
		:: !kept -> led[i] = 0; gone[i] = false
#ifndef BUG_REMOVAL_READDED
		:: kept && led[i] != 0 && st[i] == 0 && !listed[i] -> skip
		:: kept && gone[i] && st[i] != 0 -> led[i] = 0
		:: kept && gone[i] && st[i] == 0 -> led[i] = 0; gone[i] = false
		:: kept && !gone[i] && (led[i] == 0 || st[i] != 0 || listed[i]) -> led[i] = st[i]
#else
		:: kept -> led[i] = st[i]; gone[i] = false
#endif
		fi;
		listed[i] = listed[i] || st[i] != 0;
		i++
	:: else -> break
	od
}

inline takeGate() { atomic { readers == 0 && !writer -> writer = true } }
inline gated() { atomic { !writer -> readers++ } }

proctype create1() {
	if :: RT != 1 -> gated() :: else fi;
	atomic { !rmu -> rmu = true; relay(1, 1); rmu = false };
	st[1] = 1;
	atomic { if :: RT != 1 -> readers-- :: else fi; running-- }
}

proctype remove0() {
	if
	:: RT == 0 -> gated(); atomic { !rmu -> rmu = true; st[0] = 0; relay(0, 0); rmu = false; readers-- }
	:: RT == 1 -> atomic { !rmu -> rmu = true; relay(0, 0); rmu = false }; st[0] = 0
	:: RT == 2 -> gated(); atomic { st[0] = 0; excused[0] = told; readers-- }
	fi;
	running--
}

/* a plugin's UpdateContainers, applied by the runtime's UpdateFn */
proctype update(byte c) {
	bool ok;
	atomic { !holding -> pend[c] = true };
	atomic {
		!rmu -> rmu = true;
		if
		:: st[c] != 0 -> st[c] = 2; ok = true; excused[c] = told
		:: skip /* UpdateFn reports it failed */
		fi;
		rmu = false
	};
#ifndef BUG_UPDATE_NOT_NOTED
	atomic { if :: ok && kept && led[c] != 0 -> led[c] = 2 :: else fi };
#endif
	pend[c] = false;
	running--
}

/* another plugin joining under the gate */
proctype join() {
	byte i, d;
	takeGate();
	atomic { !rmu -> rmu = true; syncUnderGate(); rmu = false };
	atomic { writer = false; running-- }
}

proctype successor() {
	byte i, d;
	bool mine; /* S holds the gate */
again:
	if
	:: atomic { readers == 0 && !writer -> writer = true; mine = true }
#ifndef BUG_TRUST_ALWAYS
	:: atomic { (readers > 0 || writer) && kept && seenRemoval -> skip }
	:: atomic { (readers > 0 || writer) && !(kept && seenRemoval) -> skip }; takeGate(); mine = true
#else
	:: atomic { (readers > 0 || writer) && kept -> skip }
	:: atomic { (readers > 0 || writer) && !kept -> skip }; takeGate(); mine = true
#endif
	fi;
	if
	:: mine -> atomic { !rmu -> rmu = true; syncUnderGate(); rmu = false }
	:: else
	fi;
	holding = true;
	if
	:: atomic {
		!rmu && (kept || mine) ->
		i = 0;
		do
		:: i < NC ->
			if
			:: kept -> know[i] = led[i]
			:: else -> know[i] = st[i] /* SyncFn's listing, as upstream's join */
			fi;
			excused[i] = excused[i] || pend[i];
			i++
		:: else -> break
		od;
		told = true;
		holding = false;
		if :: mine -> writer = false :: else fi
	}
	:: atomic { !kept && !mine -> holding = false }; goto again /* the ledger went meanwhile */
	fi;
	running--
}

init {
	byte c;
	atomic {
		st[0] = 1; led[0] = 1; listed[0] = true;
		running = 5;
		run create1();
		run remove0();
		if :: c = 0 :: c = 1 fi;
		run update(c);
		run join();
		run successor()
	};
	running == 0;
	c = 0;
	do
	:: c < NC -> assert(excused[c] || know[c] == st[c] || S1_told_the_node); c++
	:: else -> break
	od
}
