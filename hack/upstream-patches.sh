#!/usr/bin/env bash
# upstream-patches.sh [check | tree | regen DIR | export DIR FROM TO NAME]
#
# The pull requests of docs/upstream-plan.md as patches against upstream
# containerd/nri's own tree (upstream-patches/, README.md there).
#
#   check (the default, `make upstream-patches`): copies upstream's tree
#     from the module cache to $OUT/tree (git-initialised, writable),
#     checks that the generators reproduce upstream's pkg/api byte for
#     byte, then applies the patches of upstream-patches/series in order.
#     After each: regenerates pkg/api from the patched api.proto, go build
#     ./..., go vet ./..., upstream's whole test suite (go test ./...),
#     then the patch's own tests by name, verbosely. It prints each
#     patch's size, hand-written and generated apart, writes the sizes to
#     docs/results/upstream-patches.txt (quoted by the documents through
#     hack/figures) and the full diff with context, generated files
#     included, for reviewers, to $OUT/NAME.diff.
#   tree: only the patched tree, $OUT/tree, as check leaves it (the
#     patches applied and pkg/api regenerated, one commit each), without
#     building or testing it and without touching docs/results: what make
#     e2e-containerd's part U builds containerd and its plugin on when
#     check has not left a tree.
#   regen DIR: regenerates pkg/api in an upstream tree DIR (for editing a
#     patch in a scratch copy).
#   export DIR FROM TO NAME: writes upstream-patches/NAME.patch from the
#     commits FROM..TO of DIR: without context lines and without the
#     generated files (the check regenerates them), so that the repository
#     holds no upstream line but the few a patch replaces.
#
# GO_TEST_FLAGS (default: -race -count=1 -timeout 20m) go to go test.
set -euo pipefail

cd "$(dirname "$0")/.."
root=$PWD

GO=${GO:-go}
BUF=${BUF:-$root/.bin/buf}
OUT=${OUT:-$root/_output/upstream-patches}
GO_TEST_FLAGS=${GO_TEST_FLAGS:--race -count=1 -timeout 20m}
patches=$root/upstream-patches
upstream=github.com/containerd/nri
version=$($GO list -m -f '{{.Version}}' "$upstream")

# Generated files of upstream's pkg/api: everything build-proto writes.
generated='^pkg/api/(.*\.pb\.go|owners_generated\.go|strip\.go)$'

log() { printf 'upstream-patches: %s\n' "$*"; }

# tools builds the generators into $OUT/bin from upstream's tree DIR: the
# ones upstream's go.mod pins as tools (protoc-gen-go, protoc-gen-go-ttrpc,
# protoc-gen-go-plugin) and its own tools/protoc-gen-{strip,owners}.
tools() {
	local dir=$1 bin=$OUT/bin
	mkdir -p "$bin"
	(
		cd "$dir"
		$GO build -o "$bin/protoc-gen-go" google.golang.org/protobuf/cmd/protoc-gen-go
		$GO build -o "$bin/protoc-gen-go-ttrpc" github.com/containerd/ttrpc/cmd/protoc-gen-go-ttrpc
		$GO build -o "$bin/protoc-gen-go-plugin" github.com/knqyf263/go-plugin/cmd/protoc-gen-go-plugin
		$GO build -C tools/protoc-gen-strip -o "$bin/protoc-gen-strip" .
		$GO build -C tools/protoc-gen-owners -o "$bin/protoc-gen-owners" .
	)
}

