# ccload — see README.md. `make demo` and `make test` are all a newcomer needs;
# docs/operations.md ("Tests") and docs/install.md say what the others do.
GO        ?= go
BIN       ?= bin/ccload
PKGS      ?= ./...
# Test databases: local PostgreSQL and MariaDB (docs/operations.md, "Tests").
CCLOAD_TEST_POSTGRES ?= postgres://postgres@127.0.0.1:5432/test?sslmode=disable
CCLOAD_TEST_MYSQL    ?= root@tcp(127.0.0.1:3306)/test
export CCLOAD_TEST_POSTGRES CCLOAD_TEST_MYSQL
# `ccload version` shows these (main.version, main.commit, main.date).
VERSION   ?= $(shell git describe --tags --always --dirty 2>/dev/null)
COMMIT    ?= $(shell git rev-parse HEAD 2>/dev/null)
DATE      ?= $(shell date -u +%Y-%m-%dT%H:%M:%SZ)
LDFLAGS   ?= -X main.version=$(VERSION) -X main.commit=$(COMMIT) -X main.date=$(DATE)

.PHONY: build test fuzz test-short test-web test-clients demo lint bench bench-load clean soak release image image-check cross test-portable walk

build:
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags "$(LDFLAGS)" -o $(BIN) .

# internal/rawsock/sys_norace.go is built only without -race (sys_race.go
# says why), so the socket tests run once more without the race detector.
test: lint
	$(GO) test -race -count=1 -timeout 15m $(PKGS)
	$(GO) test -count=1 -run 'RawSock|AheadConn' ./engine/listen/ ./internal/rawsock/
	$(MAKE) --no-print-directory fuzz FUZZTIME=$(FUZZTIME_TEST)

# The fuzz targets of the readers of upstream bytes (engine/upstream), one
# `go test -fuzz` per target: FUZZTIME each here, FUZZTIME_TEST each in
# `make test`. make test counts inputs (20000x, one to two seconds) rather
# than a time: a time this short can end while the fuzzer is still setting
# up its workers, which fails the run with "context deadline exceeded" and
# no failing input. What a run finds is kept in engine/upstream/testdata/fuzz,
# which every `go test` then replays.
FUZZ_PKG      ?= ./engine/upstream
FUZZ_TARGETS  ?= $(shell grep -ho '^func Fuzz[A-Za-z0-9]*' $(FUZZ_PKG)/*_test.go | cut -c6-)
FUZZTIME      ?= 60s
FUZZTIME_TEST ?= 20000x
fuzz:
	@set -e; for t in $(FUZZ_TARGETS); do \
	  echo "== $$t"; \
	  $(GO) test -run='^$$' -fuzz="^$$t\$$" -fuzztime=$(FUZZTIME) $(FUZZ_PKG); \
	done

# Every release target builds and vets (vet type-checks the tests too)
# without running anything.
CROSS_TARGETS ?= linux/amd64 linux/arm64 darwin/amd64 darwin/arm64 windows/amd64 windows/arm64
cross:
	@set -e; for t in $(CROSS_TARGETS); do \
	  echo "== $$t"; \
	  GOOS=$${t%/*} GOARCH=$${t#*/} CGO_ENABLED=0 $(GO) build ./...; \
	  GOOS=$${t%/*} GOARCH=$${t#*/} CGO_ENABLED=0 $(GO) vet ./...; \
	done

# The code macOS and Windows run (hang-up watching by a read, plain
# sockets; files tagged !linux || ccload_portable) tested here on Linux.
test-portable:
	$(GO) test -tags ccload_portable -count=1 -timeout 15m $(PKGS)

test-short:
	$(GO) test -count=1 $(PKGS)

# The dashboard in headless Chromium (Debian's chromium; webui/e2e/README.md).
test-web: build
	cd webui/e2e && npm ci --no-audit --no-fund && node --test --test-concurrency=1

# The real Claude Code, Codex CLI and Gemini CLI through `ccload serve` to the
# mock upstream in every family (ccloadtest/clients/doc.go). ccloadtest/clients/install.sh installs
# the pinned CLIs from npm into a cache outside the repo (or reuses it); a
# missing CLI fails the target. About 32 CLI runs, CLIENTS_PARALLEL at once.
CLIENTS_PARALLEL ?= 3
test-clients: build
	@dir=$$(bash ccloadtest/clients/install.sh) && \
	  $(GO) vet -tags clients ./ccloadtest/clients/ && \
	  CCLOAD_CLIENTS_DIR="$$dir" CCLOAD_BIN="$(abspath $(BIN))" \
	  $(GO) test -tags clients -count=1 -v -timeout 25m -parallel $(CLIENTS_PARALLEL) -run TestClients ./ccloadtest/clients/

demo: build
	./$(BIN) demo -c ccload.example.yaml

# staticcheck is pinned and installed into bin/ on first use, so a clean
# clone needs only the Go toolchain and the module proxy.
STATICCHECK_VERSION ?= v0.8.2
STATICCHECK ?= bin/staticcheck-$(STATICCHECK_VERSION)

$(STATICCHECK):
	GOBIN=$(CURDIR)/bin/staticcheck.tmp $(GO) install honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION)
	mv bin/staticcheck.tmp/staticcheck $@ && rmdir bin/staticcheck.tmp

lint: $(STATICCHECK)
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	  if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	$(GO) vet $(PKGS)
	$(STATICCHECK) $(PKGS)

# Randomised-fault soak of the real binary (docs/operations.md, "Soak"); not in `make test`.
# SOAK_DURATION (default 3m), SOAK_STORES (sqlite,postgres), SOAK_FAULT_RATE (0.19).
soak:
	$(GO) test -tags soak -run TestSoak -count=1 -timeout 60m -v ./ccloadtest/soak/

bench:
	$(GO) test -run '^$$' -bench . -benchmem $(PKGS)

# Load benchmark: the mock upstream direct, through nginx (when installed)
# and through bin/ccload, one table with ratios (docs/benchmarks.md).
# Minutes long and machine-wide; never part of `make test`.
BENCH_RUNS ?= 3
BENCH_FLAGS ?=
bench-load: build
	$(GO) build -o bin/benchload ./ccloadtest/benchload
	./bin/benchload -bin $(BIN) -runs $(BENCH_RUNS) $(BENCH_FLAGS)

# Release archives for linux, darwin and windows on amd64 and arm64, with
# checksums, reproducible from the commit (.ci/release; docs/install.md).
# VERSION defaults to `git describe --tags --always --dirty`.
release:
	VERSION=$(VERSION) .ci/release

# The release image from the linux binary, FROM scratch, with podman or
# buildah and no registry pull (.ci/Containerfile, .ci/image). image-check
# also checks it without running it.
image:
	VERSION=$(VERSION) .ci/image

image-check:
	VERSION=$(VERSION) .ci/image --check

clean:
	rm -rf bin dist data/demo.db*

# Which files of engine/ one warm non-stream request executes: the same
# test with 3 and with 4 requests under coverage counts, and the blocks
# whose counts grew (ccloadtest/walk; docs/architecture.md).
walk:
	@set -e; d=$$(mktemp -d); for n in 3 4; do \
	  CCLOAD_WALK_N=$$n $(GO) test -tags walk -covermode=count -coverpkg=./engine/... \
	    -coverprofile=$$d/$$n.out -run '^TestWalk$$' -count=1 ./engine/ >/dev/null; \
	done; $(GO) run ./ccloadtest/walk github.com/ccload/ccload/ $$d/3.out $$d/4.out; rm -rf $$d
