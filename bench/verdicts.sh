#!/usr/bin/env bash
# Do qpslab's verdicts hold on this host, and can they see? A/A runs, A/B
# runs whose truth is known, and the demo twice (docs/perf.md, "Verdicts
# with power"). Every figure comes from qpslab compare --format json of
# the runs, as a user would get it.
#
#  (a) A/A at the demo's budget: mariadb-system under two configs with the
#      default's settings, all 42 sysbench tests, 100,000 rows, 3 s of
#      measured time per test, --repeat auto (6 repeats, each from the
#      tables as loaded), --until-decided within the demo's budget (480 s),
#      AA_RUNS times: the share of read tests and of write tests called
#      significant at α = 0.05 over all the looks (the false positives,
#      apart for each pool), called changed (beyond the floor), and called
#      the same within the floor;
#  (b) planted changes of known size on this host's own noise: each A/A
#      run's rounds with the second label's values of the read tests (then
#      of the write tests) times PLANT (0.9 and 0.8: 10 % and 20 % slower),
#      imported as labels of their own and compared: the share called worse
#      is the power at that size (a lower bound of the demo's: these rounds
#      got no more looks for being undecided), and the untouched pool's
#      calls in the same comparison are false positives beside a real
#      change;
#  (c) a setting known to change the writes and not the reads: mariadb-system
#      with innodb_flush_log_at_trx_commit=1 against the default's 2 (a sync
#      per commit), the demo's plan, SETTING_RUNS times: the writes called
#      worse, the reads (an A/A inside the same run) called changed;
#  (d) PostgreSQL 16 against 17 from the registry, hot-points_range=100 within
#      a plan of several tests (--repeat auto, AB_SECS of measured time),
#      AB_RUNS times: its ratio, interval and verdict each time;
#  (e) the demo (MariaDB 10.2.11 against 10.11, 42 tests) twice: its verdict
#      line against its group medians, and how many of the first run's
#      decided verdicts the second run gives again.
#  (f) what each rule of the verdict costs in power: over every comparison
#      of (a) to (d), the calls each rule leaves, the rules added one by one
#      (significant; its relative value beyond the floor; its whole interval
#      beyond the floor; kept by the false-discovery correction; the
#      interval without the between-run σ it took in, to show that rule's
#      part), on the A/A runs (false calls) and on the planted and known
#      changes (power); and how many pools left their first repeats out.
# AA_RUNS, SETTING_RUNS, AB_RUNS, AB_SECS and PLANT set the work (defaults
# 20, 3, 3, 12, "0.9 0.8"); DEMO_RUN=0 leaves out (e); TESTS, a --tests
# pattern, runs fewer tests in (a) and (c) (default: all 42). About 4
# hours on a 2-core VM at the defaults.
set -euo pipefail
cd "$(dirname "$0")/.."
Q=$PWD/bin/qpslab
AA_RUNS=${AA_RUNS:-20}
SETTING_RUNS=${SETTING_RUNS:-3}
AB_RUNS=${AB_RUNS:-3}
AB_SECS=${AB_SECS:-12}
PLANT=${PLANT:-0.9 0.8}
DEMO_RUN=${DEMO_RUN:-1}
TESTS=${TESTS:-}
PG_A=${PG_A:-postgres-16.13.0}
PG_B=${PG_B:-postgres-17.0.0}
command -v jq >/dev/null || { echo "verdicts.sh: jq is missing (make setup installs it)" >&2; exit 2; }
# WORK keeps the store and the files for a second look (default: a
# temporary folder, removed at the end).
if [ -n "${WORK:-}" ]; then
  work=$WORK; mkdir -p "$work"
  trap '$Q server stop --all >/dev/null 2>&1 || true' EXIT
else
  work=$(mktemp -d /tmp/qpslab-verdicts-XXXXXX); chmod 755 "$work"
  trap '$Q server stop --all >/dev/null 2>&1 || true; rm -rf "$work"' EXIT
fi
export QPSLAB_HOME=$work/home
out=$work/out; mkdir -p "$out"
# An empty config (the default's settings): qpslab reads regular files only.
empty=$work/empty.cnf; : >"$empty"

# The demo's budget, as qpslab demo passes it.
DEMO=(--rows 100000 --read-secs 3 --write-secs 3 --insert-secs 3 --warmup 0 --postwrite-scale 0 --until-decided --budget 480 --report-interval 60)
[ -n "$TESTS" ] && DEMO+=(--tests "$TESTS")

