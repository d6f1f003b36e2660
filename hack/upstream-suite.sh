#!/usr/bin/env bash
# upstream-suite.sh [go test flags...]
#
# Runs upstream containerd/nri's own test suites (the version go.mod pins,
# from the module cache, unchanged) against this module, the way a runtime
# maintainer would check a drop-in: copy them, rewrite the import paths to
# ours, run them. One driver, a table of suites (below).
#
# Upstream's files are never committed. For each suite, upstream's test
# files are copied, together with a copy of our counterpart package (so that
# package-internal tests, and our own implementations of upstream's
# package-internal test hooks in hack/upstream-suite/testdata/<suite>/, can
# reach our internals), into a temporary package directory inside the module
# (<our package>/_upstream-suite.*, git-ignored; the leading '_' keeps it out
# of ./... patterns) that is removed on exit. The test-only dependencies
# upstream's tests need and our module does not (testify, gofakeit) are added,
# at upstream's versions, to a temporary copy of go.mod used through
# -modfile, so go.mod and go.sum stay untouched.
#
# Flags are passed to go test of every suite, e.g.
#   UPSTREAM_SUITES=adaptation hack/upstream-suite.sh -run 'TestPluginFailurePolicy' -v
# UPSTREAM_SUITES (default: all) names the suites to run, space-separated.
# GO_TEST_FLAGS (default: -count=1 -timeout 10m) come first; make passes
# -race through it.
set -euo pipefail

cd "$(dirname "$0")/.."

GO=${GO:-go}
GO_TEST_FLAGS=${GO_TEST_FLAGS:--count=1 -timeout 10m}

upstream=github.com/containerd/nri
module=$($GO list -m)
version=$($GO list -m -f '{{.Version}}' "$upstream")
$GO mod download "$upstream@$version"
updir=$($GO list -m -f '{{.Dir}}' "$upstream")

# The suites: "name|upstream package|our package|test files". Each test
# file is upstream's, copied unchanged but for its import paths. Upstream
# test files a suite leaves out, and why:
#   adaptation: helpers_test.go is replaced by ours
#     (hack/upstream-suite/testdata/adaptation/helpers_test.go);
#     metrics_test.go and plugin_test.go are package-internal: they build
#     upstream's unexported plugin and pluginType structs and call their
#     methods (dropsPlugin, handleRequestError), which have no counterpart in
#     our internals.
#   api, net, multiplex, generate: none (optional_test.go is package-internal
#     and reaches only identifiers our api has too).
suites=(
	"adaptation|pkg/adaptation|pkg/adaptation|adaptation_suite_test.go suite_test.go failure_policy_test.go"
	"api|pkg/api|api|optional_test.go owners_test.go strip_test.go"
	"net|pkg/net|pkg/net|conn_test.go socketpair_test.go"
	"multiplex|pkg/net/multiplex|pkg/net/multiplex|mux_suite_test.go"
	"generate|pkg/runtime-tools/generate|pkg/runtime-tools/generate|generate_suite_test.go"
)

# Tests that cannot run against this module, by suite and name, as
# "suite|go-test-skip-pattern|reason". Keep this list empty unless a test
# depends on something that is upstream's and not part of the API we keep,
# or names a known bug of ours being fixed elsewhere.
skips=()

# Upstream's packages -> ours. The package under test goes to its copy
# (first, so that it wins).
ourpath() {
	case "$1" in
	pkg/api) echo "$module/api" ;;
	pkg/runtime-tools/internal/ocigen) echo "$module/test/ocigen" ;;
	*) echo "$module/$1" ;;
	esac
}
mapped=(pkg/adaptation pkg/adaptation/builtin pkg/api pkg/stub pkg/plugin pkg/net pkg/net/multiplex
	pkg/runtime-tools/generate pkg/runtime-tools/internal/ocigen plugins/default-validator/builtin)

modtmp=$(mktemp -d)
dests=()
cleanup() { rm -rf "$modtmp" "${dests[@]}"; }
trap cleanup EXIT

