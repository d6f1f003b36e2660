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
#      instance sees, which exits with what code, who ends active.
# Needs root (it runs containerd, runc and CNI, and installs runc, busybox and
# the CNI plugins from Debian when missing); without root it says so and
# exits 0, so that `make e2e-containerd` is harmless on a developer machine.
# Exits non-zero if any suite fails; each ends with "N passed, N failed".
#
# Each suite is bounded by BOUND seconds (default 1500; a cold run takes
# about 7 minutes for the slower one); on timeout it gets SIGTERM, and its
# EXIT trap cleans up.
#
# Usage: [RA=/tmp/nrc] [RC=/tmp/nrh] [RV=/tmp/nrv] [RD=/tmp/nrd] [RR=/tmp/nrr] [BOUND=1500] test/realcontainerd/e2e.sh
set -uo pipefail
BOUND=${BOUND:-1500}

if [ "$(id -u)" != 0 ]; then
	echo "e2e-containerd: SKIPPED: needs root (it runs containerd, runc and CNI plugins); run it as root, e.g. sudo make e2e-containerd"
	exit 0
fi
DIR=$(cd "$(dirname "$0")" && pwd)
START=$SECONDS
status=0
run() {
	local name=$1 t=$SECONDS rc
	shift
	echo "=== e2e-containerd: $name"
	timeout -k 180 "$BOUND" "$@"
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
echo "=== e2e-containerd: $([ $status = 0 ] && echo PASSED || echo FAILED) in $((SECONDS - START))s"
exit $status
