# coord — make targets. `make demo` and `make test` are the README's two
# commands; CI (.ci/run) runs `make test`.
export PATH := $(PATH):/usr/local/go/bin:$(HOME)/go/bin
GO ?= go
BIN := bin
# An execution count, not a duration: a duration-based -fuzztime can fail
# spuriously with "context deadline exceeded" when it expires under CPU
# contention (Go's fuzz coordinator, golang/go#75804, unfixed in 1.26).
# 50,000 runs take 2-5 s per target here.
FUZZTIME ?= 50000x
# package:Target for every fuzz target, run by `make test-long` (and on
# their seed corpora by every `go test`).
FUZZ := ./registry/format:FuzzParse ./registry/format:FuzzScannerMatchesJSONText ./registry/format:FuzzParseSeedLine ./coord:FuzzPatternsOverlap ./coord:FuzzLockCovers ./registry/format:FuzzParseLockInfo ./coord:FuzzOneLine ./coord:FuzzParseDuration ./cmd/coord/internal/hooks:FuzzPatchFiles ./cmd/coord/internal/setup:FuzzReconcile ./cmd/coord/internal/setup:FuzzCodexConfig ./cmd/coord/internal/mcpserver:FuzzToolArguments ./registry/format:FuzzSettingValue ./internal/gitrepo:FuzzParse ./internal/gitrepo:FuzzParseDiffs ./coord/plan:FuzzLoad ./internal/gitrepo:FuzzParseWorktrees ./internal/gitrepo:FuzzParseMergeTree

# The nested modules: code of this repository that the product does not
# link, kept out of the root go.mod so that it requires only what coord
# needs (docs/decisions/2026-12-06-nested-modules.md). Each has its own
# go.mod (replace github.com/rotd/coordination => the root); the root's
# ./... does not reach into them, so every target that vets or tests the
# tree runs them too, with go -C.
#   cmd/coordbench: the benchmark harness, its replay package, the floor programs
#   cmd/coord/internal/dashboard/browser: the dashboard in headless Chromium (chromedp)
MODULES := cmd/coordbench cmd/coord/internal/dashboard/browser

# The nested modules, one a line (.ci/run downloads each one's dependencies).
print-modules:
	@printf '%s\n' $(MODULES)

.PHONY: print-modules build demo demo-hub demo-land demo-many test test-long test-agents vet fmt-check unit procs conformance fuzz bench bench-plan bench-claims bench-tools bench-hook bench-compare stress install-rotd clean mcp-smoke

build:
	$(GO) build -o $(BIN)/coord ./cmd/coord

demo: build
	./scripts/demo.sh

# Two working directories sharing one project through a coord hub.
demo-hub: build
	./scripts/demo-hub.sh

demo-land: build
	./scripts/demo-land.sh

# Two clones as two machines, a hub for the claims, a git daemon serving
# a bare repository as the shared remote; two agents per machine, one
# lander, one conflict across machines sent back and fixed.
demo-many: build
	./scripts/demo-many.sh

# Where the tests make their temporary trees: a memory file system
# (/dev/shm) when the machine has one with 2 GiB free, where an fsync
# returns at once. The tests make thousands of them and none depends on
# one reaching a disk (durability is proven by injected faults and power
# cuts, docs/RELIABILITY.md); on a disk they took a third of make test's
# system time. TEST_TMPDIR= (empty) keeps $TMPDIR. Only the test
# binaries get it (go test -exec): go's own work files, the linked test
# binaries, stay where they were.
TEST_TMPDIR ?= $(shell d=/dev/shm; [ -d $$d ] && [ -w $$d ] && [ "$$(df -Pk $$d 2>/dev/null | awk 'NR==2 {print $$4}')" -ge 2097152 ] 2>/dev/null && echo $$d)
TEST_EXEC := $(if $(TEST_TMPDIR),-exec 'env TMPDIR=$(TEST_TMPDIR)')
# The default loop's flags: -trimpath keys the build cache without the
# checkout's path, so a fresh clone on a machine that has run the tests
# reuses the compiled packages (without it a new clone recompiled
# everything: 195 s instead of about 130 s beside a busy process). go
# links every test binary again on every run; -ldflags=-w leaves out the
# debugger's tables (DWARF), which takes a third off each link (cmd/coord
# under -race: 4.1 to 2.8 CPU-s). Stack traces and race reports do not
# use them. -vet=off: `make test` has run the whole of go vet first, so
# go test's own subset of it is not run again per package and pass.
TEST_FLAGS := -trimpath -ldflags=-w -vet=off $(TEST_EXEC)
# The passes without the race detector (vet, procs) build without cgo:
# a static binary, which the end-to-end tests start as coord thousands
# of times, starts with 13% less CPU than one the dynamic loader sets up
# (100 `coord ls`: 2.64 against 3.05 CPU-s). coord needs no C; -race does.
NOCGO := CGO_ENABLED=0

