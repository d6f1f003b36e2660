# Results of the real-runtime runs, for the documents: each driver (make
# e2e-containerd, e2e-docker, e2e-kubernetes) writes docs/results/SUITE.txt,
# one "KEY VALUE" per line under a header naming the commit, and the
# documents quote them with <!--fig SUITE KEY--> after the figure, which
# `make test` checks (hack/figures). Sourced by lib.sh and by the drivers.
#
#   results_open SUITE   start the file (the driver, once; exported to parts)
#   result KEY VALUE     one figure (a no-op when no file is open)
#   results_close STATUS the run's status and wall time; the file replaces
#                        the committed one only now, so a run cut short
#                        leaves the last complete one in place

results_open() {
	local repo
	repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
	RESULTS=${RESULTS_DIR:-$repo/docs/results}/$1.txt
	RESULTS_T0=$SECONDS
	mkdir -p "$(dirname "$RESULTS")"
	{
		echo "# make $1: written by the run, read by hack/figures; do not edit"
		# +changes: code differs from the commit (documents do not count)
		echo "commit $(git -C "$repo" rev-parse --short HEAD 2>/dev/null || echo unknown)$(git -C "$repo" diff --quiet HEAD -- . ':!docs' ':!*.md' 2>/dev/null || echo +changes)"
		echo "date $(date -u +%Y-%m-%d)"
		echo "cores $(nproc)"
	} >"$RESULTS.part"
	export RESULTS
}
result() { [ -z "${RESULTS:-}" ] || echo "$1 $2" >>"$RESULTS.part"; }
results_close() {
	[ -n "${RESULTS:-}" ] || return 0
	result status "$1"
	result minutes "$(awk -v s=$((SECONDS - RESULTS_T0)) 'BEGIN { printf "%.1f", s / 60 }')"
	mv "$RESULTS.part" "$RESULTS"
}
