#!/usr/bin/env bash
# Runs every Go fuzz target of the repository, one after the other, each for
# FUZZTIME (default 60s). Targets are found, not listed: every
# `func FuzzXxx(… *testing.F)` in a _test.go file under internal/ and cmd/,
# so a new one is picked up by `make fuzz` and `make test` as it is written.
#   FUZZTIME=60s GO=go scripts/fuzz.sh
#
# An input that fails a target is written to the package's
# testdata/fuzz/FuzzXxx/: commit it with the fix, and `go test` checks it for
# good. Go 1.26's fuzz coordinator can fail a target at the very end of
# -fuzztime with "context deadline exceeded" and no input written
# (golang/go#75804, fixed in Go 1.27): such a run found nothing, and is run
# once more; a second such failure fails.
set -euo pipefail
cd "$(dirname "$0")/.."
go=${GO:-go}
fuzztime=${FUZZTIME:-60s}
fuzzfunc='^func Fuzz[A-Za-z0-9_]*\([A-Za-z0-9_]* *\*testing\.F\)'
out=$(mktemp)
trap 'rm -f "$out"' EXIT

# files lists a target's corpus: files PKG TARGET.
files() { { find "$1/testdata/fuzz/$2" -type f 2>/dev/null || true; } | sort; }

n=0
for f in $(grep -rlE --include='*_test.go' "$fuzzfunc" internal cmd | sort); do
  pkg=./$(dirname "$f")
  for t in $(grep -E "$fuzzfunc" "$f" | sed -E 's/^func (Fuzz[A-Za-z0-9_]*).*/\1/'); do
    n=$((n + 1))
    for try in 1 2; do
      echo "fuzz: $t in $pkg for $fuzztime"
      before=$(files "$pkg" "$t")
      if "$go" test -run='^$' -fuzz="^$t\$" -fuzztime="$fuzztime" "$pkg" 2>&1 | tee "$out"; then
        break
      fi
      after=$(files "$pkg" "$t")
      if [ "$try" = 1 ] && [ "$before" = "$after" ] && grep -q '^    context deadline exceeded$' "$out"; then
        echo "fuzz: $t stopped on Go's fuzztime race (golang/go#75804) with no failing input: again"
        continue
      fi
      echo "fuzz: $t failed: see the input under $pkg/testdata/fuzz/$t" >&2
      exit 1
    done
  done
done
echo "fuzz: $n targets, $fuzztime each: no failure"
