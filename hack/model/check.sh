#!/usr/bin/env bash
# hack/model/check.sh: model-checks the Promela models in hack/model/ with
# spin (make model). The models are of the "ledger + hold" core
# (core-design.md, issue 30); README.md says what each covers.
#
# hold.pml: one safety search per configuration below (assertions E1-E3,
# A1, G1, M1, W1; a deadlock is an invalid end state); the configurations
# with a third instance are searched with -DBITSTATE (an 8 MB bit state
# hash: partial, bounded coverage). gate.pml, legacy.pml, grace.pml: one
# search each, in safety mode, covering every configuration they choose in
# init. idle.pml: an acceptance search with weak fairness (ltl p0).
# workload.pml, ledger.pml and issue 39's ticket.pml (finding 2), reply.pml
# (6) and serve.pml (8): one exhaustive search per configuration. Then the
# negative checks: each broken variant of a model must fail, for its reason
# (hack/expect-rejection.sh). Prints states explored, time and verdict of
# every search. It installs nothing: spin comes from Debian's `spin`
# package, and pan is compiled with gcc.
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

# model | name | MODEL_CONFIG | mode. hold.pml's MODEL_CONFIG is "PKIND
# SDELTA GRACE WITH_T NOPS NEXIT NKILL NFAIL" (hold.pml, init): PKIND 0
# legacy predecessor, 1 opted-in, 2 opted-in with delta rounds; SDELTA the
# successor (and the third instance) has delta rounds; GRACE standby on;
# WITH_T a third instance registers at any time; NOPS gated operations and
# NEXIT container exits (at most 3 events); NKILL process kills; NFAIL
# round trips that fail (a request timeout). mode: full (exhaustive, with
# -DCOLLAPSE), bit (-DBITSTATE), ltl (acceptance, weak fairness).
# workload.pml's, ledger.pml's, ticket.pml's, reply.pml's and serve.pml's
# configurations are spin defines instead ("-": none; ticket.pml: NEV
# events, NKILL losses; serve.pml: NEV events; workload.pml: NEV events,
# NKILL kills, WITH_C a later rollout, NO_RESTART no restarts, WITH_O an opted-in build before the members, CHART the later
# pods' chart upgraded; ledger.pml: RT the runtime's order of events), one
# verifier each.
configs=(
	"hold|opted-in+delta -> delta successor, standby|2 1 1 0 1 1 1 0|full"
	"hold|opted-in+delta -> successor without delta, standby, a failure|2 0 1 0 1 1 1 1|full"
	"hold|opted-in -> delta successor, standby, two exits, two kills|1 1 1 0 0 2 2 0|full"
	"hold|opted-in -> successor without delta, no standby, a failure|1 0 0 0 1 1 1 1|full"
	"hold|legacy -> delta successor (join under the gate)|0 1 1 0 1 1 1 0|full"
	"hold|legacy -> successor without delta, a failure|0 0 1 0 1 1 1 1|full"
	"hold|third instance, delta, standby|2 1 1 1 0 1 1 0|bit"
	"hold|third instance, without delta, standby|1 0 1 1 1 0 1 0|bit"
	"hold|third instance, without delta, no standby|2 0 0 1 0 1 1 0|bit"
	"gate|SyncFn under the gate, containerd's per-container state|-|full"
	"idle|the commit does not wait for an idle instant|-|ltl"
	"legacy|legacy and opted-in registrations of one name|-|full"
	"grace|the grace timer against a reactivation|-|full"
	"workload|restarts of both, one kill, one event|-DNEV=1 -DNKILL=1|full"
	"workload|two kills, two events|-DNEV=2 -DNKILL=2 -DNO_RESTART|full"
	"workload|a later rollout, one kill|-DNEV=0 -DNKILL=1 -DWITH_C -DNO_RESTART|full"
	"workload|an opted-in build first, then members that turn handover off (rollback, kill switch), one kill, two events|-DNEV=2 -DNKILL=1 -DWITH_O|full"
	"ledger|what a successor is told, containerd's order|-DRT=0|full"
	"ledger|what a successor is told, CRI-O's order (no gate, removal relayed first)|-DRT=1|full"
	"ledger|what a successor is told, moby's order (creation only)|-DRT=2|full"
	"ticket|a loss while candidates join from the ledger, one displacing the other, one event|-DNEV=1 -DNKILL=1|full"
	"ticket|two events, the joining candidate lost too|-DNEV=2 -DNKILL=2|full"
	"reply|UpdateContainers during another plugin's switch hold|-|full"
	"serve|a superseded instance in its pod, its successor leaving, two events|-DNEV=2|full"
)

