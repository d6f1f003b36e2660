#!/usr/bin/env bash
# hack/model/check.sh: model-checks hack/model/handover.pml with spin (make model).
#
# One search of the full state space per configuration below, in spin's
# acceptance mode, which checks every assertion (S1-S6, D: no deadlock) and
# the ltl formula `live` (liveness). Then the
# negative checks: each BUG_ variant of the model must fail, for its reason,
# as the wire gate's negative check does (hack/expect-rejection.sh). Prints
# the state-space size and time of every search. It installs nothing: spin
# comes from Debian's `spin` package, and pan is compiled with gcc.
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

model=$PWD/hack/model/handover.pml
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# name | MODEL_CONFIG="NOPS NEXIT NKILL WITH_C C_IS_A" (handover.pml, init):
# A joins, then B (and C) join while NOPS gated runtime operations and NEXIT
# container exits run and NKILL plugin processes may be killed. About 35 s
# of CPU together on a shared 2-core machine; MODEL_LARGE=1 adds larger
# bounds (about 4 minutes, 3 GB).
configs=(
	"takeover|2 1 1 0 0"
	"two crashes|1 1 2 0 0"
	"exits during the commit|1 2 1 0 0"
	"third instance, gated operation|1 0 1 1 0"
	"third instance, exit|0 1 1 1 0"
	"restarted superseded instance|1 0 1 1 1"
)
if [[ ${MODEL_LARGE:-} == 1 ]]; then
	configs+=(
		"large: two crashes|2 1 2 0 0"
		"large: third instance|1 1 1 1 0"
		"large: restarted superseded instance|1 1 1 1 1"
	)
fi

# build NAME OPT DEFINES...: generates the verifier for the model (with the
# spin -D defines given) and compiles it with gcc OPT into $work/NAME/pan.
build() {
	local dir=$work/$1 opt=$2
	shift 2
	mkdir -p "$dir"
	cp "$model" "$dir/handover.pml"
	(cd "$dir" && spin -a "$@" handover.pml >/dev/null && gcc "$opt" -DCOLLAPSE -o pan pan.c)
}

# search NAME CONFIG: runs $work/NAME/pan on one configuration and prints its
# output; fails unless the search completed without errors.
search() {
	local out
	out=$(cd "$work/$1" && MODEL_CONFIG=$2 ./pan -a -m200000 2>&1) || true
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
build model -O2
for c in "${configs[@]}"; do
	IFS='|' read -r name config <<<"$c"
	if out=$(search model "$config"); then
		echo "model: $name ($config): ok: $(summary <<<"$out")"
	else
		echo "model: $name ($config): FAILED" >&2
		echo "$out" | grep -vE '^\s*$' | sed 's/^/    /' >&2
		failures=$((failures + 1))
	fi
done

# BUG_ variant | MODEL_CONFIG | what the failure must show. They fail within
# a few thousand states, so pan is compiled without optimization.
negatives=(
	"ACTIVE_FIRST|2 1 1 0 0|S6_one_active"
	"NO_SEQ_CHECK|2 1 1 0 0|S5_made_whole"
	"NO_DRAIN|2 1 1 0 0|S5_made_whole"
	"RESUME_AT_LOSS|2 1 1 0 0|S5_made_whole"
	"LATE_ACTIVE|2 1 1 0 0|S4_active_first"
	"NO_RESERVE|2 1 1 0 0|S2w_window"
	"STANDBY_DISPATCH|2 1 1 0 0|S1_no_duplicate"
	"KEEP_GATE|1 1 2 0 0|D_no_deadlock"
	"MISSED_FAILS|2 1 1 0 0|acceptance cycle"
)
for n in "${negatives[@]}"; do
	IFS='|' read -r bug config want <<<"$n"
	build "$bug" -O0 -DBUG_"$bug"
	expect_rejection model-negative "BUG_$bug" "$want" search "$bug" "$config" || failures=$((failures + 1))
done

if ((failures > 0)); then
	echo "model: $failures check(s) did not behave" >&2
	exit 1
fi
echo "model: all ${#configs[@]} configurations hold, all ${#negatives[@]} broken variants fail"
