#!/usr/bin/env bash
# upstream-mux-suite.sh [go test flags...]
#
# Runs upstream containerd/nri's own multiplexer test suite
# (pkg/net/multiplex/mux_suite_test.go, the version go.mod pins, from the
# module cache) unchanged but for its import paths, which are rewritten to
# our pkg/net and pkg/net/multiplex. The copy goes to a temporary package
# in this module (pkg/net/multiplex/_upstream-mux-suite.*: the leading '_'
# keeps it out of ./...), removed on exit; upstream's test-only requirement
# (testify) is added to a temporary copy of go.mod used through -modfile.
set -euo pipefail

cd "$(dirname "$0")/.."
GO=${GO:-go}
GO_TEST_FLAGS=${GO_TEST_FLAGS:--count=1 -timeout 10m}
upstream=github.com/containerd/nri
module=$($GO list -m)
version=$($GO list -m -f '{{.Version}}' "$upstream")
src=$($GO list -m -f '{{.Dir}}' "$upstream")

dest=$(mktemp -d "$PWD/pkg/net/multiplex/_upstream-mux-suite.XXXXXX")
modtmp=$(mktemp -d)
trap 'rm -rf "$dest" "$modtmp"' EXIT

sed -e "s#\"$upstream/pkg/net\"#\"$module/pkg/net\"#" \
	-e "s#\"$upstream/pkg/net/multiplex\"#\"$module/pkg/net/multiplex\"#" \
	"$src/pkg/net/multiplex/mux_suite_test.go" >"$dest/upstream_mux_suite_test.go"
if left=$(grep -n "\"$upstream/" "$dest"/*.go); then
	echo "upstream-mux-suite: imports with no counterpart in $module:" >&2
	echo "$left" >&2
	exit 1
fi

cp go.mod "$modtmp/suite.mod"
cp go.sum "$modtmp/suite.sum"
testify=$(awk '$1 == "github.com/stretchr/testify" { print $2 }' "$src/go.mod")
$GO get -modfile="$modtmp/suite.mod" "github.com/stretchr/testify@$testify" >/dev/null 2>&1 ||
	$GO get -modfile="$modtmp/suite.mod" "github.com/stretchr/testify@$testify"

echo "upstream-mux-suite: $upstream@$version multiplexer tests against $module"
# shellcheck disable=SC2086 # GO_TEST_FLAGS is a list of flags
$GO test -modfile="$modtmp/suite.mod" $GO_TEST_FLAGS "$@" "./${dest#"$PWD"/}/"