# Test-only requirements of upstream's tests, at upstream's versions: every
# module upstream requires that our go.mod does not, and the tests import.
cp go.mod "$modtmp/suite.mod"
cp go.sum "$modtmp/suite.sum"
need=()
while read -r mod ver; do
	if ! grep -qE "^\s*(require )?$mod " go.mod &&
		grep -qs "\"$mod[/\"]" "$updir"/pkg/*/*_test.go "$updir"/pkg/*/*/*_test.go "$updir"/pkg/*/*/*/*_test.go; then
		need+=("$mod@$ver")
	fi
done < <(awk '/^require \(/ { r = 1; next } r && /^\)/ { r = 0 } r && NF >= 2 && $3 != "//" { print $1, $2 }' "$updir/go.mod")
if ((${#need[@]} > 0)); then
	$GO get -modfile="$modtmp/suite.mod" "${need[@]}" >/dev/null 2>&1 ||
		$GO get -modfile="$modtmp/suite.mod" "${need[@]}"
fi

want=${UPSTREAM_SUITES:-}
status=0
for entry in "${suites[@]}"; do
	IFS='|' read -r name uprel ourrel files <<<"$entry"
	if [ -n "$want" ] && [[ " $want " != *" $name "* ]]; then
		continue
	fi
	src=$updir/$uprel
	dest=$(mktemp -d "$PWD/$ourrel/_upstream-suite.XXXXXX")
	dests+=("$dest")
	pkg="$module/$ourrel/$(basename "$dest")"

	# Our package, as it is now, under a temporary import path.
	for f in "$ourrel"/*.go; do
		[[ "$f" == *_test.go ]] || cp "$f" "$dest/"
	done
	if [ -d "hack/upstream-suite/testdata/$name" ]; then
		cp "hack/upstream-suite/testdata/$name"/*.go "$dest/"
	fi

	rewrite=(-e "s#\"$upstream/$uprel\"#\"$pkg\"#")
	for m in "${mapped[@]}"; do
		rewrite+=(-e "s#\"$upstream/$m\"#\"$(ourpath "$m")\"#")
	done
	for f in $files; do
		sed "${rewrite[@]}" "$src/$f" >"$dest/upstream_$f"
	done
	if left=$(grep -n "\"$upstream/" "$dest"/upstream_*.go); then
		echo "upstream-suite: $name: imports with no counterpart in $module:" >&2
		echo "$left" >&2
		exit 1
	fi

	skip=()
	reasons=()
	for s in "${skips[@]}"; do
		IFS='|' read -r sname spat sreason <<<"$s"
		if [ "$sname" = "$name" ]; then
			skip+=("$spat")
			reasons+=("$spat ($sreason)")
		fi
	done
	skipflag=()
	if ((${#skip[@]} == 1)); then
		skipflag=(-skip "${skip[0]}")
	elif ((${#skip[@]} > 1)); then
		# go test takes one -skip; '|' only combines patterns of one level.
		for p in "${skip[@]}"; do
			if [[ "$p" == */* ]]; then
				echo "upstream-suite: $name: more than one skip, one of them of a subtest: split the suite" >&2
				exit 1
			fi
		done
		skipflag=(-skip "$(
			IFS='|'
			echo "${skip[*]}"
		)")
	fi

	echo "upstream-suite: $upstream@$version $uprel tests against $module/$ourrel (${#skip[@]} skipped by name)"
	for r in "${reasons[@]}"; do
		echo "upstream-suite:   skipped: $r"
	done
	out=$modtmp/out-$name.txt
	# shellcheck disable=SC2086 # GO_TEST_FLAGS is a list of flags
	if $GO test -modfile="$modtmp/suite.mod" $GO_TEST_FLAGS "${skipflag[@]}" "$@" "./${dest#"$PWD"/}/" 2>&1 | tee "$out"; [ "${PIPESTATUS[0]}" = 0 ]; then
		continue
	fi

	# One race is upstream's own: its test event queue's Wait clears q.c in a
	# deferred func after unlocking (adaptation's suite_test.go, EventQ.Wait),
	# racing a plugin's onClose that calls EventQ.Add when the runtime
	# disconnects the plugin while a test returns from Wait. Timing decides
	# whether the race detector sees it; nothing of ours is in either access.
	# A run whose only failures are that race reruns the tests that hit it,
	# once, and says so; any other failure, or the race again, fails.
	races=$(grep -c '^WARNING: DATA RACE' "$out" || true)
	known=$(awk '/^WARNING: DATA RACE/ { r = 1; w = 0; a = 0 }
		r && /EventQ\)\.Wait\.func/ { w = 1 }
		r && /EventQ\)\.Add\(/ { a = 1 }
		r && /^==================$/ && (w || a) { if (w && a) n++; r = 0 }
		END { print n + 0 }' "$out")
	failed=$(grep -E '^--- FAIL: ' "$out" | awk '{ print $3 }' | sort -u)
	why=$(grep -E '^\s+[a-z_]+\.go:[0-9]+: ' "$out" | grep -vE 'race detected during execution of test|upstream_suite_test\.go:[0-9]+: \* ' || true)
	if [ "$races" = 0 ] || [ "$races" != "$known" ] || [ -n "$why" ] || [ -z "$failed" ]; then
		echo "upstream-suite: $name FAILED" >&2
		status=1
		continue
	fi
	echo "upstream-suite: $name: $(echo "$failed" | paste -sd' ') hit only upstream's EventQ.Wait race ($known report(s)); running them again"
	# shellcheck disable=SC2086
	if ! $GO test -modfile="$modtmp/suite.mod" $GO_TEST_FLAGS "${skipflag[@]}" "$@" -run "^($(echo "$failed" | paste -sd'|'))\$" "./${dest#"$PWD"/}/"; then
		echo "upstream-suite: $name FAILED" >&2
		status=1
	fi
done
exit $status