# The default test loop: vet, gofmt, then two passes side by side (they
# share nothing: each test makes its own temporary trees, hubs and
# ports, and no test asserts on timing). Both run with -short: storms,
# loads, the parallel lander's crash enumeration, the 3-node cluster and
# fuzzing are left to `make test-long`. Its budget is two minutes on two
# cores beside a busy process (docs/TESTING.md: how long it takes).
test: vet fmt-check
	@$(MAKE) --no-print-directory -j2 unit procs

# The long tier: every test at full size, without -race (so the
# many-process tests run too), then every fuzz target for FUZZTIME.
# CI runs it after `make test`.
test-long:
	$(GO) test $(TEST_EXEC) -count=1 -timeout 30m ./...
	@for m in $(MODULES); do echo "$(GO) -C $$m test $(TEST_EXEC) -count=1 -timeout 30m ./..."; $(GO) -C $$m test $(TEST_EXEC) -count=1 -timeout 30m ./... || exit 1; done
	@$(MAKE) --no-print-directory fuzz

vet:
	$(NOCGO) $(GO) vet -trimpath ./...
	@for m in $(MODULES); do echo "$(NOCGO) $(GO) -C $$m vet -trimpath ./..."; $(NOCGO) $(GO) -C $$m vet -trimpath ./... || exit 1; done

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

# Every package under the race detector, the fuzz targets on their seed
# corpora (go test runs those as tests). The tests that start many coord
# processes (the end-to-end scripts, worker swarms, the load scenarios,
# the conformance checks with processes) live in test files built only
# without it (//go:build !race): the detector cannot see across
# processes and only slows each. `procs` runs them.
unit:
	GORACE="atexit_sleep_ms=0 $$GORACE" $(GO) test $(TEST_FLAGS) -race -short -count=1 ./...
	@for m in $(MODULES); do echo "$(GO) -C $$m test $(TEST_FLAGS) -race -short -count=1 ./..."; GORACE="atexit_sleep_ms=0 $$GORACE" $(GO) -C $$m test $(TEST_FLAGS) -race -short -count=1 ./... || exit 1; done

# Exactly the tests `unit` does not build: every Test function of the
# test files marked //go:build !race, in their packages, without -race,
# several at once (most wait on processes). Both lists are read from
# those files, so a test joins this pass by being put in such a file
# (nothing else to keep up to date). Their log goes to a file of its own
# (mktemp: concurrent runs share nothing); the figures and any failure
# are printed.
procs:
	@files=$$(grep -rl --include='*_test.go' '^//go:build !race$$' . | grep -v $(foreach m,$(MODULES),-e '^./$(m)/')); \
	pkgs=$$(for f in $$files; do echo "$${f%/*}"; done | sort -u); \
	tests=$$(sed -n 's/^func \(Test[A-Za-z0-9_]*\)([a-z_]* \*testing\.T).*/\1/p' $$files | sort -u | paste -sd'|' -); \
	[ -n "$$tests" ] || { echo "procs: no test in a //go:build !race file"; exit 1; }; \
	log=$$(mktemp "$${TMPDIR:-/tmp}/coord-procs.XXXXXX") || exit 1; \
	$(NOCGO) $(GO) test $(TEST_FLAGS) -short -count=1 -parallel 6 -v -run "^($$tests)$$" $$pkgs >"$$log" 2>&1; s=$$?; \
	grep -aE '^(--- FAIL|ok|FAIL|backend |\s+load_test\.go)' "$$log"; \
	[ $$s = 0 ] || cat "$$log"; rm -f "$$log"; exit $$s

# The shared conformance suite against every engine, each from its own
# package: one line per engine and kind ("backend file: N passed, 0
# failed", "backend file (processes): ..."), the whole log on a failure.
conformance:
	@log=$$(mktemp "$${TMPDIR:-/tmp}/coord-conformance.XXXXXX") || exit 1; \
	$(GO) test -count=1 -v -run '^TestConformance(Processes)?$$' ./registry/file ./registry/nats >"$$log" 2>&1; s=$$?; \
	grep -aE '^backend ' "$$log"; \
	[ $$s = 0 ] || cat "$$log"; rm -f "$$log"; exit $$s

