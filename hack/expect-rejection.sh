# expect-rejection.sh: sourced by the negative checks (check-wire-negative.sh,
# check-generate-negative.sh), which prove a gate fails on a broken input.
#
# expect_rejection LABEL CASE WANT CMD [ARG...]
#
# Runs CMD, which must fail with output that contains WANT (so that it failed
# for the reason the case is about). Prints the verdict, prefixed with LABEL;
# returns non-zero, with CMD's output, if CMD passed or failed without WANT.
expect_rejection() {
	local label=$1 name=$2 want=$3 out
	shift 3
	if out=$("$@" 2>&1); then
		echo "$label: $name: ${1##*/} PASSED" >&2
	elif ! grep -qF -- "$want" <<<"$out"; then
		echo "$label: $name: ${1##*/} failed, but without mentioning '$want'" >&2
	else
		echo "$label: $name: rejected as expected"
		return 0
	fi
	echo "$out" | sed 's/^/    /' >&2
	return 1
}