# build DIR MODEL MODE OPT DEFINES...: the verifier for MODEL.pml (spin -D
# defines given), compiled with gcc OPT into $work/DIR/pan.
build() {
	local dir=$work/$1 model=$2 mode=$3 opt=$4 cflags
	shift 4
	case $mode in
	full) cflags=(-DSAFETY -DCOLLAPSE) ;;
	bit) cflags=(-DSAFETY -DBITSTATE) ;;
	ltl) cflags=() ;;
	esac
	mkdir -p "$dir"
	cp "$models/$model.pml" "$dir/"
	(cd "$dir" && spin -a "$@" "$model.pml" >/dev/null && gcc "$opt" -w "${cflags[@]}" -o pan pan.c)
}

# search DIR MODE CONFIG: runs $work/DIR/pan and prints its output; fails
# unless the search completed without errors.
search() {
	local out flags=(-m200000)
	case $2 in
	bit) flags+=(-w26) ;;
	ltl) flags+=(-a -f) ;;
	esac
	out=$(cd "$work/$1" && MODEL_CONFIG=$3 ./pan "${flags[@]}" 2>&1) || true
	echo "$out"
	grep -q "errors: 0" <<<"$out" && ! grep -qE "Search not completed|max search depth too small" <<<"$out"
}

summary() {
	awk '/states, stored/ { s = $1 } /^State-vector/ { v = $2 } /elapsed time/ { t = $4 }
		END { printf "%s states (vector %s bytes), %s s", s, v, t }'
}

# definesModel MODEL: MODEL's configurations are spin defines ("-": none),
# not hold.pml's MODEL_CONFIG.
definesModel() {
	[[ $1 == workload || $1 == ledger || $1 == ticket || $1 == reply || $1 == serve ]]
}