# regen runs the generators on DIR's pkg/api/api.proto as upstream's
# build-proto does, through buf instead of protoc. buf hands plugins no
# compiler version, so their headers would read "protoc (unknown)"; each
# file keeps the version line it had (upstream's protoc v3.20.1).
regen() {
	local dir=$1 f line
	[[ -x $OUT/bin/protoc-gen-go ]] || tools "$dir"
	declare -A had
	for f in "$dir"/pkg/api/*.pb.go "$dir"/pkg/api/owners_generated.go "$dir"/pkg/api/strip.go; do
		line=$(grep -m1 -E '^// 	protoc +v' "$f" || true)
		had[$f]=$line
	done
	(cd "$dir" && PATH="$OUT/bin:$PATH" "$BUF" generate --template "$patches/buf.gen.yaml" --path pkg/api/api.proto .)
	sed -i '1s;^;//go:build !wasip1\n\n;' "$dir/pkg/api/api_ttrpc.pb.go"
	for f in "${!had[@]}"; do
		line=${had[$f]}
		[[ -n $line && -f $f ]] || continue
		LINE=$line perl -pi -e 's/^\/\/ \tprotoc +\(unknown\)$/$ENV{LINE}/' "$f"
	done
}

# sizes NAME: added and removed lines of HEAD~1..HEAD: hand-written code
# (api.proto included), hand-written tests and generated files apart.
sizes() {
	local name=$1
	git diff --numstat HEAD~1 HEAD | awk -v name="$name" -v gen="$generated" '
		$3 ~ gen { ga += $1; gr += $2; next }
		$3 ~ /_test\.go$/ { ta += $1; tr += $2; next }
		{ ca += $1; cr += $2 }
		END {
			printf "%s.code.added %d\n%s.code.removed %d\n", name, ca, name, cr
			printf "%s.tests.added %d\n%s.tests.removed %d\n", name, ta, name, tr
			printf "%s.generated.added %d\n%s.generated.removed %d\n", name, ga, name, gr
		}'
}

# timed LABEL CMD...: runs CMD, prints how long it took, fails with it.
timed() {
	local label=$1 start end
	shift
	start=$(date +%s)
	"$@"
	end=$(date +%s)
	log "$label: $((end - start)) s"
	secs[$label]=$((end - start))
}

# check [tree]: with "tree", only applies the patches (see the usage).
check() {
	local only_tree=${1:-} updir tree name pattern pkgs
	$GO mod download "$upstream@$version"
	updir=$($GO list -m -f '{{.Dir}}' "$upstream")
	tree=$OUT/tree
	rm -rf "$OUT"
	mkdir -p "$OUT"
	cp -r "$updir" "$tree"
	chmod -R u+w "$tree"
	cd "$tree"
	git init -q
	git -c user.name=upstream -c user.email=upstream@localhost add -A
	git -c user.name=upstream -c user.email=upstream@localhost commit -qm "containerd/nri $version"

	log "generators reproduce upstream $version's pkg/api"
	regen "$tree"
	if ! git diff --exit-code --stat; then
		echo "upstream-patches: the generators do not reproduce upstream's pkg/api" >&2
		exit 1
	fi

	declare -gA secs
	results=$OUT/sizes.txt
	times=$OUT/times.txt
	{
		echo "# make upstream-patches: rewritten by every run, read by hack/figures; do not edit"
		echo "reproduced-by make upstream-patches"
		echo "upstream $version"
	} >"$results"
	echo "# seconds on $(nproc) cores, $(date -u +%FT%TZ)" >"$times"
	while read -r name pattern pkgs; do
		[[ -z $name || $name == \#* ]] && continue
		log "$name: applying"
		git apply --unidiff-zero "$patches/$name.patch"
		add_headers "$patches/$name.patch"
		regen "$tree"
		git add -A
		git -c user.name=patches -c user.email=patches@localhost commit -qm "$name"
		[[ -z $only_tree ]] || continue
		timed "$name.build" $GO build ./...
		timed "$name.vet" $GO vet ./...
		# shellcheck disable=SC2086 # GO_TEST_FLAGS holds several flags
		timed "$name.suite" $GO test $GO_TEST_FLAGS ./...
		# shellcheck disable=SC2086
		$GO test $GO_TEST_FLAGS -v -run "$pattern" $pkgs >"$OUT/$name.tests.log"
		if ! grep -q -- '^--- PASS' "$OUT/$name.tests.log"; then
			echo "upstream-patches: $name: no test matches $pattern in $pkgs" >&2
			exit 1
		fi
		grep -E -- '^--- (PASS|FAIL|SKIP)' "$OUT/$name.tests.log" | sed "s/^/upstream-patches: $name: /"
		git diff HEAD~1 HEAD >"$OUT/$name.diff"
		sizes "$name" | tee -a "$results" | sed "s/^/upstream-patches: /"
		echo "$name.build ${secs[$name.build]} $name.vet ${secs[$name.vet]} $name.suite ${secs[$name.suite]}" >>"$times"
	done <"$patches/series"
	# What the tree was made from (test/realcontainerd/patched.sh reuses a
	# tree only while this matches the patches).
	(cd "$patches" && sha256sum series ./*.patch buf.gen.yaml) >"$OUT/patches.sum"
	cd "$root"
	if [[ -n $only_tree ]]; then
		log "patched tree: $tree"
		return
	fi
	cp "$results" docs/results/upstream-patches.txt
	log "full diffs for reviewers: $OUT/*.diff; times: $times"
}

# add_headers PATCH: each Go file PATCH creates gets the licence header
# every Go file of upstream's tree starts with, copied from the tree
# (pkg/adaptation/adaptation.go's first comment): the patches hold only what
# we wrote, and a file upstream merges carries its header.
add_headers() {
	local f header
	header=$(sed -n '1,/^\*\/$/p' pkg/adaptation/adaptation.go)
	[[ $header == "/*"* ]] || { echo "upstream-patches: no licence header in pkg/adaptation/adaptation.go" >&2; exit 1; }
	while read -r f; do
		[[ $f == *.go ]] && ! head -1 "$f" | grep -q '^/\*' || continue
		{ printf '%s\n\n' "$header"; cat "$f"; } >"$f.tmp" && mv "$f.tmp" "$f"
	done < <(awk '/^--- \/dev\/null$/ { getline; sub(/^\+\+\+ b\//, ""); print }' "$1")
}

# export_patch drops the generated files, the licence header of each Go file
# the patch creates (add_headers puts it back) and, from each hunk header,
# the line of upstream's code git quotes after it (git apply ignores it).
export_patch() {
	local dir=$1 from=$2 to=$3 name=$4 gen=()
	mapfile -t gen < <(git -C "$dir" diff --name-only "$from" "$to" | grep -E "$generated" || true)
	git -C "$dir" diff -U0 --no-color "$from" "$to" -- . "${gen[@]/#/:!}" |
		sed -E 's/^(@@ [^@]+ @@).*/\1/' | strip_headers >"$patches/$name.patch"
}

