#!/usr/bin/env bash
# How a round's noise depends on the slice's length on this host: A/A runs
# (mariadb-system under two configs with the default's settings), 16 of
# the sysbench tests, 100,000 rows, 3 repeats of 4 slices per repeat, at
# slices of SLICES seconds (default "0.1 0.25 0.5 1"). For each length,
# per pool (reads, writes) the round noise and repeat effect as compare
# pools them (its JSON's pools: σ within, σ between, the F test), and the
# median over the tests of the rounds' plain and winsorized (20 %)
# standard deviation of the log ratios, with the variance per measured
# second (winsorized σ² × slice): --repeat auto's shortest slice
# (plan.AutoSlice) rests on it.
#
# bench/slices.sh tails: whether slices keep the tail (issue 59 item 4).
# MariaDB with the thread pool (pool-of-threads) and with a thread per
# connection (one-thread-per-connection) at CLIENTS connections (default
# "1024 4096"), point-query_range=100 on ROWS rows (default 10000), run as
# 0.25 s slices alternating between the two servers (--slices SECS/0.25,
# the length --repeat auto cuts) and run whole (--interleave pass), SECS
# measured seconds (default 2) a repeat, REPEATS repeats (default 2). Per
# client count and config: the p99, the largest latency and QPS of each (the median over the
# repeats), the operations in flight at the slices' ends that were counted
# (inflight), the connections that completed nothing in the window
# (starved) and in a slice (starved_1s), and whether the run warned that
# its tails cannot be trusted; then the relative QPS of the two configs
# (one thread per connection over the pool) both ways, and whether they
# agree in sign. MODES (default "sliced whole") picks the ways to run;
# QPSLAB_BIN another build of qpslab (an older one, to see what changed).
set -euo pipefail
cd "$(dirname "$0")/.."
Q=${QPSLAB_BIN:-$PWD/bin/qpslab} # QPSLAB_BIN: another build of qpslab to measure
. bench/pairs.bash
work=$(mktemp -d /tmp/qpslab-slices-XXXXXX)
chmod 755 "$work" # the servers run as an unprivileged user, who must reach the home
export QPSLAB_HOME=$work/home
trap '$Q server stop --all >/dev/null 2>&1 || true; rm -rf "$work"' EXIT
if [ "${1:-}" = tails ]; then
  secs=${SECS:-2}; reps=${REPEATS:-2}; rows=${ROWS:-10000}
  k=$(echo "$secs / 0.25" | bc)
  # fig FILE CONFIG JQ: the median over CONFIG's runs of the test of JQ.
  fig() { jq -r --arg c "$2" "[.runs[] | select(.test == \"point-query_range=100\" and (.config | startswith(\$c + \"@\")))] | .[] | $3" "$1" | median; }
  for c in ${CLIENTS:-1024 4096}; do
    for mode in ${MODES:-sliced whole}; do
      how=(--slices "$k"); [ $mode = whole ] && how=(--interleave pass)
      t0=$SECONDS
      if ! $Q run sysbench --build mariadb-system --config pool-of-threads,one-thread-per-connection --tests point-query_range=100 \
        --threads "$c" --rows "$rows" --read-secs "$secs" --warmup 1 --postwrite-scale 0 --repeat "$reps" "${how[@]}" \
        --out "$work/$c-$mode.json" >"$work/$c-$mode.log" 2>&1; then
        echo "$c clients, $mode: the run failed: $(grep -m1 -i 'error\|refuse' "$work/$c-$mode.log" || tail -1 "$work/$c-$mode.log")"
        continue 2
      fi
      echo "$c clients, $mode ($((SECONDS - t0)) s wall):"
      for cfg in pool-of-threads one-thread-per-connection; do
        printf '  %-26s p99 %7.1f ms  max %7.1f ms  qps %6.0f  inflight %6.0f  starved %5.0f  starved_1s %5.0f  warned: %s\n' "$cfg" \
          "$(fig "$work/$c-$mode.json" $cfg '.totals.response.p99_us / 1000')" "$(fig "$work/$c-$mode.json" $cfg '.totals.response.max_us / 1000')" \
          "$(fig "$work/$c-$mode.json" $cfg '.totals.reported')" \
          "$(fig "$work/$c-$mode.json" $cfg '.totals.figures.inflight // 0')" "$(fig "$work/$c-$mode.json" $cfg '.totals.figures.starved // 0')" \
          "$(fig "$work/$c-$mode.json" $cfg '.totals.figures.starved_1s // 0')" \
          "$(grep -c "mariadb-system.$cfg: its latency tails cannot be trusted" "$work/$c-$mode.log" || true)"
      done
    done
    [ -f "$work/$c-sliced.json" ] && [ -f "$work/$c-whole.json" ] || continue
    s1=$(fig "$work/$c-sliced.json" pool-of-threads .totals.reported); s2=$(fig "$work/$c-sliced.json" one-thread-per-connection .totals.reported)
    w1=$(fig "$work/$c-whole.json" pool-of-threads .totals.reported); w2=$(fig "$work/$c-whole.json" one-thread-per-connection .totals.reported)
    printf '  relative QPS, one-thread-per-connection / pool-of-threads: sliced %.2f, whole %.2f (%s)\n' \
      "$(echo "$s2 / $s1" | bc -l)" "$(echo "$w2 / $w1" | bc -l)" \
      "$(echo "($s2 - $s1) * ($w2 - $w1) >= 0" | bc -l | sed 's/1/same sign/; s/0/signs differ/')"
  done
  exit 0
