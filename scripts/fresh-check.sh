#!/usr/bin/env bash
# Runs `make test` N times (default 3) on a fresh clone of this repository,
# as CI or a new user would: committed work only, each run with a qpslab
# home of its own and empty Go build and test caches, so that nothing passes
# for having passed before. Prints pass or fail per run with its time and
# its ten slowest tests (by their own time), and exits non-zero if any run
# failed.
#   scripts/fresh-check.sh [--load L] [N]      or      N=5 scripts/fresh-check.sh
#
# --load L starts L CPU burners (busy shell loops) beside each run, as a CI
# machine or a developer's laptop has other work beside the tests, so that
# every timing assumption of the tests is exercised; they are killed by pid
# when the run ends (and by the EXIT trap). Each run's line then gives the
# load average over the run (the 1-minute figure of /proc/loadavg, read
# every 10 s: its mean and maximum).
#
# Each run's line also gives the most disk the run took: the rise in used
# space of the file system holding TMPDIR (where the tests put their
# servers), read every 10 s beside the load average, over the used space at
# the run's start. It counts whatever else writes to that file system too,
# so read it on an otherwise quiet machine.
#
# What is shared between the runs, and with the user's own:
#   - the artifact cache (QPSLAB_CACHE, else the default home's cache): the
#     tests fetch registry builds (mariadb-10.2.11, postgres-12.17.0) into
#     it once; a fresh cache per run would download them again each time;
#   - the Go module cache (GOMODCACHE): modules, not build results.
# Everything else lives in a temporary folder that is removed at the end:
# the clone, each run's QPSLAB_HOME, GOCACHE and make test's output (the
# last lines of a failed run's output are printed, with what each failed
# test said; the whole output is kept in TMPDIR, and its path printed).
set -euo pipefail

load=0
if [ "${1:-}" = --load ]; then
  load=${2:-}
  if ! [[ $load =~ ^[0-9]+$ ]] || [ "$load" -gt 64 ]; then
    echo "fresh-check: --load takes the number of CPU burners, 0 to 64, not '$load'" >&2
    exit 2
  fi
  shift 2
fi
n=${1:-${N:-3}}
if ! [[ $n =~ ^[1-9][0-9]*$ ]]; then
  echo "fresh-check: N must be a positive number of runs, not '$n'" >&2
  exit 2
fi

top=$(git -C "$(dirname "$0")" rev-parse --show-toplevel)
if [ -n "${QPSLAB_CACHE:-}" ]; then
  cache=$QPSLAB_CACHE
elif [ -n "${QPSLAB_HOME:-}" ]; then
  cache=$QPSLAB_HOME/cache
elif [ "$(id -u)" = 0 ]; then
  cache=/var/lib/qpslab/cache # internal/home's default home for root
else
  cache=$HOME/.qpslab/cache
fi
modcache=$(cd "$top" && go env GOMODCACHE)

tmp=$(mktemp -d "${TMPDIR:-/tmp}/qpslab-fresh-check-XXXXXX")
# The burners and the load sampler of the current run, by pid.
pids=()
stop_bg() {
  if [ ${#pids[@]} -gt 0 ]; then
    kill "${pids[@]}" 2>/dev/null || true
    wait "${pids[@]}" 2>/dev/null || true
  fi
  pids=()
}
trap 'stop_bg; rm -rf "$tmp"' EXIT

src=$tmp/qpslab
git clone --quiet --no-checkout "$top" "$src"
git -C "$src" fetch --quiet "$top" HEAD
git -C "$src" checkout --quiet --detach FETCH_HEAD
echo "fresh-check: $n run(s) of make test on a clone of $(git -C "$src" log -1 --format='%h %s')"
if [ "$load" -gt 0 ]; then
  echo "fresh-check: $load CPU burner(s) beside each run, on $(nproc) CPU(s)"
fi
if ! git -C "$top" diff --quiet HEAD; then
  echo "fresh-check: uncommitted changes in $top are not in the clone"
fi

# slowest LOG: the ten slowest tests of make test's -v output, by their own
# time, each with its package. A package's output comes in one block, ended
# by its "ok" or "FAIL" line.
slowest() {
  awk -v mod="$module/" '
    /^--- (PASS|FAIL|SKIP): / {
      t = $3; d = $4; gsub(/[()s]/, "", d); names[++k] = t; secs[k] = d; next
    }
    /^(ok|FAIL)[ \t]+[^ \t]+[ \t]/ {
      pkg = $2
      if (index(pkg, mod) == 1) pkg = substr(pkg, length(mod) + 1)
      for (i = 1; i <= k; i++) printf "%8.2f s  %s %s\n", secs[i], pkg, names[i]
      k = 0
    }
  ' "$1" | sort -rn | sed -n '1,10p' # sed reads all: no SIGPIPE to sort under pipefail
}
module=$(awk '$1 == "module" { print $2 }' "$src/go.mod")

failed=0
for i in $(seq 1 "$n"); do
  run=$tmp/run$i
  mkdir -p "$run/home" "$run/gocache"
  log=$run/make-test.log
  for _ in $(seq 1 "$load"); do
    bash -c 'while :; do :; done' &
    pids+=($!)
  done
  (while :; do cut -d' ' -f1 /proc/loadavg; sleep 10; done) >"$run/loadavg" &
  pids+=($!)
  (while :; do df -P -k "${TMPDIR:-/tmp}" | awk 'NR == 2 { print $3 }'; sleep 10; done) >"$run/diskused" &
  pids+=($!)
  start=$SECONDS
  status=pass
  if ! (cd "$src" && env QPSLAB_HOME="$run/home" QPSLAB_CACHE="$cache" \
        GOCACHE="$run/gocache" GOMODCACHE="$modcache" \
        make test TESTFLAGS=-v) >"$log" 2>&1; then
    status=FAIL
    failed=$((failed + 1))
  fi
  took=$((SECONDS - start))
  stop_bg
  avg=$(awk '{ s += $1; if ($1 > m) m = $1 } END { if (NR) printf "mean %.2f, max %.2f", s / NR, m; else print "not read" }' "$run/loadavg")
  disk=$(awk 'NR == 1 { b = $1 } { if ($1 - b > m) m = $1 - b } END { if (NR) printf "%.1f GiB", m / 1048576; else print "not read" }' "$run/diskused")
  printf 'run %d/%d: %s in %dm%02ds, load average %s (%d burner(s)), at most %s more disk used\n' "$i" "$n" "$status" $((took / 60)) $((took % 60)) "$avg" "$load" "$disk"
  echo "  the ten slowest tests:"
  slowest "$log" | sed 's/^/  /'
  sed -n '/^make test: /,$p' "$log" | sed 's/^/  /'
  if [ "$status" = FAIL ]; then
    echo "  what failed, with what each failed test said (go test -v prints it under its --- FAIL line):"
    awk '/^\s*--- FAIL/ { on = 1; print; next } /^\s*(--- (PASS|SKIP)|=== RUN|PASS$|ok )/ { on = 0 } /^(FAIL|panic:)/ { print; next } on { print }' "$log" | head -n 200 | sed 's/^/    /'
    echo "  the last lines of its output:"
    tail -n 30 "$log" | sed 's/^/    /'
    # The whole output, kept beyond the temporary folder for a second look.
    keep="${TMPDIR:-/tmp}/fresh-check-run$i-$(date +%Y%m%d-%H%M%S).log"
    cp "$log" "$keep" && echo "  its whole output: $keep"
  fi
done

if [ "$failed" -gt 0 ]; then
  echo "fresh-check: $failed of $n run(s) failed"
  exit 1
fi
echo "fresh-check: all $n run(s) passed"
