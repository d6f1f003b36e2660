#!/usr/bin/env bash
# moby's own NRI integration tests (integration/daemon/nri of moby
# v2.0.0-beta.24: env and mount adjustments, refused adjustments, NRI turned
# on, reconfigured and off by a config reload with a pre-installed plugin),
# run unchanged against dockerd built stock and built on our NRI
# (build-dockerd.sh compiles the test binary both ways: in the "ours" build
# the tests' plugin, on upstream's pkg/stub API, is our stand-in's stub too,
# and TestNRIReload's `go build` of its plugin runs in our workspace).
#
# What moby's harness needs, given here: a "main" daemon (DOCKER_HOST) with
# its frozen images (busybox:latest and the rest, all tags of our one-layer
# busybox: nothing is pulled), DEST for the daemons each test starts,
# `dockerd` in PATH (the flavour under test). The tests' daemons run with
# moby's embedded containerd (TEST_INTEGRATION_CONTAINERD_EMBEDDED=1, which
# has no NRI of its own), in a network namespace of ours (their docker0 is
# made there), without the userland proxy (DOCKER_USERLANDPROXY=false, the
# harness's own switch: docker-proxy is not built), TMPDIR under $R (their
# sockets, exec roots and temp dirs).
# Prints each test's result stock and ours side by side, one check per
# test that both agree, and "N passed, N failed".
#
# Usage: [R=/tmp/nrdk-ish] [KEEP=1] test/realdocker/nri-tests.sh
set -euo pipefail

R=${R:-/tmp/nrdk-ish}
REPO=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=lib.sh
. "$REPO/test/realdocker/lib.sh"

step "packages, runc, containerd, dockerd (stock and ours) and the test binaries"
install_packages
install_stock_containerd
install_runc
R=$R "$REPO/test/realdocker/build-dockerd.sh" >"$R/build.log" 2>&1 || { tail -30 "$R/build.log"; exit 1; }
grep '^PASS' "$R/build.log"
src=$(sed -n 's/^moby source: \([^ ]*\) .*/\1/p' "$R/build.log")
[ -d "$src/integration/daemon/nri" ] || { echo "FAIL: no moby source in $R/build.log"; exit 1; }
build_busybox
echo '{}' >"$R/daemon.json"

