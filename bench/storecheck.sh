#!/usr/bin/env bash
# What the quick check of a SQLite store costs (docs/perf.md, "The store's
# quick check"; docs/reliability.md, "A damaged store page"): every open of
# a store up to store.CheckOnOpen (32 MiB) runs it. Stores of growing size are made of synthetic sysbench
# runs (bench/servegen -shape wide: BUILDS builds × 12 configs × 44 tests,
# imported with qpslab import results); on each, `qpslab store check` (the
# quick check alone, in its own process) and `qpslab labels` (an open, with
# its check where the store is small enough, and a read) are timed ROUNDS
# times each, interleaved, and the median and the least and most printed,
# with the store's size. With BASE=/path/to/an/older/qpslab (one without
# the check on open), its `labels` is timed too, in the same rounds, and
# the median of the per-round ratios this/base printed: the open's check as
# a share of a command. Needs Go (to build servegen).
set -euo pipefail
cd "$(dirname "$0")/.."
Q=${QPSLAB_BIN:-$PWD/bin/qpslab}
BASE=${BASE:-}
ROUNDS=${ROUNDS:-7}
SIZES=${SIZES:-"4 16 64"} # BUILDS of each store
work=$(mktemp -d /tmp/qpslab-storecheck-XXXXXX)
trap 'rm -rf "$work"' EXIT
go build -o "$work/servegen" ./bench/servegen

ms() { # command...: its wall time in ms
  local t0 t1
  t0=$(date +%s%N)
  "$@" >/dev/null 2>&1
  t1=$(date +%s%N)
  echo $(((t1 - t0) / 1000000))
}
stats() { # numbers...: median (least – most)
  sort -n | awk '{v[NR]=$1} END {printf "%d ms (%d – %d)", v[int((NR+1)/2)], v[1], v[NR]}'
}

printf '%-8s %-10s %-28s %-28s %s\n' BUILDS STORE "store check" labels "${BASE:+labels/base labels}"
for b in $SIZES; do
  home=$work/home-$b
  "$work/servegen" -shape wide -builds "$b" -out "$work/gen-$b" >/dev/null
  QPSLAB_HOME=$home "$Q" import results "$work/gen-$b"/*.json >/dev/null 2>&1
  size=$(($(stat -c %s "$home/qpslab.db") >> 20))
  check=() labels=() ratio=()
  for _ in $(seq 1 "$ROUNDS"); do
    check+=("$(QPSLAB_HOME=$home ms "$Q" store check)")
    l=$(QPSLAB_HOME=$home ms "$Q" labels)
    labels+=("$l")
    if [ -n "$BASE" ]; then
      base=$(QPSLAB_HOME=$home ms "$BASE" labels)
      ratio+=("$(awk -v a="$l" -v b="$base" 'BEGIN {printf "%.3f", a / (b > 0 ? b : 1)}')")
    fi
  done
  r=""
  if [ -n "$BASE" ]; then r=$(printf '%s\n' "${ratio[@]}" | sort -g | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}'); fi
  printf '%-8s %-10s %-28s %-28s %s\n' "$b" "${size} MiB" "$(printf '%s\n' "${check[@]}" | stats)" "$(printf '%s\n' "${labels[@]}" | stats)" "$r"
done
