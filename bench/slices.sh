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
set -euo pipefail
cd "$(dirname "$0")/.."
Q=$PWD/bin/qpslab
. bench/pairs.bash
work=$(mktemp -d /tmp/qpslab-slices-XXXXXX)
export QPSLAB_HOME=$work/home
trap '$Q server stop --all >/dev/null 2>&1 || true; rm -rf "$work"' EXIT
TESTS='point-query.pre_range=100,random-points.pre_range=10,random-points.pre_range=100,read-only.pre_range=10,points-covered-pk.pre_range=100,range-covered-pk.pre_range=100,update-index_range=100,update-nonindex_range=100,update-one_range=100,write-only_range=10000,read-only_range=100,point-query_range=100,hot-points_range=100,random-points_range=1000,range-notcovered-si_range=100,scan_range=100'
for s in ${SLICES:-0.1 0.25 0.5 1}; do
  secs=$(echo "4 * $s" | bc)
  n=aa${s/./}
  $Q configs add "$n-a" --family mysql /dev/null >/dev/null
  $Q configs add "$n-b" --family mysql /dev/null >/dev/null
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
