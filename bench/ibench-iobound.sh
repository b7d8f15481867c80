#!/usr/bin/env bash
# Seed 003 as a study (docs/examples/ibench-iobound): the IO-bound Insert
# Benchmark at 1 and 4 clients on MariaDB 10.2.11, 10.5.23, 10.11 (the
# system's), 11.4.5, 11.8.9 and MySQL 9.7.4, each with the study's config
# (seed003.cnf: the seeds' cz11d_bee with a 2 GB redo), sized for a 2-core
# VM with one disk: 1 million rows per client loaded (about 170 MB per
# client), the buffer pool then a sixteenth of the tables (--workload
# iobound), 100,000 rows per client inserted by l.i1 and l.i2, 40 s of
# qr100 and qp100, a quarter of the reference's wait after l.i2. Each build's
# whole pass runs in turn (--interleave pass), once.
#
# qpslab runs with a QPSLAB_HOME of its own (bench/.work/ibench-iobound/home,
# kept: its store holds the runs; its artifact cache too, unless
# QPSLAB_CACHE names one: point it at yours to fetch nothing twice), and the
# study's tables are written next to this script's output: compare.md (the
# findings and the step tables) and metrics.md (the hardware and the
# server's counters per operation), under OUT (default: a scratch folder,
# bench/.work/ibench-iobound/out; OUT=docs/examples/ibench-iobound rewrites
# the committed ones). Needs the network once, for the builds it fetches
# (Maven and Debian's suites).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
Q=${QPSLAB_BIN:-$ROOT/bin/qpslab}
[ -x "$Q" ] || { echo "bench/ibench-iobound.sh: no $Q: run make setup (it builds bin/qpslab)" >&2; exit 1; }
work=$ROOT/bench/.work/ibench-iobound
OUT=${OUT:-$work/out}
mkdir -p "$work" "$OUT"
export QPSLAB_HOME=$work/home

BUILDS=(mariadb-10.2.11 mariadb-10.5.23 mariadb-system mariadb-11.4.5 mariadb-11.8.9 mysql-9.7.4)
for b in "${BUILDS[@]}"; do
  [ "$b" = mariadb-system ] || "$Q" builds fetch "$b" >/dev/null
done
"$Q" configs add seed003 "$ROOT"/docs/examples/ibench-iobound/seed003.cnf --replace >/dev/null
start=$(date +%s)
"$Q" run ibench --build "$(IFS=,; echo "${BUILDS[*]}")" --config seed003 --clients 1,4 \
  --mr1 1 --mr2 0.1 --query-secs 40 --rates 100 --wait-scale 0.25 \
  --workload iobound --interleave pass --repeat 1
echo "== the run took $(( $(date +%s) - start )) s"
labels=()
for b in "${BUILDS[@]}"; do labels+=("$b.seed003"); done
"$Q" compare "${labels[@]}" --format md >"$OUT"/compare.md
"$Q" metrics "${labels[@]}" --format md >"$OUT"/metrics.md
echo "== wrote $OUT/compare.md and $OUT/metrics.md"
