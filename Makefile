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
# package:Target for every fuzz target, run briefly by `make test`.
FUZZ := ./registry/format:FuzzParse ./registry/format:FuzzScannerMatchesJSONText ./registry/format:FuzzParseSeedLine ./coord:FuzzPatternsOverlap ./coord:FuzzLockCovers ./registry/format:FuzzParseLockInfo ./coord:FuzzOneLine ./coord:FuzzParseDuration

.PHONY: build demo test vet fmt-check unit fuzz bench stress install-rotd clean

build:
	$(GO) build -tags urfave_cli_no_docs -o $(BIN)/coord ./cmd/coord

demo: build
	./scripts/demo.sh

test: vet fmt-check unit load fuzz

vet:
	$(GO) vet ./...

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

unit:
	$(GO) test -race -count=1 ./...

# The multi-process load scenarios skip themselves under -race (it slows
# every worker process ~10x); this pass runs them without it.
load:
	@$(GO) test -count=1 -run 'MutualExclusionUnderLoad|SIGKILLStorm' -v ./cmd/coord >/tmp/coord-load.log 2>&1; \
	s=$$?; grep -E '^(---|ok|FAIL|\s+load_test)' /tmp/coord-load.log; [ $$s = 0 ] || cat /tmp/coord-load.log; exit $$s

fuzz:
	@for t in $(FUZZ); do \
		pkg=$${t%%:*}; name=$${t##*:}; \
		echo "fuzz $$name ($(FUZZTIME))"; \
		$(GO) test -run '^$$' -fuzz "^$$name\$$" -fuzztime $(FUZZTIME) $$pkg >/tmp/coord-fuzz.log 2>&1 || { cat /tmp/coord-fuzz.log; exit 1; }; \
	done

bench: build
	$(GO) build -o $(BIN)/coordbench ./cmd/coordbench
	$(GO) test -run '^$$' -bench . -benchmem -count=1 ./...
	@echo "--- multi-process suite: coord against the naive reference, same run"
	$(BIN)/coordbench -suite -bin $(BIN)/coord

# The long forms of the reliability scenarios (docs/RELIABILITY.md).
stress:
	COORD_STRESS=1 $(GO) test -count=1 -timeout 3h -v -run 'MultiProcess|Crash|PowerLoss|Fault|Fenced|FlockHolder|Sweep|ClockSkew|MutualExclusion|SIGKILLStorm|DiskFull|Racing|Watch' ./... 2>&1 | tee stress.log

install-rotd: build
	ln -sf coord $(BIN)/rotd
	@echo "$(BIN)/rotd -> coord: 'rotd coord <command>' now works (put $(BIN) on PATH)"

clean:
	rm -rf $(BIN)
