# guide — make targets. `make run` and `make test` are the two set-up commands.
GO        ?= go
BIN       := bin
ADDR      ?= 127.0.0.1:8080
ROOT      ?= testdata/sample
DATA      ?= .run
FUZZTIME  ?= 20s
SEED          ?= 1
SOAK_DURATION ?= 10m
SOAK_SESSIONS ?= 50
SOAK_DOCS     ?= 2000

.PHONY: all build run test test-short vet fuzz bench bench-quick bench-render bench-scale bench-partitions clean e2e browser soak soak-short

all: build

build:
	$(GO) build -o $(BIN)/ ./cmd/... ./tools/cmd/...

# Start the all-in-one server (embedded NATS, indexer and query process in one) over the
# sample content, serving MCP over Streamable HTTP at http://$(ADDR)/mcp.
run: build
	@echo ""
	@echo "guide: serving $(ROOT) at http://$(ADDR)/mcp  (Ctrl-C to stop)"
	@echo "  the web page: open http://$(ADDR)/ in a browser"
	@echo "  connect an MCP client over HTTP to that URL, or run it over stdio:"
	@echo "  {\"mcpServers\": {\"guide\": {\"command\": \"$(CURDIR)/$(BIN)/guide-mcp\", \"args\": [\"--root\", \"$(CURDIR)/$(ROOT)\"]}}}"
	@echo ""
	$(BIN)/guide-mcp --root $(ROOT) --data $(DATA) --http $(ADDR)

# Every test, with the race detector. testsummary prints each package's line, the output of
# failed tests and, at the end, every skipped test with its reason; the exit status is go
# test's (or testsummary's when go test passed).
test: vet
	$(GO) build -o $(BIN)/testsummary ./tools/cmd/testsummary
	bash -o pipefail -c '$(GO) test -race -count=1 -timeout 20m -json ./... | $(BIN)/testsummary'

# The official MCP TypeScript SDK client and conformance suite against the built binaries
# (installs e2e/node_modules from the npm registry with npm ci).
e2e: build
	e2e/run.sh

# The web page in a real browser: Debian's chromium driven by playwright-core from npm
# (e2e/browser; it downloads no browser), against the built bin/guide-mcp.
browser: build
	e2e/browser/run.sh

test-short: vet
	$(GO) build -o $(BIN)/testsummary ./tools/cmd/testsummary
	bash -o pipefail -c '$(GO) test -short -count=1 -json ./... | $(BIN)/testsummary'

vet:
	@test -z "$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))" || { echo "gofmt needed:"; gofmt -l .; exit 1; }
	$(GO) vet ./...

# Run every fuzz target for FUZZTIME each.
fuzz:
	@for pkg in $$($(GO) list ./...); do \
	  for f in $$($(GO) test -list '^Fuzz' $$pkg | grep '^Fuzz'); do \
	    echo "== $$pkg $$f"; $(GO) test -run '^$$' -fuzz "^$$f$$" -fuzztime $(FUZZTIME) $$pkg || exit 1; \
	  done; \
	done

# Every benchmark (about 27 minutes). Each step puts the records of the areas it measured
# into BENCHMARKS.json (the other areas keep theirs, with their own dates) and renders the
# whole of BENCHMARKS.md from that file: guide-bench (cold, latency, restart, search, content,
# web, fresh, once, clients, churn, replica), guide-relevance (relevance; npm ci of the pinned
# packages into .bench/relevance), then the two load runs (load, and sessions: 50 concurrent
# MCP sessions each, their reports also in .bench/load.txt and .bench/sessions.txt).
bench: build
	$(GO) run ./tools/cmd/guide-bench
	$(GO) run ./tools/cmd/guide-relevance
	scripts/bench-load.sh
	AREA=sessions scripts/bench-load.sh

# A few minutes, smaller corpora and a 10 s load run: prints its tables, writes no file.
bench-quick: build
	$(GO) run ./tools/cmd/guide-bench --quick
	DURATION=10s RECORD=0 scripts/bench-load.sh

# BENCHMARKS.md rendered again from BENCHMARKS.json, nothing measured (after a change to
# the targets, the rendering or the texts on how each area is measured).
bench-render:
	$(GO) run ./tools/cmd/guide-bench --render

# The opt-in scale scenario, not part of make bench: 10k, 100k and 1M generated documents,
# each indexed from empty (the 1M corpus, ~3.4 GB of text, is generated once under
# .bench/corpora). Hours on a 2-core machine. Writes the scale record and renders BENCHMARKS.md.
bench-scale: build
	$(GO) run ./tools/cmd/guide-bench --scenarios scale

# The opt-in partitions scenario, not part of make bench: the generated 100k in a stream of
# four partitions (indexer --partitions 4), a whole replica and one replica of each partition
# from empty, their size, memory and catch-up, and search through the fan-out against the
# whole replica, hits compared. About half an hour on 2 cores. Writes the partitions record.
bench-partitions: build
	$(GO) run ./tools/cmd/guide-bench --scenarios partitions

# The soak (about SOAK_DURATION plus a few minutes): split mode from the built binaries,
# random file-system operations, kill -9 of the indexer (and its NATS) and of guide-mcp, a
# full disk (as root), SOAK_SESSIONS HTTP sessions, then the disk, stream, consumer, session and goroutine
# checks. Loopback only. A failure prints the seed and the operations log: SEED=n replays.
soak: build
	$(BIN)/guide-soak --seed $(SEED) --duration $(SOAK_DURATION) --sessions $(SOAK_SESSIONS) --docs $(SOAK_DOCS) --bin $(BIN) --json .soak.json

# The short form .ci/run runs: about three minutes.
soak-short: build
	$(BIN)/guide-soak --seed $(SEED) --duration 100s --sessions 20 --docs 500 --settle 60s --bin $(BIN) --json .soak.json

clean:
	rm -rf $(BIN) $(DATA) .bench .soak.json
