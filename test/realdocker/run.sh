#!/usr/bin/env bash
# make e2e-docker: Docker Engine (dockerd from moby v2, built unchanged on
# this module by build-dockerd.sh) as a second runtime, two suites:
#   H. e2e.sh: handover with `docker run` containers, steps 1-7 (surge,
#      rollback, refused restart, kill -9 mid-handover, dockerd restart,
#      upstream plugins beside);
#   M. nri-tests.sh: moby's own NRI integration tests (integration/daemon/nri)
#      against dockerd built stock and built on this module, both printed.
# Needs root (it runs containerd, dockerd and runc, installs Debian packages
# and runc v1.5.3 when missing); without root it says so and exits 0.
# Each suite is bounded by BOUND seconds (default 1500); on timeout it gets
# SIGTERM and its EXIT trap cleans up. Exits non-zero if any suite fails.
#
# Usage: [R=/tmp/nrdk-ish] [BOUND=1500] test/realdocker/run.sh
set -uo pipefail
BOUND=${BOUND:-1500}

if [ "$(id -u)" != 0 ]; then
	echo "e2e-docker: SKIPPED: needs root (it runs containerd, dockerd and runc); run it as root, e.g. sudo make e2e-docker"
	exit 0
fi
DIR=$(cd "$(dirname "$0")" && pwd)
export R=${R:-/tmp/nrdk-ish}
# shellcheck source=../realruntime/results.sh
. "$DIR/../realruntime/results.sh"
results_open e2e-docker
rc=0
for suite in H:e2e M:nri-tests; do
	[ -x "$DIR/${suite#*:}.sh" ] || continue
	echo "=== e2e-docker: ${suite#*:}.sh"
	PART=${suite%%:*} timeout -k 30 "$BOUND" "$DIR/${suite#*:}.sh" || { echo "=== e2e-docker: ${suite#*:}.sh FAILED (status $?)"; rc=1; }
done
results_close "$([ $rc = 0 ] && echo passed || echo failed)"
exit $rc
