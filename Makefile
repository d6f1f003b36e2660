# nri-handover: generate, check, test, bench, demo.
#
#   make test       everything CI runs: vet (and gofmt), verify-generate (and its negative
#                   check), check-wire, check-deps, the Go tests (with the race
#                   detector), upstream's own test suites and third-party plugins against this module
#   make demo       build everything and show a plugin rollout with and without handover
#   make generate   regenerate api/ from proto/
GO      ?= go
BIN     := $(CURDIR)/.bin

# buf lives in its own module file (hack/tools/buf.mod) so that its large
# dependency tree (a pre-release google.golang.org/protobuf, newer grpc, ...)
# never reaches the requirements of our library module and its importers.
BUF_MODFILE := hack/tools/buf.mod
BUF         := $(BIN)/buf
RPCCHECK    := $(BIN)/rpccheck

# protoc-gen-go-vtproto v0.4.0 (upstream's vtprotobuf generator) has its own
# module file too: go.mod's graph holds a newer vtprotobuf, whose output
# would import its runtime (hack/tools/vtproto.mod says more).
VTPROTO_MODFILE := hack/tools/vtproto.mod

# The race detector roughly doubles the test time on CI's two cores; the
# suite stays far below CI's budget with it, and the adaptation and the
# handover are concurrent code, so it is on by default. RACE= turns it off.
RACE         ?= -race
TEST_TIMEOUT ?= 10m
GO_TEST      ?= $(GO) test $(RACE) -timeout $(TEST_TIMEOUT)

.PHONY: all build generate verify-generate check-generate-negative check-wire check-deps test test-go test-unit \
	test-integration vet bench soak fuzz demo e2e-containerd e2e-containerd-patched e2e-docker e2e-kubernetes check-standin containerd-on-ours crio-on-ours e2e-surge e2e-identity e2e-restart upstream-suite upstream-patches patterns tools clean FORCE

all: build

build:
	$(GO) build ./...

tools:
	@mkdir -p $(BIN)
	$(GO) build -o $(BIN)/protoc-gen-go google.golang.org/protobuf/cmd/protoc-gen-go
	$(GO) build -o $(BIN)/protoc-gen-go-ttrpc github.com/containerd/ttrpc/cmd/protoc-gen-go-ttrpc
	$(GO) build -modfile=$(VTPROTO_MODFILE) -o $(BIN)/protoc-gen-go-vtproto github.com/planetscale/vtprotobuf/cmd/protoc-gen-go-vtproto

# generate rewrites api/*.pb.go from proto/ with pinned tools only: buf
# (hack/tools/buf.mod) compiles the proto and runs protoc-gen-go and
# protoc-gen-go-ttrpc (go.mod's tools) and protoc-gen-go-vtproto
# (hack/tools/vtproto.mod) as proto/buf.gen.yaml says. No system
# protoc, so the output is the same on every machine.
generate: tools $(BUF)
	$(BUF) generate proto --template proto/buf.gen.yaml

# verify-generate fails when api/*.pb.go is not what proto/ generates (it
# generates into a temporary directory and compares); check-generate-negative
# proves that it does on copies with a changed proto or generated file.
verify-generate: tools $(BUF)
	@BUF=$(BUF) hack/verify-generate.sh

check-generate-negative: tools $(BUF)
	BUF=$(BUF) hack/check-generate-negative.sh

# vet includes the stdversion analyzer: with go.mod's go 1.24.0 (upstream's)
# it rejects standard library API newer than Go 1.24 (sync.WaitGroup.Go,
# testing/synctest, ...), which the compiler alone lets through. It also
# fails on any committed Go file gofmt would change.
vet:
	$(GO) vet ./...
	@unformatted=$$(git ls-files -z '*.go' | xargs -0 gofmt -l); \
	if [ -n "$$unformatted" ]; then echo "gofmt -w these files:"; echo "$$unformatted"; exit 1; fi

