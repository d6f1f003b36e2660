#!/usr/bin/env bash
# upstream-suite.sh [go test flags...]
#
# Runs upstream containerd/nri's own external adaptation tests (the version
# go.mod pins) against this module, the way a runtime maintainer would check
# a drop-in: copy them, rewrite the import paths to ours, run them.
#
# Upstream's files are never committed. They are copied, together with a copy
# of our pkg/adaptation (so that our own implementations of upstream's
# package-internal test hooks, hack/upstream-suite/testdata/helpers_test.go,
# can reach our internals), into a temporary package directory inside the
# module (pkg/adaptation/_upstream-suite.*, git-ignored; the leading '_'
# keeps it out of ./... patterns) that is removed on exit. The test-only
# dependencies upstream's tests need and our module does not (testify) are
# added to a temporary copy of go.mod used through -modfile, so go.mod and
# go.sum stay untouched.
#
# Flags are passed to go test, e.g.
#   hack/upstream-suite.sh -run 'TestPluginFailurePolicy' -v
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
src=$($GO list -m -f '{{.Dir}}' "$upstream")/pkg/adaptation

# The external (package adaptation_test) test files. Of upstream's other test
# files, helpers_test.go is replaced by ours, and metrics_test.go and
# plugin_test.go are package-internal: they build upstream's unexported
# plugin and pluginType structs and call their methods (dropsPlugin,
# handleRequestError), which have no counterpart in our internals.
files=(adaptation_suite_test.go suite_test.go failure_policy_test.go)

# Tests that cannot run against this module, by name, as
# "go-test-skip-pattern: reason". Keep this list empty unless a test depends
# on something that is upstream's and not part of the API we keep.
skips=()

dest=$(mktemp -d "$PWD/pkg/adaptation/_upstream-suite.XXXXXX")
modtmp=$(mktemp -d)
trap 'rm -rf "$dest" "$modtmp"' EXIT
pkg="$module/pkg/adaptation/$(basename "$dest")"

# Our package, as it is now, under a temporary import path.
for f in pkg/adaptation/*.go; do
	[[ "$f" == *_test.go ]] || cp "$f" "$dest/"
done
cp hack/upstream-suite/testdata/helpers_test.go "$dest/"

# Upstream's package -> ours. The adaptation itself goes to the copy.
rewrite=(
	-e "s#\"$upstream/pkg/adaptation\"#\"$pkg\"#"
	-e "s#\"$upstream/pkg/adaptation/builtin\"#\"$module/pkg/adaptation/builtin\"#"
	-e "s#\"$upstream/pkg/api\"#\"$module/api\"#"
	-e "s#\"$upstream/pkg/stub\"#\"$module/pkg/stub\"#"
	-e "s#\"$upstream/pkg/plugin\"#\"$module/pkg/plugin\"#"
	-e "s#\"$upstream/plugins/default-validator/builtin\"#\"$module/plugins/default-validator/builtin\"#"
)
for f in "${files[@]}"; do
	sed "${rewrite[@]}" "$src/$f" >"$dest/upstream_$f"
done
if left=$(grep -n "\"$upstream/" "$dest"/upstream_*.go | grep -v "\"$upstream/pkg/net"); then
	echo "upstream-suite: imports with no counterpart in $module:" >&2
	echo "$left" >&2
	exit 1
fi

# Test-only requirements of upstream's tests, at upstream's versions.
cp go.mod "$modtmp/suite.mod"
cp go.sum "$modtmp/suite.sum"
testify=$(awk '$1 == "github.com/stretchr/testify" { print $2 }' "$src/../../go.mod")
$GO get -modfile="$modtmp/suite.mod" "github.com/stretchr/testify@$testify" >/dev/null 2>&1 ||
	$GO get -modfile="$modtmp/suite.mod" "github.com/stretchr/testify@$testify"

skip=()
if ((${#skips[@]} > 0)); then
	skip=(-skip "$(
		IFS='|'
		echo "${skips[*]%%:*}"
	)")
fi

echo "upstream-suite: $upstream@$version adaptation tests against $module (${#skips[@]} skipped by name)"
out=$modtmp/out.txt
# shellcheck disable=SC2086 # GO_TEST_FLAGS is a list of flags
if $GO test -modfile="$modtmp/suite.mod" $GO_TEST_FLAGS "${skip[@]}" "$@" "./${dest#"$PWD"/}/" 2>&1 | tee "$out"; [ "${PIPESTATUS[0]}" = 0 ]; then
	exit 0
fi

# One race is upstream's own: its test event queue's Wait clears q.c in a
# deferred func after unlocking (suite_test.go, EventQ.Wait), racing a
# plugin's onClose that calls EventQ.Add when the runtime disconnects the
# plugin while a test returns from Wait. Timing decides whether the race
# detector sees it; nothing of ours is in either access. A run whose only
# failures are that race reruns the tests that hit it, once, and says so;
# any other failure, or the race again, fails.
races=$(grep -c '^WARNING: DATA RACE' "$out" || true)
known=$(awk '/^WARNING: DATA RACE/ { r = 1; w = 0; a = 0 }
	r && /EventQ\)\.Wait\.func/ { w = 1 }
	r && /EventQ\)\.Add\(/ { a = 1 }
	r && /^==================$/ && (w || a) { if (w && a) n++; r = 0 }
	END { print n + 0 }' "$out")
failed=$(grep -E '^--- FAIL: ' "$out" | awk '{ print $3 }' | sort -u)
reasons=$(grep -E '^\s+[a-z_]+\.go:[0-9]+: ' "$out" | grep -vE 'race detected during execution of test|upstream_suite_test\.go:[0-9]+: \* ' || true)
if [ "$races" = 0 ] || [ "$races" != "$known" ] || [ -n "$reasons" ] || [ -z "$failed" ]; then
	exit 1
fi
echo "upstream-suite: $(echo "$failed" | paste -sd' ') hit only upstream's EventQ.Wait race ($known report(s)); running them again"
# shellcheck disable=SC2086
$GO test -modfile="$modtmp/suite.mod" $GO_TEST_FLAGS "${skip[@]}" "$@" -run "^($(echo "$failed" | paste -sd'|'))\$" "./${dest#"$PWD"/}/"