failures=0
declare -A built
for c in "${configs[@]}"; do
	IFS='|' read -r model name config mode <<<"$c"
	dir=$model-$mode defines=() env=$config
	if definesModel "$model"; then
		dir=$model-${config// /}
		[[ $config == - ]] || read -ra defines <<<"$config"
		env=-
	fi
	if [[ -z ${built[$dir]:-} ]]; then
		opt=-O0
		[[ $model == hold || $model == workload ]] && opt=-O2
		build "$dir" "$model" "$mode" "$opt" "${defines[@]}"
		built[$dir]=1
	fi
	label="$model.pml: $name"
	[[ $config != - ]] && label+=" ($config)"
	if out=$(search "$dir" "$mode" "$env"); then
		echo "model: $label: holds: $(summary <<<"$out")"
	else
		echo "model: $label: FAILED" >&2
		echo "$out" | grep -vE '^\s*$' | sed 's/^/    /' >&2
		failures=$((failures + 1))
	fi
done

# model | variant (-D define) | MODEL_CONFIG | mode | what the failure must
# show. Each must be rejected.
negatives=(
	"hold|BUG_ACTIVE_UNDER_RMU|2 0 1 0 0 1 1 0|full|E2_one_serves"
	"hold|BUG_REACT_REFUSED|2 1 1 1 0 0 1 0|full|invalid end state"
	"hold|BUG_SHARED_VACANCY|2 1 0 1 0 0 1 0|full|invalid end state"
	"hold|BUG_HOLD_UNDER_MU|2 1 1 0 0 1 0 0|full|invalid end state"
	"hold|BUG_JOIN_GAP|0 0 1 0 0 1 0 0|full|E1_made_whole"
	"gate|BUG_SYNC_OUTSIDE_GATE|-|full|R1_stop_relayed"
	"gate|BUG_JOIN_OUTSIDE_GATE|-|full|R2_routed_knows"
	"gate|DESIGN_CRASH_EXIT|-|full|R1_stop_relayed"
	"idle|BUG_IDLE_COMMIT|-|ltl|acceptance cycle"
	"legacy|BUG_ADMIT_AT_REGISTRATION|-|full|L1_apart"
	"grace|BUG_STALE_GRACE|-|full|G1_no_stale_grace"
	"workload|BUG_IDLE_LISTED|-DNEV=1 -DNKILL=0 -DNO_RESTART|full|I1_idle_no_events"
	"workload|BUG_IDLE_UPDATE|-DNEV=0 -DNKILL=0 -DNO_RESTART|full|U1_one_writer"
	"workload|BUG_CONNECT_ORDER|-DNEV=0 -DNKILL=1|full|R1_newest_takes_over"
	"workload|BUG_NO_REJOIN|-DNEV=0 -DNKILL=1 -DWITH_C -DNO_RESTART|full|R2_newest_serves"
	"workload|BUG_GROUP_KEEPS_OPTED|-DNEV=1 -DNKILL=0 -DWITH_O -DNO_RESTART|full|E2_one_receives"
	"workload|BUG_WORKLOAD_BY_LABELS|-DNEV=1 -DNKILL=0 -DNO_RESTART -DCHART|full|E2_one_receives"
	"hold|BUG_STALE_REACTIVATION|2 1 1 1 0 0 1 0|full|A1_one_active"
	"ledger|BUG_UPDATE_NOT_NOTED|-DRT=0|full|X1_exact_on_containerd"
	"ledger|BUG_REMOVAL_READDED|-DRT=1|full|S1_told_the_node"
	"ledger|BUG_TRUST_ALWAYS|-DRT=2|full|S1_told_the_node"
	"ledger|BUG_PEND_COUNTED|-DRT=0|full|X1_exact_on_containerd"
	"ticket|BUG_STALE_TICKET|-DNEV=1 -DNKILL=1|full|W1_events_wait_for_joiner"
	"reply|BUG_UPDATE_DEFERRED|-|full|U6_upstream_reply"
	"reply|BUG_NO_RECHECK|-|full|U7_only_active_writes"
	"reply|BUG_WAIT_IN_HANDLER|-|full|invalid end state"
	"serve|BUG_SUPERSEDED_GONE|-DNEV=1|full|R1_serves_again"
)
for n in "${negatives[@]}"; do
	IFS='|' read -r model bug config mode want <<<"$n"
	defines=()
	if definesModel "$model"; then
		[[ $config == - ]] || read -ra defines <<<"$config"
		config=-
	fi
	build "$bug" "$model" "$mode" -O0 -D"$bug" "${defines[@]}"
	if out=$(expect_rejection model-negative "$model.pml $bug" "$want" search "$bug" "$mode" "$config" 2>&1); then
		echo "$out ($(grep -oE '[0-9]+ states, stored' <<<"$(cd "$work/$bug" && MODEL_CONFIG=$config ./pan -m200000 $([[ $mode == ltl ]] && echo -a -f) 2>&1)" | cut -d' ' -f1) states)"
	else
		echo "$out" >&2
		failures=$((failures + 1))
	fi
done

if ((failures > 0)); then
	echo "model: $failures check(s) did not behave" >&2
	exit 1
fi
echo "model: all ${#configs[@]} configurations hold, all ${#negatives[@]} broken variants are rejected"
# The counts the documents quote (hack/figures); rewritten by every run.
printf '# make model: rewritten by every run, read by hack/figures; do not edit\nreproduced-by make model\nconfigurations-hold %d\nbroken-variants-rejected %d\n' \
	"${#configs[@]}" "${#negatives[@]}" >"$(cd "$(dirname "$0")/../.." && pwd)/docs/results/model.txt"
