#!/usr/bin/env bash
# check-standin-mod.sh [MAIN_GOMOD [STANDIN_GOMOD]]
#
# The stand-in module (containerd-nri) is vendored by runtimes in place
# of upstream containerd/nri, next to this module. So that it raises neither
# a runtime's toolchain nor its dependencies beyond what this module asks,
# and builds offline from this module's module cache, its go.mod must
# declare the same go (and toolchain) directive as ours and require every
# module both files require at the same version. Modules only one of them
# requires are not compared.
#
# Defaults: go.mod and containerd-nri/go.mod. check-standin-mod-negative.sh
# proves the check fails on altered copies.
set -euo pipefail

cd "$(dirname "$0")/.."
main=${1:-go.mod}
standin=${2:-containerd-nri/go.mod}

# directives FILE: "go V", "toolchain V" and "require PATH V" lines, from the
# go command's own formatting of the file (comments and layout normalised).
directives() {
	go mod edit -print "$1" | awk '
		$1 == "go" && NF >= 2        { print "go", $2; next }
		$1 == "toolchain" && NF >= 2 { print "toolchain", $2; next }
		$1 == "require" && $2 == "(" { inreq = 1; next }
		inreq && $1 == ")"           { inreq = 0; next }
		inreq && NF >= 2             { print "require", $1, $2; next }
		$1 == "require" && NF >= 3   { print "require", $2, $3 }
	'
}

m=$(directives "$main")
s=$(directives "$standin")

value() { awk -v k="$2" '$1 == k { print $2 }' <<<"$1"; }

status=0
for d in go toolchain; do
	mv=$(value "$m" "$d")
	sv=$(value "$s" "$d")
	if [[ "$mv" != "$sv" ]]; then
		echo "check-standin-mod: $standin says '$d ${sv:-(none)}', $main says '$d ${mv:-(none)}'" >&2
		status=1
	fi
done

declare -A want
while read -r _ path version; do
	want[$path]=$version
done < <(grep '^require ' <<<"$m")
shared=0
while read -r _ path version; do
	[[ -n "${want[$path]:-}" ]] || continue
	shared=$((shared + 1))
	if [[ "${want[$path]}" != "$version" ]]; then
		echo "check-standin-mod: $standin requires $path $version, $main requires ${want[$path]}" >&2
		status=1
	fi
done < <(grep '^require ' <<<"$s")

if ((status == 0)); then
	echo "check-standin-mod: $standin has $main's go directive ($(value "$m" go)) and its versions of the $shared modules both require"
fi
exit "$status"