# check-wire: buf lint + buf breaking (proto/buf.yaml) against upstream
# containerd/nri's pkg/api/api.proto at the version go.mod pins, our own RPC
# signature check (hack/rpccheck) in place of the two buf rules we switch off,
# then a negative run proving wire-breaking edits fail the gate.
check-wire: $(BUF) $(RPCCHECK)
	BUF=$(BUF) RPCCHECK=$(RPCCHECK) hack/check-wire.sh
	BUF=$(BUF) RPCCHECK=$(RPCCHECK) hack/check-wire-negative.sh

$(BUF): $(BUF_MODFILE) hack/tools/buf.sum
	@mkdir -p $(BIN)
	$(GO) build -modfile=$(BUF_MODFILE) -o $@ github.com/bufbuild/buf/cmd/buf

# Cheap to rebuild, and Go's cache decides whether anything changed.
$(RPCCHECK): FORCE
	@mkdir -p $(BIN)
	$(GO) build -o $@ ./hack/rpccheck

# check-deps: no binary may link both our api and upstream's pkg/api.
check-deps:
	hack/check-deps.sh

test: vet verify-generate check-generate-negative check-wire check-deps check-standin model test-go upstream-suite check-deploy upstream-patches check-results

# check-results warns of each docs/results file older than the last change to
# the code it measures (hack/figures -stale); it never fails the build.
.PHONY: check-results
check-results:
	$(GO) run ./hack/figures -stale

# test-go includes test/thirdparty: third-party NRI clients (upstream's sample
# plugins, containers/nri-plugins v0.14.0's sgx-epc and memory-qos) built
# unchanged from ../shared/third_party and the module proxy, on upstream and
# on this module, in a 2x2 differential (test/thirdparty/README.md); it skips
# with a message without ../shared/third_party. About 50 s warm on 2 cores.
test-go:
	$(GO_TEST) ./...

test-unit:
	$(GO_TEST) ./api/... ./pkg/... ./hack/...

test-integration:
	$(GO_TEST) ./test/...

# upstream-suite runs upstream containerd/nri's own test suites (the version
# go.mod pins, from the module cache: pkg/adaptation, pkg/api, pkg/net,
# pkg/net/multiplex, pkg/runtime-tools/generate) against this module with the
# import paths rewritten: the drop-in check. The script copies each into a
# temporary, git-ignored package beside a copy of ours and removes it; see
# hack/upstream-suite.sh for its table of suites and what is excluded and why.
# UPSTREAM_SUITES picks suites, UPSTREAM_SUITE_FLAGS go to go test, e.g.
# UPSTREAM_SUITES=adaptation UPSTREAM_SUITE_FLAGS='-run TestPluginFailurePolicy -v'.
UPSTREAM_SUITE_FLAGS ?=
upstream-suite:
	GO="$(GO)" GO_TEST_FLAGS="$(RACE) -count=1 -timeout $(TEST_TIMEOUT)" hack/upstream-suite.sh $(UPSTREAM_SUITE_FLAGS)

# upstream-patches applies upstream-patches/ (the pull requests of
# docs/upstream-plan.md) to a copy of upstream containerd/nri's tree from
# the module cache, in _output/upstream-patches/tree, regenerating its
# pkg/api with upstream's generator versions driven by our pinned buf, and
# after each patch builds, vets, runs upstream's whole test suite and the
# patch's own tests; a patch that no longer applies or a failing suite
# fails it. It prints each patch's size (hand-written and generated apart)
# into docs/results/upstream-patches.txt and writes the full diffs for
# reviewers to _output/upstream-patches/. 2-6 minutes on 2 cores, most of it
# upstream's suite (16-62 s a patch, by build cache and load).
upstream-patches: $(BUF)
	GO="$(GO)" BUF=$(BUF) GO_TEST_FLAGS="$(RACE) -count=1 -timeout $(TEST_TIMEOUT)" hack/upstream-patches.sh