# pools FILE…: per comparison and per pool (the JSON's rows hold the
# verdict; a run records whether its step writes, which the JSON's
# verdict names as its pool), the tests significant, changed and the same
# within the floor; then pooled over the comparisons.
pools() {
  [ -e "$1" ] || { echo "  (no runs)"; return 0; }
  jq -s -r '
    def tests($p): [.[] | .rows[] | select(.group != "load") | .others[0] | select((.verdict.pool // "") | startswith($p))];
    ["reads", "writes"][] as $p |
    (tests($p)) as $t | ($t | length) as $n |
    if $n == 0 then empty else
    "  \($p): \($n) test verdicts: \([$t[] | select(.verdict.significant)] | length) significant (\(1000 * ([$t[] | select(.verdict.significant)] | length) / $n | round / 10) %), \([$t[] | select(.verdict.kind == "better" or .verdict.kind == "worse")] | length) changed, \([$t[] | select(.verdict.kind == "equivalent")] | length) the same within the floor, \([$t[] | select(.verdict.kind == "same")] | length) undecided"
    end' "$@"
}

# aa NAME: one A/A run at the demo's budget; its comparison as JSON in
# $out/NAME.json, its results file $out/NAME-runs.json.
aa() {
  local name=$1
  # A run a WORK folder holds already (an interrupted script's) is compared,
  # not run again; one interrupted before its results were written is run
  # again (--replace: its configs were added).
  if [ -s "$out/$name-runs.json" ]; then
    $Q compare "mariadb-system.$name-a" "mariadb-system.$name-b" --format json >"$out/$name.json"
    return 0
  fi
  $Q configs add "$name-a" --family mysql "$empty" --replace >/dev/null
  $Q configs add "$name-b" --family mysql "$empty" --replace >/dev/null
  $Q run sysbench --build mariadb-system --config "$name-a,$name-b" "${DEMO[@]}" --out "$out/$name-runs.json" >"$out/$name.log" 2>&1
  $Q compare "mariadb-system.$name-a" "mariadb-system.$name-b" --format json >"$out/$name.json"
  prune
}

# prune removes the sandboxes of the runs that ended (each run's two
# servers keep 1.2 GB of datadirs: 20 A/A runs left 48 GB).
prune() { $Q server prune >/dev/null; }

echo "== (a) A/A at the demo's budget, $AA_RUNS runs"
for i in $(seq 1 "$AA_RUNS"); do
  t0=$SECONDS
  aa "aa$i"
  echo "  run $i: $((SECONDS - t0)) s; $(grep -c '^== look ' "$out/aa$i.log" || true) look(s) after the first"
done
pools "$out"/aa*[0-9].json

# plant FILE POOL FACTOR TAG: FILE's runs with the second label's rounds
# and figures of POOL's tests (writes true or false) times FACTOR, under
# labels of their own (CONFIG-TAG), into $out/TAG.json (the runs) for
# qpslab import results.
plant() {
  local file=$1 pool=$2 f=$3 tag=$4
  jq --argjson f "$f" --arg w "$pool" --arg tag "$tag" '
    .runs |= map(
      (.config | split("@")) as $c |
      .config = ($c[0] + "-" + $tag + "@" + ($c[1] // "")) |
      if ($c[0] | endswith("-b")) and (.params.writes == $w) then
        .rounds = ((.rounds // []) | map(.value *= $f)) |
        .totals.reported *= $f | .totals.qps *= $f | .totals.tps *= $f
      else . end)' "$file" >"$out/$tag.json"
}

echo "== (b) planted changes on the A/A runs' own rounds: the second label's tests times $PLANT"
for f in $PLANT; do
  for pool in false true; do
    kind=reads; [ "$pool" = true ] && kind=writes
    tag="x${f/./}$kind"
    for i in $(seq 1 "$AA_RUNS"); do
      [ -e "$out/aa$i-runs.json" ] || continue
      plant "$out/aa$i-runs.json" "$pool" "$f" "$tag$i"
      $Q import results "$out/$tag$i.json" >/dev/null
      $Q compare "mariadb-system.aa$i-a-$tag$i" "mariadb-system.aa$i-b-$tag$i" --format json >"$out/$tag$i.cmp.json"
    done
    echo "  $kind times $f:"
    pools "$out/$tag"*.cmp.json
  done
done

echo "== (c) innodb_flush_log_at_trx_commit=1 against 2: writes changed, reads not, $SETTING_RUNS runs"
printf '# qpslab: base=default\n[mysqld]\ninnodb_flush_log_at_trx_commit=1\n' >"$work/sync.cnf"
for i in $(seq 1 "$SETTING_RUNS"); do
  $Q configs add "st$i-a" --family mysql "$empty" --replace >/dev/null
  $Q configs add "st$i-b" --family mysql "$work/sync.cnf" --replace >/dev/null
  $Q run sysbench --build mariadb-system --config "st$i-a,st$i-b" "${DEMO[@]}" >"$out/st$i.log" 2>&1
  $Q compare "mariadb-system.st$i-a" "mariadb-system.st$i-b" --format json >"$out/st$i.json"
  prune
done
pools "$out"/st*.json

echo "== (d) $PG_B against $PG_A, hot-points_range=100 among several tests, --repeat auto, ${AB_SECS} s per test, $AB_RUNS runs"
[ "$AB_RUNS" -gt 0 ] && for b in "$PG_A" "$PG_B"; do $Q builds fetch "$b" >/dev/null; done
for i in $(seq 1 "$AB_RUNS"); do
  $Q configs add "ab$i" --family postgres "$empty" >/dev/null
  $Q run sysbench --build "$PG_A,$PG_B" --config "ab$i" --rows 100000 --read-secs "$AB_SECS" --write-secs "$AB_SECS" --warmup 1 \
    --postwrite-scale 0 --tests 'point-query.pre*,hot-points*,read-only.pre_range=10,update-index*,scan*' >"$out/ab$i.log" 2>&1
  $Q compare "$PG_A.ab$i" "$PG_B.ab$i" --format json >"$out/ab$i.json"
  prune
  jq -r --arg i "$i" '.rows[] | select(.test == "hot-points_range=100") | .others[0] |
    "  run \($i): hot-points_range=100 \(.rel * 1000 | round / 1000) [\(.verdict.lo * 1000 | round / 1000), \(.verdict.hi * 1000 | round / 1000)], \(.verdict.n) rounds in \(.verdict.blocks) repeats (on its \(.verdict.unit)), p=\(.verdict.p), \(.verdict.kind)"' "$out/ab$i.json"
done

# rules WHAT POOL FILE…: the calls each rule leaves over the comparisons'
# tests of POOL (reads, writes; "" for all; not the load), the rules added
# one by one.
rules() {
  local what=$1 pool=$2; shift 2
  [ -e "$1" ] || { echo "  $what: (no comparisons)"; return 0; }
  jq -s -r --arg what "$what" --arg pool "$pool" '
    def l: log;
    [.[] | .rows[] | select(.group != "load") | .others[0].verdict | select(.p != null) | select((.pool // "") | startswith($pool))] as $v |
    ($v | length) as $n |
    def beyond: (.rel | l | fabs) > ((1 + .floor) | l);
    def clears: (.lo > 1 + .floor) or (.hi < 1 / (1 + .floor));
    # The interval without the between-run σ: its half-width scaled by
    # the standard error without it.
    def se0: if (.run_sigma // 0) > 0 and (.plans // 0) > 0 then ((.se * .se - .run_sigma * .run_sigma / .plans) | if . > 0 then sqrt else 0 end) else .se end;
    def clears0: (.rel | l) as $m | (if .se > 0 then (($m - (.lo | l)) * se0 / .se) else 0 end) as $h |
      (($m - $h) > ((1 + .floor) | l)) or (($m + $h) < (-((1 + .floor) | l)));
    def sig0: (.rel | l) as $m | (if .se > 0 then (($m - (.lo | l)) * se0 / .se) else 0 end) as $h | ($m - $h > 0) or ($m + $h < 0);
    "  \($what): \($n) test verdicts; called by significance alone (no run σ) \([$v[] | select(sig0)] | length), with the run σ \([$v[] | select(.significant)] | length); + relative value beyond the floor \([$v[] | select(.significant and beyond)] | length); + interval beyond the floor, without the run σ \([$v[] | select(sig0 and clears0)] | length), with it (the verdict) \([$v[] | select(.kind == "better" or .kind == "worse")] | length); + kept by the false-discovery correction \([$v[] | select((.kind == "better" or .kind == "worse") and (.not_after_fdr | not))] | length); first repeats left out in \([.[] | .pools[]? // [] | .[]? | select(.first_out)] | length) pool(s)"' "$@"
}

echo "== (f) what each rule costs"
rules "A/A (false calls), reads" reads "$out"/aa*[0-9].json
rules "A/A (false calls), writes" writes "$out"/aa*[0-9].json
for f in $PLANT; do
  for kind in reads writes; do
    tag="x${f/./}$kind"
    rules "$kind times $f (power)" "$kind" "$out/$tag"*.cmp.json
  done
done
rules "innodb_flush_log_at_trx_commit=1, writes (power)" writes "$out"/st*.json
rules "innodb_flush_log_at_trx_commit=1, reads (A/A inside the run)" reads "$out"/st*.json
rules "$PG_B against $PG_A" "" "$out"/ab*.json

echo "== (g) what each rule costs, simulated at the demo's design (internal/analysis TestRuleCosts)"
go test -count=1 -run 'TestRuleCosts$' -v ./internal/analysis/ | sed -n 's/^ *rulecost_test.go:[0-9]*: /  /p'

[ "$DEMO_RUN" = 0 ] && exit 0
echo "== (e) the demo twice: MariaDB 10.11 against 10.2.11, 42 tests"
for d in 1 2; do
  t0=$SECONDS
  $Q demo --html "$out/demo$d.html" >"$out/demo$d.log" 2>&1
  echo "  demo $d: $((SECONDS - t0)) s"
  grep '^Verdict' "$out/demo$d.log" | sed 's/^/    /'
  # This demo's own runs: its results file, the newest.
  cp "$(ls -t "$QPSLAB_HOME"/results/demo-*.json | head -1)" "$out/demo$d-runs.json"
  prune
done
# Each demo's comparison of its own runs (under labels of their own), then
# the two side by side.
for d in 1 2; do
  jq --arg d "$d" '.runs |= map(.config = ((.config | split("@"))[0] + "-d" + $d + "@" + ((.config | split("@"))[1] // "")))' "$out/demo$d-runs.json" >"$out/demo$d-own.json"
  $Q import results "$out/demo$d-own.json" >/dev/null
  $Q compare "mariadb-10.2.11.demo-d$d" "mariadb-system.demo-d$d" --format json >"$out/demo$d.json"
done
jq -r '[.rows[] | select(.group != "load") | .others[0].verdict.kind] as $k | [.groups[] | select(.name != "load") | "\(.name) \(.stats[0].median * 100 | round / 100)"] | "  demo: group medians \(join(", ")); verdicts \([$k[] | select(. == "worse")] | length) worse, \([$k[] | select(. == "better")] | length) better, \([$k[] | select(. == "equivalent")] | length) the same, \([$k[] | select(. == "same")] | length) undecided"' "$out/demo1.json" "$out/demo2.json"
jq -s -r '
  [.[0].rows[] | select(.group != "load") | {t: .test, k: .others[0].verdict.kind}] as $a |
  [.[1].rows[] | select(.group != "load") | {t: .test, k: .others[0].verdict.kind}] as $b |
  [$a[] | . as $x | select($x.k == "better" or $x.k == "worse" or $x.k == "equivalent") | {t: $x.t, k: $x.k, k2: ([$b[] | select(.t == $x.t) | .k][0])}] as $d |
  "  reproduced: \([$d[] | select(.k == .k2)] | length) of the first demo'"'"'s \($d | length) decided verdicts the second gives again; contradicted (better against worse, or a change against the same): \([$d[] | select((.k == "better" and .k2 == "worse") or (.k == "worse" and .k2 == "better") or ((.k == "better" or .k == "worse") and .k2 == "equivalent") or (.k == "equivalent" and (.k2 == "better" or .k2 == "worse")))] | length)"' "$out/demo1.json" "$out/demo2.json"
jq -s -r '
  [.[0].rows[] | select(.group != "load") | {t: .test, k: .others[0].verdict.kind, f: (.others[0].verdict.not_after_fdr // false)}] as $a |
  [.[1].rows[] | select(.group != "load") | {t: .test, k: .others[0].verdict.kind}] as $b |
  [$a[] | . as $x | select(($x.k == "better" or $x.k == "worse") and ($x.f | not)) | {t: $x.t, k: $x.k, k2: ([$b[] | select(.t == $x.t) | .k][0])}] as $c |
  "  calls (interval beyond the floor, kept by the correction) the second demo repeats: \([$c[] | select(.k == .k2)] | length) of \($c | length); reversed: \([$c[] | select((.k == "better" and .k2 == "worse") or (.k == "worse" and .k2 == "better"))] | length)"' "$out/demo1.json" "$out/demo2.json"