fi
TESTS='point-query.pre_range=100,random-points.pre_range=10,random-points.pre_range=100,read-only.pre_range=10,points-covered-pk.pre_range=100,range-covered-pk.pre_range=100,update-index_range=100,update-nonindex_range=100,update-one_range=100,write-only_range=10000,read-only_range=100,point-query_range=100,hot-points_range=100,random-points_range=1000,range-notcovered-si_range=100,scan_range=100'
for s in ${SLICES:-0.1 0.25 0.5 1}; do
  secs=$(echo "4 * $s" | bc)
  n=aa${s/./}
  : >"$work/empty.cnf" # configs add reads regular files only
  $Q configs add "$n-a" --family mysql "$work/empty.cnf" >/dev/null
  $Q configs add "$n-b" --family mysql "$work/empty.cnf" >/dev/null
  t0=$SECONDS
  $Q run sysbench --build mariadb-system --config "$n-a,$n-b" --rows 100000 --read-secs "$secs" --write-secs "$secs" --warmup 0.5 \
    --postwrite-scale 0 --repeat 3 --slices 4 --tests "$TESTS" --out "$work/$n-runs.json" >"$work/$n.log" 2>&1
  $Q compare "mariadb-system.$n-a" "mariadb-system.$n-b" --format json >"$work/$n.json"
  echo "slice $s s ($((SECONDS - t0)) s): $(jq -r '.pools[0][] | "\(.name): σ within \(.sigma_within * 1000 | round / 1000), between \(.sigma_between * 1000 | round / 1000), F test p \(.p * 1000 | round / 1000)"' "$work/$n.json" | paste -sd ';' -)"
  # Per test, the rounds' log ratios (label b over a, paired by repeat and
  # round): their plain and 20 % winsorized standard deviations.
  jq -r '
    def sd: (add / length) as $m | (map((. - $m) * (. - $m)) | add / (length - 1)) | sqrt;
    def winsor: sort as $s | length as $n | ($n * 0.2 | floor) as $g | $s[$g] as $lo | $s[$n - 1 - $g] as $hi | map(if . < $lo then $lo elif . > $hi then $hi else . end);
    [.runs[] | select(.rounds and .role != "load")] | group_by(.test)[] |
    (map(select(.config | split("@")[0] | endswith("-a")))) as $a | (map(select(.config | split("@")[0] | endswith("-b")))) as $b |
    [$a[] as $ra | $b[] | select(.params.repeat == $ra.params.repeat) as $rb | range(0; [$ra.rounds, $rb.rounds] | map(length) | min) as $i |
      ($rb.rounds[$i].value / $ra.rounds[$i].value | log)] as $l |
    "\($l | sd) \($l | winsor | sd)"' "$work/$n-runs.json" >"$work/$n.sd"
  mp=$(cut -d' ' -f1 "$work/$n.sd" | median); mw=$(cut -d' ' -f2 "$work/$n.sd" | median)
  printf '  over %d tests: median σ %.3f, winsorized %.3f; winsorized σ² per measured second %.5f\n' "$(wc -l <"$work/$n.sd")" "$mp" "$mw" "$(echo "$mw * $mw * $s" | bc -l)"
done
