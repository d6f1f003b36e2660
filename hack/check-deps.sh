#!/usr/bin/env bash
# check-deps.sh
#
# Keeps upstream's API out of our binaries. Our api package registers the
# protobuf names nri.pkg.api.v1alpha1.*, exactly like upstream's pkg/api, and
# linking both into one binary panics at start-up. So:
#   1. our packages (./api/... ./pkg/... ./plugins/...) and every other
#      package of this module outside test/upstream/, tests included, may
#      depend on github.com/containerd/nri only through pkg/net and
#      pkg/net/multiplex (which carry no protobuf types);
#   2. the upstream peers under test/upstream/, and test/thirdparty/runtime
#      (written against upstream's API, built on upstream and on the stand-in),
#      must not link our api package (directly or through any other package
#      of ours).
# And it keeps a runtime's toolchain where upstream leaves it:
#   3. no module in our build list (ours included) may declare a newer go
#      directive than upstream's at the version go.mod pins, or vendoring us
#      would raise the runtime's own go line (`go get` raises ours silently
#      when a dependency needs a newer Go).
set -euo pipefail

cd "$(dirname "$0")/.."

module=$(go list -m)
upstream=github.com/containerd/nri
allowed_re="^${upstream//./\\.}/pkg/net(/multiplex)?\$"

# One line per package (and per test variant): the package, then its deps.
listing=$(go list -e -test -f '{{.ImportPath}} {{join .Deps " "}}' ./...)

status=0
while read -r pkg deps; do
	[[ -z "$pkg" ]] && continue
	case "$pkg" in
	"$module"/test/upstream/* | "$module"/test/thirdparty/runtime)
		for d in $deps; do
			if [[ "$d" == "$module/api" || "$d" == "$module"/api/* ]]; then
				echo "check-deps: $pkg (an upstream peer) links our API package $d" >&2
				status=1
			fi
		done
		;;
	*)
		for d in $deps; do
			if [[ "$d" == "$upstream"/* && ! "$d" =~ $allowed_re ]]; then
				echo "check-deps: $pkg depends on $d; only $upstream/pkg/net and pkg/net/multiplex are allowed" >&2
				status=1
			fi
		done
		;;
	esac
done <<<"$listing"

# The same rule, spelled as in the task, for the library packages alone:
# nothing of upstream's api, stub or adaptation may be linked into them.
patterns=()
for p in api pkg plugins; do
	[[ -d "$p" ]] && patterns+=("./$p/...")
done
if ((${#patterns[@]} > 0)); then
	if bad=$(go list -e -deps "${patterns[@]}" | grep -E "^${upstream//./\\.}/pkg/(api|stub|adaptation)(/|\$)"); then
		echo "check-deps: our packages link upstream's API packages:" >&2
		echo "$bad" | sed 's/^/    /' >&2
		status=1
	fi
fi

upstream_go=$(go list -m -f '{{.GoVersion}}' "$upstream")
while IFS='|' read -r mod version gover; do
	[[ -z "$gover" ]] && continue
	if [[ "$(printf '%s\n%s\n' "$upstream_go" "$gover" | sort -V | tail -n1)" != "$upstream_go" ]]; then
		echo "check-deps: $mod${version:+ $version} needs go $gover; upstream $upstream needs only go $upstream_go" >&2
		status=1
	fi
done < <(go list -m -f '{{.Path}}|{{.Version}}|{{.GoVersion}}' all)

if ((status == 0)); then
	echo "check-deps: no package links both our API and upstream's; nothing needs a newer go than upstream's $upstream_go"
fi
exit "$status"
