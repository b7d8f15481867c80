# qpslab: `make demo` and `make test` are the two commands a new user needs.
# Both run `make setup` first, which is idempotent: it installs only what is
# missing and rebuilds ./bin/qpslab.

SHELL   := /bin/bash
GO      ?= go
VERSION := $(shell git describe --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -X github.com/qpslab/qpslab/internal/version.Version=$(VERSION)

# Debian packages: the system builds (MariaDB 10.11 with its MyRocks plugin,
# PostgreSQL 15, RocksDB's db_bench from rocksdb-tools), the peer tools
# qpslab is compared with (sysbench), Maven for registry builds, and the
# client programs and tools the tests, the demo and the benchmarks use
# (chromium renders the HTML report and drives the dashboard of qpslab serve
# in their tests; python3-venv holds Apache
# Otava for the changepoint benchmark; eu-stack from elfutils, gdb and perf
# capture the server's stacks and profiles for --pmp and --perf; chattr from
# e2fsprogs makes a folder unwritable to root in the sandbox tests); and
# what qpslab builds compile needs for PostgreSQL (git for commits, ccache,
# a compiler and make, bison and flex for a git tree's grammar, readline and
# zlib for its configure). MariaDB, MySQL and RocksDB compiles say what
# they lack when run.
APT_PKGS := mariadb-server mariadb-plugin-rocksdb mariadb-client postgresql postgresql-client rocksdb-tools sysbench maven ca-certificates procps time jq chromium python3-venv elfutils gdb linux-perf e2fsprogs \
	git ccache build-essential bison flex libreadline-dev zlib1g-dev

.PHONY: setup packages build demo test fuzz bench clean readme

setup: packages build

packages:
	@missing=""; for p in $(APT_PKGS); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "install ok installed" || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "setup: installing$$missing"; \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get update -q && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -q --no-install-recommends $$missing; \
	fi
	@command -v $(GO) >/dev/null || { echo "setup: Go is missing: install Go 1.26 or later (https://go.dev/doc/install)"; exit 1; }

build:
	$(GO) build -ldflags "$(LDFLAGS)" -o bin/qpslab ./cmd/qpslab

demo: setup
	./bin/qpslab demo

# `go test` runs each fuzz target over its seed corpus (testdata/fuzz/FuzzXxx);
# `make test` then fuzzes each for FUZZTIME_TEST, `make fuzz` for FUZZTIME.
# A test skips only through testenv.Skip, which names it and why in
# QPSLAB_SKIP_LOG; make test lists every such line at its very end, after the
# fuzzing. On the machine make setup prepares no test skips (the mysql
# flavor's tests fetch Debian's newest MySQL into the cache once);
# elsewhere (not root, no block device, no Debian mirror, ...) some may. TESTFLAGS go to go test (scripts/fresh-check.sh
# passes -v, for each test's time).
TESTFLAGS ?=
# The tests' servers, stores and homes go under TMPDIR: make test took up to
# 7.5 GiB there (scripts/fresh-check.sh measures it); with less than
# TEST_DISK_GIB free it stops at once with one line, rather than failing
# servers at start with "error 28" twenty minutes later.
TEST_DISK_GIB ?= 10
test: setup
	@tmp=$${TMPDIR:-/tmp}; free=$$(df -P -k "$$tmp" | awk 'NR == 2 { print $$4 }'); \
	if [ -z "$$free" ] || [ "$$free" -lt $$(( $(TEST_DISK_GIB) * 1048576 )) ]; then \
	  echo "make test: $$tmp has $$(( $${free:-0} / 1048576 )) GiB free, the tests need $(TEST_DISK_GIB) GiB there (fix: free space on that file system, or set TMPDIR to a folder on a larger one)"; exit 1; \
	fi
	$(GO) vet ./...
	@skips=$$(mktemp); status=0; \
	echo "QPSLAB_BIN=$(CURDIR)/bin/qpslab QPSLAB_REQUIRE_CHROMIUM=1 $(GO) test $(TESTFLAGS) -count=1 -timeout 25m ./..."; \
	QPSLAB_SKIP_LOG=$$skips QPSLAB_BIN=$(CURDIR)/bin/qpslab QPSLAB_REQUIRE_CHROMIUM=1 $(GO) test $(TESTFLAGS) -count=1 -timeout 25m ./... || status=$$?; \
	if [ $$status = 0 ]; then FUZZTIME=$(FUZZTIME_TEST) GO=$(GO) scripts/fuzz.sh || status=$$?; fi; \
	if [ -s $$skips ]; then \
	  echo "make test: $$(wc -l < $$skips) test(s) skipped:"; \
	  sort $$skips | sed 's/^/  /'; \
	else \
	  echo "make test: no test skipped"; \
	fi; \
	rm -f $$skips; exit $$status

# Every fuzz target (scripts/fuzz.sh finds them), one after the other.
FUZZTIME      ?= 60s
FUZZTIME_TEST ?= 2s
fuzz:
	FUZZTIME=$(FUZZTIME) GO=$(GO) scripts/fuzz.sh

bench: setup
	@for s in bench/*.sh; do echo "== $$s"; ./$$s || exit 1; done

clean:
	rm -rf bin

# README.md's demo output and chart, regenerated from a real qpslab demo
# (scripts/readme.sh); run after a change to what the demo prints.
readme: setup
	scripts/readme.sh