# The agents' real CLIs (Claude Code, Codex CLI, Gemini CLI, from npm)
# driven through whole sessions under `coord run --loop` in a repository
# where `coord setup` installed coord's hooks, the model replaced by a
# scripted server on loopback; then `coord land`
# (cmd/coord/internal/agentcli, TestAgentCLIs). Not part of `make test`: it
# installs the CLIs into AGENT_CLIS_DIR, outside the repository, and the
# sessions take a minute or two. Without npm, or when the install
# fails, it prints one line "test-agents: skipped: ..." and passes.
# AGENT_CLIS pins the versions coord's hooks were read against
# (cmd/coord/internal/hooks): move them together. The sessions' output and every
# request the model got are kept under COORD_ARTIFACTS/agentcli when
# COORD_ARTIFACTS is set.
AGENT_CLIS_DIR ?= $(HOME)/.cache/coord-agent-clis
AGENT_CLIS ?= @anthropic-ai/claude-code@2.1.197 @openai/codex@0.171.0 @google/gemini-cli@0.61.0
test-agents:
	@command -v npm >/dev/null || { echo "test-agents: skipped: no npm"; exit 0; }; \
	mkdir -p "$(AGENT_CLIS_DIR)" && \
	npm install --prefix "$(AGENT_CLIS_DIR)" --no-audit --no-fund --fetch-retries=1 $(AGENT_CLIS) >"$(AGENT_CLIS_DIR)/npm-install.log" 2>&1 || \
		{ echo "test-agents: skipped: npm install failed (see $(AGENT_CLIS_DIR)/npm-install.log)"; exit 0; }; \
	log=$$(mktemp "$${TMPDIR:-/tmp}/coord-agents.XXXXXX") || exit 1; \
	COORD_AGENT_CLIS="$(AGENT_CLIS_DIR)/node_modules/.bin" $(GO) test -count=1 -timeout 30m -v -run '^TestAgentCLIs$$' ./cmd/coord/internal/agentcli >"$$log" 2>&1; s=$$?; \
	grep -E '^(\s*--- (PASS|FAIL|SKIP)|ok|FAIL)|skipped:' "$$log"; \
	[ $$s = 0 ] || cat "$$log"; rm -f "$$log"; exit $$s

