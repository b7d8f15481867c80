#!/usr/bin/env bash
# The two ways to put a label's tables back as they were after the load
# before a repeat (docs/running.md, "Every repeat from the same state"),
# timed in paired rounds (A B, B A, …) on one sandbox: reload (drop,
# create and load the sysbench tables again with the same seed, through
# qpslab run --sandbox, so the figure includes qpslab's own start and a
# 0.05 s test) and restore (stop the server, copy back the datadir saved
# after the load with cp -a, start the server again). Prints each round and
# the median of the per-round ratios reload / restore, for each build and
# table size. BUILDS (default "mariadb-system postgres-system"), ROWS
# (default "100000 1000000"), ROUNDS (default 7).
set -euo pipefail
cd "$(dirname "$0")/.."
Q=$PWD/bin/qpslab
. bench/pairs.bash
work=$(mktemp -d /tmp/qpslab-restore-XXXXXX); chmod 755 "$work" # PostgreSQL runs as user postgres, which must reach its datadir
export QPSLAB_HOME=$work/home
trap '$Q server stop --all >/dev/null 2>&1 || true; rm -rf "$work"' EXIT
BUILDS=${BUILDS:-mariadb-system postgres-system}
ROWS=${ROWS:-100000 1000000}
ROUNDS=${ROUNDS:-7}
now() { date +%s.%N; }
for build in $BUILDS; do
  for rows in $ROWS; do
    name=r-$build
    $Q server start "$build" default --name "$name" >/dev/null
    dd=$(sed -n 's/^datadir: *//p' "$QPSLAB_HOME/sandboxes/$name/sandbox.yaml")
    reload() {
      local t0; t0=$(now)
      $Q run sysbench --sandbox "$name" --tests point-query.pre_range=100 --read-secs 0.05 --warmup 0 --rows "$rows" --out "$work/r.json" >/dev/null 2>&1
      echo "$(now) - $t0" | bc
    }
    restore() {
      local t0; t0=$(now)
      $Q server stop "$name" >/dev/null
      rm -rf "$dd"; cp -a "$work/snap" "$dd"
      $Q server start "$build" default --name "$name" --reuse-datadir >/dev/null
      echo "$(now) - $t0" | bc
    }
    reload >/dev/null
    $Q server stop "$name" >/dev/null
    rm -rf "$work/snap"; cp -a "$dd" "$work/snap"
    echo "$build, $rows rows: datadir $(du -sh "$work/snap" | cut -f1), the load alone $(jq -r '.runs[] | select(.test=="load") | .totals.seconds' "$work/r.json") s"
    $Q server start "$build" default --name "$name" --reuse-datadir >/dev/null
    : >"$work/ratios"
    for i in $(seq 1 "$ROUNDS"); do
      if [ $((i % 2)) = 1 ]; then a=$(reload); b=$(restore); else b=$(restore); a=$(reload); fi
      echo "  round $i: reload $(printf %.2f "$a") s, restore $(printf %.2f "$b") s"
      echo "$a / $b" | bc -l >>"$work/ratios"
    done
    echo "  median of reload / restore: $(median <"$work/ratios" | xargs printf %.2f)"
    $Q server stop "$name" >/dev/null
    rm -rf "$QPSLAB_HOME/sandboxes/$name"
  done
done
