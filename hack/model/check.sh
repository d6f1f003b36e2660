#!/usr/bin/env bash
# hack/model/check.sh: model-checks the Promela models in hack/model/ with
# spin (make model).
#
# handover.pml: one search of the full state space per configuration below,
# in spin's acceptance mode, which checks every assertion (S1-S6, D: no
# deadlock) and the ltl formula `live` (liveness). legacy.pml, notice.pml,
# drain.pml and grace.pml (issue 17): one search each, in safety mode, which
# checks their assertions and reports a deadlock as an invalid end state;
# each explores all of its configurations in one search. Then the negative
# checks: each BUG_ variant of a model must fail, for its reason, as the wire
# gate's negative check does (hack/expect-rejection.sh). Prints the
# state-space size and time of every search. It installs nothing: spin comes
# from Debian's `spin` package, and pan is compiled with gcc.
set -euo pipefail

cd "$(dirname "$0")/../.."
# shellcheck source=../expect-rejection.sh
. hack/expect-rejection.sh

for tool in spin gcc; do
	if ! command -v "$tool" >/dev/null 2>&1; then
		echo "model: $tool is not installed; on Debian: apt-get install -y spin gcc" >&2
		exit 1
	fi
done

models=$PWD/hack/model
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# model | name | MODEL_CONFIG. handover.pml's MODEL_CONFIG is "NOPS NEXIT
# NKILL WITH_C C_IS_A" (handover.pml, init):
# A joins, then B (and C) join while NOPS gated runtime operations and NEXIT
# container exits run and NKILL plugin processes may be killed. About 50 s
# of CPU together on a shared 2-core machine; MODEL_LARGE=1 adds larger
# bounds (about 4 minutes, 3 GB). The other models choose their
# configurations in init (the search covers them all) and take none.
configs=(
	"handover|takeover|2 1 1 0 0"
	"handover|two crashes|1 1 2 0 0"
	"handover|exits during the commit|1 2 1 0 0"
	"handover|third instance, gated operation|1 0 1 1 0"
	"handover|third instance, exit|0 1 1 1 0"
	"handover|restarted superseded instance|1 0 1 1 1"
	"legacy|legacy and opted-in registrations of one name|-"
	"notice|role notices outside the adaptation's lock|-"
	"drain|an operation outlasting the drain|-"
	"grace|the grace timer against a reactivation|-"
)
if [[ ${MODEL_LARGE:-} == 1 ]]; then
	configs+=(
		"handover|large: two crashes|2 1 2 0 0"
		"handover|large: third instance|1 1 1 1 0"
		"handover|large: restarted superseded instance|1 1 1 1 1"
	)
fi

# build DIR MODEL OPT DEFINES...: generates the verifier for MODEL.pml (with
# the spin -D defines given) and compiles it with gcc OPT into $work/DIR/pan:
# handover.pml for the acceptance search, the others for safety.
build() {
	local dir=$work/$1 model=$2 opt=$3 mode=-DSAFETY
	shift 3
	[[ $model == handover ]] && mode=
	mkdir -p "$dir"
	cp "$models/$model.pml" "$dir/"
	(cd "$dir" && spin -a "$@" "$model.pml" >/dev/null && gcc "$opt" -DCOLLAPSE $mode -o pan pan.c)
}

# search DIR MODEL CONFIG: runs $work/DIR/pan on one configuration and prints
# its output; fails unless the search completed without errors.
search() {
	local out flags=(-m200000)
	[[ $2 == handover ]] && flags+=(-a)
	out=$(cd "$work/$1" && MODEL_CONFIG=$3 ./pan "${flags[@]}" 2>&1) || true
	echo "$out"
	grep -q "errors: 0" <<<"$out" && ! grep -qE "Search not completed|max search depth too small" <<<"$out"
}

# summary pulls the figures out of pan's output.
summary() {
	awk '/states, stored/ { s = $1 } /^State-vector/ { v = $2 } /elapsed time/ { t = $4 }
		/total actual memory usage/ { m = $1 }
		END { printf "%s states (vector %s bytes), %s MB, %s s", s, v, m, t }'
}

failures=0
# handover.pml's searches are long: optimized. The others take a second.
build handover handover -O2
for m in legacy notice drain grace; do
	build "$m" "$m" -O0
done
for c in "${configs[@]}"; do
	IFS='|' read -r model name config <<<"$c"
	label="$model.pml: $name"
	[[ $config != - ]] && label+=" ($config)"
	if out=$(search "$model" "$model" "$config"); then
		echo "model: $label: ok: $(summary <<<"$out")"
	else
		echo "model: $label: FAILED" >&2
		echo "$out" | grep -vE '^\s*$' | sed 's/^/    /' >&2
		failures=$((failures + 1))
	fi
done

# model | BUG_ variant | MODEL_CONFIG | what the failure must show. They fail
# within a few thousand states, so pan is compiled without optimization.
negatives=(
	"handover|ACTIVE_FIRST|2 1 1 0 0|S6_one_active"
	"handover|NO_SEQ_CHECK|2 1 1 0 0|S5_made_whole"
	"handover|NO_DRAIN|2 1 1 0 0|S5_made_whole"
	"handover|RESUME_AT_LOSS|2 1 1 0 0|S5_made_whole"
	"handover|LATE_ACTIVE|2 1 1 0 0|S4_active_first"
	"handover|NO_RESERVE|2 1 1 0 0|S2w_window"
	"handover|STANDBY_DISPATCH|2 1 1 0 0|S1_no_duplicate"
	"handover|KEEP_GATE|1 1 2 0 0|D_no_deadlock"
	"handover|MISSED_FAILS|2 1 1 0 0|acceptance cycle"
	"legacy|ADMIT_AT_REGISTRATION|-|L1_apart"
	"notice|NOTICE_UNDER_LOCK|-|N1_no_deadlock"
	"notice|NO_REINSTATE|-|N3_one_active"
	"drain|DRAIN_FALLBACK|-|F1_no_freeze"
	"grace|STALE_GRACE|-|G1_no_stale_grace"
)
for n in "${negatives[@]}"; do
	IFS='|' read -r model bug config want <<<"$n"
	build "$bug" "$model" -O0 -DBUG_"$bug"
	expect_rejection model-negative "$model.pml BUG_$bug" "$want" search "$bug" "$model" "$config" || failures=$((failures + 1))
done

if ((failures > 0)); then
	echo "model: $failures check(s) did not behave" >&2
	exit 1
fi
echo "model: all ${#configs[@]} configurations hold, all ${#negatives[@]} broken variants fail"