# bench compares our adaptation with upstream v0.12.5 side by side (event
# path at 1/4/16 plugins and against a bare ttrpc floor, BlockPluginSync, idle
# plugins' memory, handover commit and plugin synchronization at 1 000/10 000/
# 50 000 containers, a takeover while BlockPluginSync is never idle,
# notification fan-out, pkg/adaptation micro-benchmarks),
# in rounds alternating the implementations, and writes docs/benchmarks.md
# (test/bench/README.md). About 7 minutes on 2 cores. BENCH_FLAGS: e.g.
# -rounds 2 -sizes 1000 -skip-micro -out /tmp/b.md for a quick look.
BENCH_FLAGS ?=
bench:
	$(GO) run ./test/bench $(BENCH_FLAGS)

# soak runs the exactly-once suite (test/handover, label exactly-once) for
# SOAK_DURATION (half with the default policy, half with a standby grace):
# handovers one after the other, kill -9 injected at random steps (seed
# printed; NRI_HANDOVER_SEED replays a run), killed instances replaced by new
# ones. It prints the counts of each half (events, owned, duplicates, lost
# in flight, absent inside the documented window, losses outside it) and
# fails on any duplicate or loss outside the window (go test runs in the
# package's directory so that the counts are shown). Every run perturbs the
# schedule at each boundary of registration and handover from its seed
# (WithScheduleHook); SOAK_SEEDS seeds per policy share the duration. make
# test runs the same suite by count (NRI_SOAK_HANDOVERS, 20 handovers) under
# 2 seeds per policy.
SOAK_DURATION ?= 10m
SOAK_TIMEOUT  ?= 60m
SOAK_SEEDS    ?= 8
soak: explore-soak
	cd test/handover && NRI_SOAK_DURATION=$(SOAK_DURATION) NRI_PERTURB_SEEDS=$(SOAK_SEEDS) $(GO) test $(RACE) -count=1 -timeout $(SOAK_TIMEOUT) \
		-args -ginkgo.label-filter=exactly-once -ginkgo.no-color

# explore-soak runs the exploration of the real code's interleavings
# (pkg/adaptation/explore_test.go) deeper than make test does: every
# configuration, two forced orders, EXPLORE_BUDGET schedules each.
# explore-power proves that it finds each of issue 30's findings, and each
# of issue 39's (1 to 7), with its fix reverted (-tags nribugs,
# bugs_nribugs.go), in a schedule that passes with the fix in place, and
# writes how many schedules each took to docs/results/explore-power.txt.
EXPLORE_BUDGET ?= 300
.PHONY: explore-soak explore-power
explore-soak:
	NRI_EXPLORE_DEPTH=2 NRI_EXPLORE_BUDGET=$(EXPLORE_BUDGET) $(GO) test $(RACE) -count=1 -timeout $(SOAK_TIMEOUT) -run '^TestExplore$$' -v ./pkg/adaptation

explore-power:
	NRI_EXPLORE_POWER_OUT=$(CURDIR)/docs/results/explore-power.txt NRI_EXPLORE_COMMIT=$$(git rev-parse --short HEAD) \
		$(GO) test -tags nribugs -count=1 -timeout $(SOAK_TIMEOUT) -run '^TestExploreFindsRevertedFixes$$' -v ./pkg/adaptation

# demo builds everything and rolls the example plugin (examples/annotator) out
# and back on an in-memory runtime that keeps creating containers: first as
# upstream NRI behaves (both instances get every event), then with handover,
# killing a successor mid-handover and the active instance while a standby
# waits. It prints the verdict and the path of an SVG timeline; DEMO_FLAGS
# go to the demo (-rate, -duration, -handovers, -svg; -h lists them).
DEMO_FLAGS ?=
demo: build
	$(GO) run ./cmd/handover-demo $(DEMO_FLAGS)

# patterns: what the zero-downtime patterns of containerd/nri#167 (rubber
# stamps at a lower index, a catch-up in Synchronize) do and cannot do, measured
# on upstream v0.12.5 alone (test/upstream/patterns); the table it prints is
# the one in docs/zero-downtime-on-upstream.md. About a second, warm.
patterns:
	$(GO) run ./test/upstream/patterns -results $(CURDIR)/docs/results/patterns.txt 2>/dev/null