# strip_headers drops, from a new file's hunk, the licence comment it starts
# with and the blank line after it, and counts the hunk's lines again.
strip_headers() {
	awk '
	function flush() { if (n) { printf "@@ -0,0 +1,%d @@\n", total - cut; for (i = 1; i <= n; i++) print buf[i] } n = 0 }
	/^@@ -0,0 \+1,[0-9]+ @@$/ { flush(); split($0, a, /[,@ ]+/); total = a[5]; cut = 0; inhdr = 0; first = 1; n = 0; hunk = 1; next }
	hunk && first && $0 == "+/*" { inhdr = 1; first = 0; cut++; next }
	hunk && inhdr { cut++; if ($0 == "+*/") { inhdr = 0; skipblank = 1 }; next }
	hunk && skipblank && $0 == "+" { cut++; skipblank = 0; next }
	hunk && /^\+/ { first = 0; skipblank = 0; buf[++n] = $0; next }
	{ flush(); hunk = 0; print }
	END { flush() }'
}

case ${1:-check} in
check) check ;;
tree) check tree ;;
regen) regen "$(realpath "$2")" ;;
export) export_patch "$(realpath "$2")" "$3" "$4" "$5" ;;
*)
	echo "usage: $0 [check | tree | regen DIR | export DIR FROM TO NAME]" >&2
	exit 2
	;;
esac
