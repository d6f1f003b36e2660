/*
 * serve.pml: a superseded instance alive in its pod serves again when its
 * successor leaves without a successor (issue 39 finding 8), for spin.
 *
 * One plugin name: A (generation 1) active at the start, running in its pod;
 * B (generation 2), a rollout's new pod, registers and takes over from A at
 * any time; A is superseded. B may leave at any time, before or after its
 * takeover (its pod deleted mid-rollout: a graceful exit closes its
 * connection, as a crash does); A's pod may be deleted at any time too (A's
 * process exits, its connection closes). The superseded instance is kept as
 * the standby while its pod and connection live, so that the loss of the
 * active instance reactivates it (in a hold, told what changed since:
 * hold.pml's reactivate, whose reason is checked again when it runs). NEV
 * events are relayed to the routed instance.
 *
 * Abstracted: the hold, the gate and the runtime's mutex (hold.pml); the
 * kind of slot (standby here; idle for a workload group: workload.pml);
 * the grace timer (grace.pml: here the standby stays while its pod lives).
 *
 * Properties:
 *   R1 at the end, if an instance still runs in its pod (its successor left
 *      without a successor), the routed instance is alive and knows every
 *      dispatched event: someone serves again;
 *   A1 at most one connected instance is routed or believes it is active;
 *   deadlock: an invalid end state.
 *
 * Variant that must fail (hack/model/check.sh):
 *   BUG_SUPERSEDED_GONE (finding 8) the superseded instance is disconnected
 *       at once (SUPERSEDED) although its pod lives               -> R1
 */

#ifndef NEV
#define NEV 1
#endif
#define A 0
#define B 1
#define NI 2
#define NONE 255

byte route = A;
byte standby = NONE;
bool alive[NI], closed[NI], registered[NI], isActive[NI];
byte known[NI];
byte disp;
byte running;

hidden byte R1_serves_again, A1_one_active;

proctype reactivate(byte s) {
	/* in a hold; its reason checked again when it runs */
	atomic {
		if
		:: route == NONE && standby == s && !closed[s] ->
			known[s] = known[s] | disp; /* what changed since it stood by */
			standby = NONE; route = s; isActive[s] = true
		:: else
		fi;
		running--
	}
}

/* the registry drops p (its connection closed) */
inline remove(p) {
	closed[p] = true; isActive[p] = false;
	if
	:: standby == p -> standby = NONE
	:: else
	fi;
	if
	:: route == p ->
		route = NONE;
		if
		:: standby != NONE -> running++; run reactivate(standby)
		:: else
		fi
	:: else
	fi
}

proctype event(byte e) {
	atomic {
		disp = disp | (1 << e);
		if
		:: route != NONE && alive[route] && !closed[route] -> known[route] = known[route] | (1 << e)
		:: else
		fi;
		running--
	}
}

/* B: registers, is synchronized and takes over (or joins a vacant name) */
proctype successor() {
	atomic { if :: alive[B] -> registered[B] = true :: else fi };
	atomic {
		if
		:: registered[B] && alive[B] && !closed[B] ->
			known[B] = known[B] | disp; /* its rounds and the switch's last one */
			if
			:: route == A ->
#ifdef BUG_SUPERSEDED_GONE
				closed[A] = true; isActive[A] = false /* SUPERSEDED: disconnected */
#else
				standby = A; isActive[A] = false /* kept while its pod lives */
#endif
			:: else
			fi;
			route = B; isActive[B] = true
		:: else
		fi;
		running--
	}
}

/* B leaves (its pod deleted: SIGTERM or a crash), or A's pod is deleted */
proctype leaver(byte p) {
	if
	:: atomic { alive[p] -> alive[p] = false; if :: !closed[p] -> remove(p) :: else fi }
	:: skip
	fi;
	running--
}

init {
	byte e, j;
	atomic {
		alive[A] = true; alive[B] = true; registered[A] = true; isActive[A] = true;
		running = 3 + NEV;
		run successor();
		run leaver(B);
		run leaver(A);
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
		:: j < NI -> if :: alive[j] -> e = 1 :: else fi; j++
		:: else -> break
		od;
		assert(e == 0 || (route != NONE && alive[route] && !closed[route] && (known[route] & disp) == disp) || R1_serves_again);
		e = 0; j = 0;
		do
		:: j < NI -> if :: !closed[j] && isActive[j] -> e++ :: else fi; j++
		:: else -> break
		od;
		assert(e <= 1 || A1_one_active)
	}
}