# check-standin: the stand-in module containerd-nri (module
# github.com/containerd/nri, through which runtimes built for upstream NRI
# build unchanged on ours) matches our packages and passes its tests, and its
# go.mod has our go directive and our versions of every module both require
# (hack/check-standin-mod.sh; the negative script proves it fails on drifted
# copies), so that it needs no newer Go than ours and builds from our cache.
# hack/standin-api fails when it lacks a package, exported identifier, field
# or method of upstream's module (but the exceptions it documents); its
# negative script proves it does on copies with one taken away.
check-standin:
	$(GO) run ./hack/standin-gen -check
	$(GO) run ./hack/standin-api
	hack/check-standin-api-negative.sh
	hack/check-standin-mod.sh
	hack/check-standin-mod-negative.sh
	cd containerd-nri && GOWORK=off $(GO_TEST) ./...

# containerd-on-ours builds containerd v2.4.2, unchanged, on this module
# (test/realcontainerd/build-containerd.sh); a few minutes cold.
containerd-on-ours:
	test/realcontainerd/build-containerd.sh

# crio-on-ours compiles and vets CRI-O v1.34.0's NRI integration
# (internal/nri, internal/config/nri), unchanged, on this module through the
# stand-in (hack/check-crio.sh; docs/runtime-integration.md says what it
# covers). Like containerd-on-ours it is not part of make test: warm 8 s,
# but 3 minutes with a cold build cache and more with a cold module cache.
crio-on-ours:
	hack/check-crio.sh

# e2e-surge: containerd built on this module (containerd-on-ours) and the
# sample plugin (examples/annotator) with real pods (issue 11, part C): surge,
# rollback, refused restart, kill -9 mid-handover, containerd restart,
# upstream plugins beside.
# Needs root.
e2e-surge:
	test/realcontainerd/surge.sh

# e2e-identity: on containerd built on this module, the sample plugin in a
# pod created through crictl rolls out to a newer pod of its workload, and
# impostors are refused (issue 18, part D). Needs root.
e2e-identity:
	test/realcontainerd/identity.sh

# e2e-restart: containerd restarted in the middle of a rollout of the sample
# plugin (v1 active, v2 a candidate), onto stock containerd v2.4.2 (upstream
# NRI) and back onto containerd built on this module: what each instance
# sees (issue 21). Needs root.
e2e-restart:
	test/realcontainerd/restart.sh

# e2e-containerd runs the real-containerd suites (test/realcontainerd/e2e.sh):
# pkg/stub plugins against stock containerd v2.4.2 (run.sh, part A) and
# containerd built unchanged on this module (surge.sh, part C; vendor.sh,
# part V; identity.sh, part D: impostors refused, the pod rollout taken
# over; restart.sh, part R: containerd restarted mid-rollout onto stock
# v2.4.2 and back, two instances connected; stops.sh, part S: graceful stops
# holding BlockPluginSync while instances take over, a legacy plugin counting
# StopContainer; nriplugins.sh, part N: containers/nri-plugins' sgx-epc and
# memory-qos pre-installed in stock containerd and in ours; patched.sh, part
# U: containerd built on upstream v0.12.5 with the patches a-d, not on this
# module, and a surge rollout of a plugin on the patched stub). Needs root,
# Debian's packages and the Go module proxy (skips with a message otherwise);
# about 9 minutes cold, 2.5 warm; CI runs it after make test.
e2e-containerd:
	test/realcontainerd/e2e.sh

# e2e-containerd-patched: part U of e2e-containerd alone (the surge rollout
# on containerd built on upstream v0.12.5 with upstream-patches/ applied,
# test/realcontainerd/patched.sh); about 20 s warm, plus containerd's build
# (half a minute warm). Needs root.
e2e-containerd-patched:
	PARTS=U test/realcontainerd/e2e.sh

# e2e-docker (issue 20): a second runtime, Docker Engine: dockerd from moby
# v2.0.0-beta.24 built unchanged on this module (and stock, for moby's own
# NRI tests), on containerd v2.4.2, `docker run` containers in a network
# namespace of the test's (test/realdocker/run.sh). Needs root (skips with a
# message otherwise); about 12.5 minutes cold, 1 warm; CI runs it after
# make e2e-containerd.
e2e-docker:
	test/realdocker/run.sh