fuzz:
	@log=$$(mktemp "$${TMPDIR:-/tmp}/coord-fuzz.XXXXXX") || exit 1; \
	for t in $(FUZZ); do \
		pkg=$${t%%:*}; name=$${t##*:}; \
		echo "fuzz $$name ($(FUZZTIME))"; \
		$(GO) test -run '^$$' -fuzz "^$$name\$$" -fuzztime $(FUZZTIME) $$pkg >"$$log" 2>&1 || { cat "$$log"; rm -f "$$log"; exit 1; }; \
	done; rm -f "$$log"

# coordbench and the floor programs it measures coord against
# (cmd/coordbench/floor: a minimal Go program that prints JSON, and a
# minimal durable claim on one JSON file).
bench-tools:
	$(GO) -C cmd/coordbench build -o $(CURDIR)/$(BIN)/coordbench .
	$(GO) -C cmd/coordbench build -o $(CURDIR)/$(BIN)/floor-hello ./floor/hello
	$(GO) -C cmd/coordbench build -o $(CURDIR)/$(BIN)/floor-claim ./floor/claim

# The edit hook an agent runs before every write, and a fresh claim at
# 1,000 tasks (tmpfs and disk), each against its floor program,
# interleaved in one run, as ratios (the targets: the hook at most 2.5
# times a minimal Go program's start, the claim at most the floor
# claim's). 5 rounds of 20 runs of each, under 10 s; `make bench` runs
# 10 rounds of 30.
bench-hook: build bench-tools
	$(BIN)/coordbench -floor -floor-rounds 5 -floor-k 20 -bin $(BIN)/coord

bench: build bench-tools
	@echo "--- the edit hook and a claim against their floor programs, same run"
	$(BIN)/coordbench -floor -floor-rounds 10 -floor-k 30 -bin $(BIN)/coord
	$(GO) test -run '^$$' -bench . -benchmem -count=1 ./...
	@echo "--- SIGKILL storm: throughput against a kill-free run (a figure, not a test)"
	COORD_BENCH=1 $(GO) test -count=1 -v -run 'SIGKILLStorm' ./cmd/coord | grep -E 'throughput|^(ok|FAIL|--- FAIL)'
	@echo "--- landing: coord land throughput (check true) and release-to-landed with 8 agents at once"
	COORD_BENCH=1 $(GO) test -count=1 -v -run 'TestLandFigures' ./cmd/coord | grep -E 'throughput|agents releasing|^(ok|FAIL|--- FAIL)'
	@echo "--- landing in parallel: landings per minute with a 3 s check, N = 1, 2, 4, 8, all passing and 1 in 10 failing"
	COORD_BENCH=1 $(GO) test -count=1 -timeout 30m -v -run 'TestLandTrainFigures' ./cmd/coord | grep -E 'train|^(ok|FAIL|--- FAIL)'
	@echo "--- dashboard: Chromium loading the page of a 10,000-task project (a figure; skipped without chromium)"
	COORD_BENCH=1 $(GO) -C cmd/coord/internal/dashboard/browser test -count=1 -v -run 'TestBrowserLoad10k' ./... | grep -E '10,000 tasks|skipped|^(ok|FAIL|--- FAIL)'
	@echo "--- multi-process suite: coord against the naive reference, same run"
	$(BIN)/coordbench -suite -bin $(BIN)/coord
	@echo "--- NATS beside files, same run: a coord hub on loopback, then a 3-node cluster of hubs"
	$(BIN)/coordbench -nats -cluster -bin $(BIN)/coord
	@echo "--- planning: real histories replayed as work (make bench-plan; skipped without the data)"
	$(BIN)/coordbench -plan "$(PLAN_DATA)" -plan-repos "$(PLAN_REPOS)"
	@echo "--- write claims: real histories replayed as work (make bench-claims; skipped without the data)"
	$(BIN)/coordbench -replay-claims "$(PLAN_DATA)"

# coord's planner (coord/plan) measured on real histories replayed as
# work: the four histories of ../shared/data/histories (beside the main
# worktree; a user's clone has none, and the target then says it
# skipped), each built into a git repository (fast-import) whose last 200
# commits become tasks drained by 4 and 8 simulated agents through coord's
# own claims, predictions weighed as coord weighs them and re-made every
# 5 landings as watch and land do. Prints a table per history: conflicts against first come,
# first served, makespan against the oracle that declares each task's
# real files, recall, precision, plan time. Then the same for the
# repository it runs in (its own history read with package gitrepo, the
# newest 200 commits that changed files as tasks; fewer, and said, when
# the history is short; a one-line skip outside a git repository;
# coordbench -plan-self=false leaves it out), where, as coord plan does,
# the identifiers the tasks name are also looked up in the files (as
# they were before the first task; -plan-contents=false: not). One to
# five minutes.
# PLAN_REPOS=NAME=DIR,… adds other repositories' histories, read at run
# time from their git directories (a clone or a bare copy kept outside
# this repository; nothing of theirs is written anywhere).
PLAN_DATA ?= $(shell d=$$(git rev-parse --path-format=absolute --git-common-dir 2>/dev/null) && echo "$$(dirname "$$d")/../shared/data/histories" || echo ../shared/data/histories)
PLAN_REPOS ?=
bench-plan:
	$(GO) -C cmd/coordbench build -o $(CURDIR)/$(BIN)/coordbench .
	$(BIN)/coordbench -plan "$(PLAN_DATA)" -plan-repos "$(PLAN_REPOS)"

# Write claims (docs/GIT.md) measured on the same histories: the newest 200
# commits of each replayed as work for 4 and 8 agents, first come, first
# served, without claims, with claims recorded only (warn) and enforced
# (exclusive): merge conflicts, refused edits, waits, makespan. Seconds.
bench-claims:
	$(GO) -C cmd/coordbench build -o $(CURDIR)/$(BIN)/coordbench .
	$(BIN)/coordbench -replay-claims "$(PLAN_DATA)"

# The current coord against the binaries of earlier revisions, interleaved
# run by run on one machine (scripts/bench-compare.sh, coordbench
# -compare): process start, claim at 1k/10k/100k tasks, ls and ready at
# 1k, the 8- and 16-process drains, with ratios to the first revision.
# BENCH_REVS defaults to the last main commit before the storage
# engines went behind an interface (5aa3d5f) twice (an A/A column: the
# noise floor) and the last commit of that change before NATS and push
# scheduling (dc4b142). Not part of `make bench`: it
# builds old trees and takes 6 minutes on a quiet
# 2-core machine, 20 under load.
BENCH_REVS ?= 5aa3d5f 5aa3d5f dc4b142
bench-compare: build bench-tools
	scripts/bench-compare.sh $(BENCH_REVS)

# coord mcp against the MCP Inspector's CLI (npm); "skipped" without npx.
mcp-smoke: build
	scripts/mcp-smoke.sh $(BIN)/coord

# The long forms of the reliability scenarios (docs/RELIABILITY.md).
stress:
	COORD_STRESS=1 $(GO) test -count=1 -timeout 3h -v -run 'MultiProcess|Crash|PowerLoss|Fault|Fenced|FlockHolder|Sweep|ClockSkew|MutualExclusion|SIGKILLStorm|DiskFull|Racing|Watch' ./... 2>&1 | tee stress.log

install-rotd: build
	ln -sf coord $(BIN)/rotd
	@echo "$(BIN)/rotd -> coord: 'rotd coord <command>' now works (put $(BIN) on PATH)"

clean:
	rm -rf $(BIN)
