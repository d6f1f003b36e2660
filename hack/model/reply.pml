/*
 * reply.pml: UpdateContainers from plugins during another plugin's switch
 * hold (issue 39 finding 6), for spin.
 *
 * A switch hold H of plugin name N (its old instance O active, the successor
 * routed at the swap) is queued at any time: held set, then r.mu once for
 * the swap, then the release. Meanwhile:
 *   X, a plugin of another name that did not opt in, calls UpdateContainers
 *      either outside its handlers or from inside its own event handler (an
 *      event relayed to it under r.mu);
 *   O calls UpdateContainers outside its handlers.
 * A call outside a handler waits for holds queued before it (bounded: it
 * may go on when the bound ends), is checked again against who may update
 * (O only while it is N's active instance), then gets UpdateFn's own reply
 * (UpdateFn may fail). A call from inside the caller's own event handler
 * does not wait: the relay it answers holds r.mu, which the hold needs.
 *
 * Abstracted: the runtime's mutex (hold.pml); what is updated; the hold's
 * round trips (hold.pml); a refused call's error text.
 *
 * Properties:
 *   U6 the reply a plugin that did not opt in gets is UpdateFn's result,
 *      after UpdateFn ran (upstream's UpdateContainers);
 *   U7 no update from an instance is applied after it stopped being active;
 *   deadlock: an invalid end state.
 *
 * Variants that must fail (hack/model/check.sh):
 *   BUG_UPDATE_DEFERRED (finding 6) during a hold the call is deferred to
 *       the release and answered at once as applied                  -> U6
 *   BUG_NO_RECHECK      (finding 6) a deferred or waiting call is not
 *       checked again when applied: O's write lands after the switch  -> U7
 *   BUG_WAIT_IN_HANDLER the call waits for the hold from inside the
 *       caller's own event handler                        -> invalid end state
 */

#define O 0
#define NEWN 1

bool mu;           /* r.mu */
bool held;         /* H's hold */
byte routeN = O;   /* N's active instance */
byte deferred;     /* calls kept for the release (BUG_UPDATE_DEFERRED) */
bool xRan, xResult;
bool oDeferred;
byte running;

hidden byte U6_upstream_reply, U7_only_active_writes;

/* UpdateFn applying X's update: ok or failed */
inline updateFnX() {
	atomic {
		xRan = true;
		if
		:: xResult = true
		:: xResult = false
		fi
	}
}

/* X's reply: r is what X is told its update did */
inline replyX(r) {
	assert((xRan && r == xResult) || U6_upstream_reply)
}

inline applyO() {
	atomic { assert(routeN == O || U7_only_active_writes) }
}

proctype holder() {
	atomic { !held -> held = true };
	atomic { !mu -> mu = true };
	routeN = NEWN; /* the swap */
	atomic {
		mu = false; held = false
	};
#ifdef BUG_UPDATE_DEFERRED
	/* the deferred calls applied after the release */
	do
	:: atomic { deferred > 0 && !xRan -> deferred-- }; updateFnX()
	:: atomic { deferred > 0 && oDeferred -> deferred--; oDeferred = false }; applyO()
	:: deferred == 0 -> break
	od;
#endif
	running--
}

/* X's UpdateContainers outside its handlers */
inline callX() {
#ifdef BUG_UPDATE_DEFERRED
	if
	:: atomic { held -> deferred++ };
		replyX(true) /* answered at once: Failed: [], nil */
	:: atomic { !held -> skip }; updateFnX(); replyX(xResult)
	fi
#else
	/* waits for holds queued before it, bounded */
	if
	:: atomic { !held -> skip }
	:: skip /* the bound ended */
	fi;
	updateFnX();
	replyX(xResult)
#endif
}

proctype pluginX() {
	if
	:: callX()
	:: /* an event relayed to X; its handler calls UpdateContainers */
		atomic { !held && !mu -> mu = true };
#ifdef BUG_WAIT_IN_HANDLER
		atomic { !held -> skip };
#endif
		updateFnX();
		replyX(xResult);
		mu = false
	fi;
	running--
}

proctype pluginO() {
	bool may;
	may = (routeN == O);
#ifdef BUG_UPDATE_DEFERRED
	if
	:: atomic { held && may -> deferred++; oDeferred = true }
	:: atomic { !held -> if :: routeN == O -> applyO() :: else fi }
	fi;
#else
	if
	:: atomic { !held -> skip }
	:: skip /* the bound ended */
	fi;
#ifdef BUG_NO_RECHECK
	atomic { if :: may -> applyO() :: else fi }
#else
	atomic { if :: routeN == O -> applyO() :: else fi } /* else refused */
#endif
#endif
	running--
}

init {
	atomic {
		running = 3;
		run holder();
		run pluginX();
		run pluginO()
	};
	running == 0
}