# e2e-kubernetes (issue 19): a real single-node cluster (k8s v1.37.2 built
# from test/realkube/k8s, a module of its own, cached) over containerd built on
# our NRI, with deploy/daemonset.yaml applied, rolled out, rolled back and
# broken (kill -9, candidate deleted) under a pod-creating load that keeps
# BlockPluginSync held (LOAD_PAR=3 workers side by side and a stopper whose
# pods stop for STOP_GRACE=10 s), each takeover checked to go from
# synchronized to active within TAKEOVER_BOUND=8 s and the gaps printed, then
# the same rollout on stock containerd as the control (test/realkube/run.sh);
# then (s5, issue 33) upstream's ulimit-adjuster, unmodified, as a DaemonSet
# annotated nri.containerd.io/handover: workload, rolled forward with a kill -9
# of the newer instance and back, and (cu) the same without the annotation.
# SCENARIOS="s1 s5" runs only those. Needs root; skips otherwise. CI runs it after make e2e-containerd.
e2e-kubernetes:
	timeout -k 60 2700 test/realkube/run.sh

# check-deploy: deploy/daemonset.yaml, or another plugin's DaemonSet with
# MANIFEST=path (relative to this directory, or absolute), decodes strictly
# into k8s.io/api types and has every property a surging rollout needs
# (deploy/daemonset_test.go): of a plugin built with stub.WithHandover, or,
# for a manifest with the nri.containerd.io/handover pod annotation, of a
# plugin written for upstream. Without MANIFEST it also checks the annotated
# manifest deploy/README.md gives (deploy/testdata/ulimit-adjuster.yaml).
# deploy/ is a module of its own (like hack/tools/buf.mod for buf) so that
# k8s.io/api never reaches the library's requirements; it uses the library
# from this checkout (replace ../), so after a dependency change of pkg/stub
# or api run `cd deploy && GOWORK=off go mod tidy`.
MANIFEST ?=
.PHONY: check-deploy
check-deploy:
	cd deploy && MANIFEST="$(if $(MANIFEST),$(abspath $(MANIFEST)))" GOWORK=off $(GO) test ./...
ifeq ($(MANIFEST),)
	cd deploy && MANIFEST="$(abspath deploy/testdata/ulimit-adjuster.yaml)" GOWORK=off $(GO) test -count=1 -run '^TestDaemonSet$$' ./...
endif

# model checks the Promela models of the handover core, "ledger + hold"
# (hack/model/hold.pml, gate.pml, idle.pml, issue 17's legacy.pml and
# grace.pml, the workload group's workload.pml and what a successor is told,
# ledger.pml; ticket.pml, reply.pml, serve.pml for issue 39's findings 2, 6, 8) with spin: 24 configurations; then that each of the 27 broken
# variants of a model is rejected (hack/model/check.sh). Needs Debian's spin
# and gcc; about 1 minute of CPU.
.PHONY: model
model:
	hack/model/check.sh

FORCE:

clean:
	rm -rf $(BIN)

# fuzz runs each fuzz target for FUZZTIME (go test -fuzz takes one target of
# one package at a time). Their seed corpora (f.Add and testdata/fuzz/) run
# in every plain go test, so in make test. A failing input is written to the
# package's testdata/fuzz/<target>/: commit it with the fix.
FUZZTIME ?= 30s
FUZZ_TARGETS := \
	./pkg/adaptation:FuzzRegisterPlugin \
	./pkg/adaptation:FuzzMergeResults \
	./pkg/stub:FuzzSyncReassembly \
	./pkg/net/multiplex:FuzzMuxRead
fuzz:
	@set -e; for t in $(FUZZ_TARGETS); do \
		pkg=$${t%%:*}; name=$${t##*:}; \
		echo "== $$name ($$pkg, $(FUZZTIME))"; \
		$(GO) test -run '^$$' -fuzz "^$$name\$$" -fuzztime $(FUZZTIME) $$pkg; \
	done
