#!/usr/bin/env bash
# make e2e-containerd: the real-containerd suites, one after the other.
#   A. run.sh: our plugin side (pkg/stub) against stock containerd v2.4.2,
#      which embeds upstream NRI;
#   C. surge.sh: containerd v2.4.2 built unchanged on this module
#      (build-containerd.sh), handover with real pods, steps 1-7;
#   V. vendor.sh: the README's replace + vendor recipe on containerd's own
#      source: built with -mod=vendor, nothing but go.mod/go.sum/vendor changed;
#   D. identity.sh: on the same containerd build, the sample plugin as the
#      container of a crictl pod: a rollout to a newer pod of its workload
#      takes over, impostors (a root host process, pods of another namespace,
#      of other labels, of an older template generation) are refused;
#   R. restart.sh: containerd restarted in the middle of a rollout, with two
#      instances of the sample plugin connected (v1 active, v2 a candidate):
#      onto stock v2.4.2 (upstream NRI) and back onto ours; what each
#      instance sees, which exits with what code, who ends active;
#   S. stops.sh: graceful stops (containers that ignore SIGTERM for seconds,
#      each stop holding containerd's BlockPluginSync) while opted-in
#      instances take over one after the other: a legacy plugin (upstream
#      v0.12.5's stub) gets StopContainer once per container stopped, no
#      syncPlugin runs, each takeover completes inside a stop's graceful wait;
#   N. nriplugins.sh: containers/nri-plugins v0.14.0's sgx-epc and memory-qos,
#      on their own upstream stub (NRI v0.11.0), pre-installed in stock
#      containerd v2.4.2 and in ours: each container of annotated crictl pods
#      gets the same unified resources on both, the documented ones (skips
#      with a message without the third-party tree);
#   U. patched.sh: not this module: containerd v2.4.2 built unchanged on
#      upstream containerd/nri v0.12.5 with upstream-patches/ (PRs a-d)
#      applied, and a plugin on the patched stub rolled out twice (a surge,
#      then a successor with a slow Synchronize) while pods keep being
#      created: each event handled once, the predecessor told SUPERSEDED,
#      the pods' wait for each join under the sync lock measured (its own
#      results file, docs/results/e2e-containerd-patched.txt).
# Needs root (it runs containerd, runc and CNI, and installs runc, busybox and
# the CNI plugins from Debian when missing); without root it says so and
# exits 0, so that `make e2e-containerd` is harmless on a developer machine.
# Exits non-zero if any suite fails; each ends with "N passed, N failed".
#
# Each suite is bounded by BOUND seconds (default 1500; a cold run takes
# about 7 minutes for the slower one); on timeout it gets SIGTERM, and its
# EXIT trap cleans up.
#
# PARTS (letters, e.g. PARTS=U) runs only those parts; a run of some parts
# leaves docs/results/e2e-containerd.txt as it is (its figures are of a
# whole run), part U still writes its own file.
#
# Usage: [PARTS=ACVDRSNU] [RA=/tmp/nrc] [RC=/tmp/nrh] [RV=/tmp/nrv] [RD=/tmp/nrd] [RR=/tmp/nrr] [RS=/tmp/nrs] [RN=/tmp/nrn] [RU=/tmp/nru] [BOUND=1500] test/realcontainerd/e2e.sh
set -uo pipefail
BOUND=${BOUND:-1500}
ALL=ACVDRSNU
PARTS=${PARTS:-$ALL}

if [ "$(id -u)" != 0 ]; then
	echo "e2e-containerd: SKIPPED: needs root (it runs containerd, runc and CNI plugins); run it as root, e.g. sudo make e2e-containerd"
	exit 0
fi
DIR=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../realruntime/results.sh
. "$DIR/../realruntime/results.sh"
[ "$PARTS" != "$ALL" ] || results_open e2e-containerd
START=$SECONDS
status=0
# run NAME CMD...: one part, if PARTS names its letter; its counts go to the
# results as PART (NAME's letter).
run() {
	local name=$1 t=$SECONDS rc
	shift
	[[ $PARTS == *"${name%%:*}"* ]] || return 0
	echo "=== e2e-containerd: $name"
	PART=${name%%:*} timeout -k 180 "$BOUND" "$@"
	rc=$?
	[ $rc != 124 ] || echo "=== e2e-containerd: $name: timed out after ${BOUND}s"
	echo "=== e2e-containerd: $name: $([ $rc = 0 ] && echo ok || echo "FAILED (exit $rc)") in $((SECONDS - t))s"
	[ $rc = 0 ] || status=1
}
run "A: our plugins on stock containerd $(printf '(R=%s)' "${RA:-/tmp/nrc}")" env R="${RA:-/tmp/nrc}" "$DIR/run.sh"
run "C: containerd built on our NRI, handover with real pods $(printf '(R=%s)' "${RC:-/tmp/nrh}")" env R="${RC:-/tmp/nrh}" "$DIR/surge.sh"
run "V: containerd vendored on our NRI $(printf '(R=%s)' "${RV:-/tmp/nrv}")" env R="${RV:-/tmp/nrv}" "$DIR/vendor.sh"
# D uses C's containerd (RC/ours/bin) when C built it, or builds its own.
run "D: who may take over, from the runtime's records $(printf '(R=%s)' "${RD:-/tmp/nrd}")" \
	env R="${RD:-/tmp/nrd}" OURS="${RC:-/tmp/nrh}/ours/bin" "$DIR/identity.sh"
# R uses A's stock containerd and C's containerd on our NRI, or builds its own.
run "R: the runtime restarted mid-rollout, onto upstream NRI and back $(printf '(R=%s)' "${RR:-/tmp/nrr}")" \
	env R="${RR:-/tmp/nrr}" STOCK="${RA:-/tmp/nrc}/bin" OURS="${RC:-/tmp/nrh}/ours/bin" "$DIR/restart.sh"
# S uses C's containerd and A's crictl, or builds its own.
run "S: graceful stops while instances take over, a legacy plugin counting $(printf '(R=%s)' "${RS:-/tmp/nrs}")" \
	env R="${RS:-/tmp/nrs}" OURS="${RC:-/tmp/nrh}/ours/bin" CRICTL="${RA:-/tmp/nrc}/bin/crictl" "$DIR/stops.sh"
# N uses A's stock containerd and C's containerd on our NRI, or builds its own.
run "N: containers/nri-plugins on stock containerd and on ours $(printf '(R=%s)' "${RN:-/tmp/nrn}")" \
	env R="${RN:-/tmp/nrn}" STOCK="${RA:-/tmp/nrc}/bin" OURS="${RC:-/tmp/nrh}/ours/bin" "$DIR/nriplugins.sh"
# U: upstream v0.12.5 with the patches; crictl from A, if it ran.
run "U: containerd on upstream NRI with patches a-d, a surge rollout $(printf '(R=%s)' "${RU:-/tmp/nru}")" \
	env R="${RU:-/tmp/nru}" CRICTL="${RA:-/tmp/nrc}/bin/crictl" "$DIR/patched.sh"
echo "=== e2e-containerd: $([ $status = 0 ] && echo PASSED || echo FAILED) in $((SECONDS - START))s"
[ "$PARTS" != "$ALL" ] || results_close "$([ $status = 0 ] && echo passed || echo failed)"
exit $status