MT=$R/mt
# The tests' daemons put containers under the cgroup /docker (moby's
# default, no option in the tests): removed at the end if this run made it.
had_docker_cgroup=0
compgen -G "/sys/fs/cgroup/*/docker" >/dev/null && had_docker_cgroup=1
cleanup_tests() {
	set +e
	local p
	# Daemons a killed test binary left behind: theirs are under $MT.
	for p in $(pgrep -f -- "dockerd .*--data-root $MT/" || true); do kill -TERM "$p" 2>/dev/null; done
	for p in $(pgrep -f -- "dockerd .*--data-root $MT/" || true); do
		wait_for 10 bash -c "! kill -0 $p 2>/dev/null" || kill -KILL "$p" 2>/dev/null
	done
	for p in $(pgrep -f -- "containerd-shim[^ ]* .*-address $MT/" || true); do kill -KILL "$p" 2>/dev/null; done
	cleanup_docker "$MT"
	if [ "$had_docker_cgroup" = 0 ]; then
		for p in /sys/fs/cgroup/*/docker; do [ -d "$p" ] && find "$p" -depth -type d -exec rmdir {} \; 2>/dev/null; done
	fi
	[ "$KEEP" = 1 ] || rm -rf "$MT"/dest-* "$MT/tmp"
}
trap cleanup_tests EXIT

# run_flavour NAME GOWORK: the main daemon of that flavour, then the tests.
run_flavour() {
	local name=$1 work=$2 tag
		step "moby's NRI tests on dockerd $name"
	mkdir -p "$MT/tmp" "$MT/dest-$name"
	: >"$R/dockerd.log"
	start_backend
	start_dockerd "$R/$name/bin/dockerd"
	docker load -q -i "$IMG/busybox.tar" >/dev/null
	for tag in busybox:glibc hello-world:frozen debian:trixie-slim hello-world:amd64 hello-world:arm64; do
		docker tag busybox:latest "$tag"
	done
	# PATH: the flavour's dockerd first, then runc v1.5.3, the shim, go.
	(cd "$src/integration/daemon/nri" &&
		unshare --net -- bash -c 'ip link set lo up && exec "$@"' nri-tests \
			env PATH="$R/$name/bin:$PATH" GOWORK="$work" GOFLAGS= TMPDIR="$MT/tmp" DEST="$MT/dest-$name" \
			TEST_INTEGRATION_CONTAINERD_EMBEDDED=1 DOCKER_USERLANDPROXY=false DOCKER_HOST="$DOCKER_HOST" \
			timeout -k 10 600 "$R/$name/bin/nri.test" -test.v -test.timeout 9m) >"$R/nri-tests-$name.log" 2>&1 || true
	stop_dockerd
	cp "$R/dockerd.log" "$R/dockerd-main-$name.log"
	# Which NRI the tests' daemons ran: ours says so when it starts.
	local logs ourbanner upbanner
	mapfile -t logs < <(find "$MT/dest-$name" -name docker.log 2>/dev/null | sort)
	ourbanner=$(cat "${logs[@]}" /dev/null | grep -c 'NRI runtime interface created for docker .*(NRI v' || true)
	upbanner=$(cat "${logs[@]}" /dev/null | grep -c 'msg="\(NRI: \)\{0,1\}runtime interface created"' || true)
	if [ "$name" = ours ]; then
		expect "ours: the tests' daemons (${#logs[@]}) ran our NRI ($ourbanner started it)" [ "$ourbanner" -ge 4 ]
	else
		expect "stock: the tests' daemons (${#logs[@]}) ran upstream's NRI ($upbanner started it, none ours)" \
			bash -c "[ $ourbanner = 0 ] && [ $upbanner -ge 4 ]"
	fi
	cleanup_tests
}
run_flavour stock off
run_flavour ours "$R/ours/go.work"

# results FLAVOUR: "TestName RESULT" for every test and subtest.
results() { sed -n 's/^ *--- \(PASS\|FAIL\|SKIP\): \([^ ]*\) .*/\2 \1/p' "$R/nri-tests-$1.log" | sort; }
results stock >"$R/nri-results-stock"
results ours >"$R/nri-results-ours"
printf '%-60s %-6s %-6s\n' "moby integration/daemon/nri" stock ours
while read -r t; do
	s=$(awk -v t="$t" '$1 == t {print $2}' "$R/nri-results-stock")
	o=$(awk -v t="$t" '$1 == t {print $2}' "$R/nri-results-ours")
	printf '%-60s %-6s %-6s\n' "$t" "${s:--}" "${o:--}"
done < <(cat "$R/nri-results-stock" "$R/nri-results-ours" | cut -d' ' -f1 | sort -u)
for f in stock ours; do
	n=$(grep -c ' PASS$' "$R/nri-results-$f" || true)
	m=$(grep -c ' FAIL$' "$R/nri-results-$f" || true)
	echo "$f: $n passed, $m failed ($(tail -1 "$R/nri-tests-$f.log"))"
	result "moby-$f.passed" "$n"
	result "moby-$f.failed" "$m"
	expect "$f: moby's NRI tests ran (at least the 4 top-level tests)" \
		[ "$(grep -cE '^TestNRI[A-Za-z]* ' "$R/nri-results-$f")" -ge 4 ]
done
while read -r t; do
	s=$(awk -v t="$t" '$1 == t {print $2}' "$R/nri-results-stock")
	o=$(awk -v t="$t" '$1 == t {print $2}' "$R/nri-results-ours")
	expect "$t: the same result stock ($s) and on ours ($o)" [ "$s" = "$o" ]
done < <(cat "$R/nri-results-stock" "$R/nri-results-ours" | cut -d' ' -f1 | sort -u)
for f in stock ours; do
	expect "$f: every one of moby's NRI tests passed" bash -c "! grep -q ' FAIL\$' '$R/nri-results-$f' && tail -1 '$R/nri-tests-$f.log' | grep -qx PASS"
done
[ "$FAILED" = 0 ] || echo "== logs in $R: nri-tests-{stock,ours}.log, dockerd-main-*.log; the tests' daemons under $MT/dest-* (KEEP=1)"
summary
