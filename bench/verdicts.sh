#!/usr/bin/env bash
# Do qpslab's verdicts hold on this host? A/A and A/B runs, repeated, and
# the figures the verdicts issue asks for (docs/perf.md, "Verdicts on a
# noisy host"):
#  (a) A/A at the demo's budget (MariaDB from Debian's packages under two
#      configs with the same settings, all 42 sysbench tests, 100,000 rows,
#      1 s per test, 0.5 s warmup, --repeat 2), AA_RUNS times with
#      test-level interleaving (the default) and PASS_RUNS times with
#      --interleave pass for contrast: the share of per-test ratios within
#      ±5 %, the largest group median's distance from 1, and the share of
#      tests called significant at α = 0.05 (the false-positive rate, which
#      should match α) and called changed (significant and beyond ±5 %);
#  (b) a known A/B: PostgreSQL 16 against 17 from the registry,
#      hot-points_range=100 within a plan of several tests, --repeat 4,
#      AB_RUNS times: its ratio, interval and verdict each time;
#  (c) the demo (MariaDB 10.2.11 against 10.11, 42 tests): how many tests
#      it calls changed.
# Every figure comes from qpslab compare --format json of the runs, as a
# user would get it. AA_RUNS, PASS_RUNS, AB_RUNS and AB_SECS set the work
# (defaults 10, 3, 3, 8): about 90 minutes on a 2-core VM. AA_SECS (default
# 1, the demo's) sets the A/A runs' seconds per test and repeat, to see what
# budget this host needs for goal (a); DEMO_RUN=0 leaves out (c).
set -euo pipefail
cd "$(dirname "$0")/.."
Q=$PWD/bin/qpslab
AA_RUNS=${AA_RUNS:-10}
PASS_RUNS=${PASS_RUNS:-3}
AB_RUNS=${AB_RUNS:-3}
AB_SECS=${AB_SECS:-8}
AA_SECS=${AA_SECS:-1}
DEMO_RUN=${DEMO_RUN:-1}
PG_A=${PG_A:-postgres-16.13.0}
PG_B=${PG_B:-postgres-17.0.0}
command -v jq >/dev/null || { echo "verdicts.sh: jq is missing (make setup installs it)" >&2; exit 2; }
work=$(mktemp -d /tmp/qpslab-verdicts-XXXXXX); chmod 755 "$work"
export QPSLAB_HOME=$work/home
trap '$Q server stop --all >/dev/null 2>&1 || true; rm -rf "$work"' EXIT
out=$work/out; mkdir -p "$out"

# The demo's budget, as qpslab demo passes it (AA_SECS=1).
DEMO=(--rows 100000 --read-secs "$AA_SECS" --write-secs "$AA_SECS" --insert-secs "$AA_SECS" --warmup 0.5 --postwrite-scale 0 --repeat 2 --report-interval 60)

# aa NAME MODE: one A/A run of mariadb-system under two configs with the
# default's settings; its comparison as JSON in $out/NAME.json.
aa() {
  local name=$1 mode=$2
  $Q configs add "$name-a" --family mysql /dev/null >/dev/null
  $Q configs add "$name-b" --family mysql /dev/null >/dev/null
  $Q run sysbench --build mariadb-system --config "$name-a,$name-b" --interleave "$mode" "${DEMO[@]}" >"$out/$name.log" 2>&1
  $Q compare "mariadb-system.$name-a" "mariadb-system.$name-b" --format json >"$out/$name.json"
}

# summary FILE…: per comparison, the tests (not the load) within ±5 %, the
# largest group median's distance from 1 (in %), the tests significant and
# changed; then all of them pooled.
summary() {
  [ -e "$1" ] || { echo "  (no runs)"; return 0; }
  jq -s -r '
    def tests: [.rows[] | select(.group != "load") | .others[0]];
    (map(
      (tests) as $t |
      {n: ($t | length),
       within5: ([$t[] | select(((.rel // 99) - 1 | fabs) <= 0.05)] | length),
       sig: ([$t[] | select(.verdict.significant)] | length),
       changed: ([$t[] | select(.verdict.kind == "better" or .verdict.kind == "worse")] | length),
       groupmax: ([.groups[] | select(.name != "load") | .stats[0].median - 1 | fabs] | max * 100)}
    )) as $runs |
    ($runs[] | "  \(.n) tests: \(.within5) within ±5 % (\(100 * .within5 / .n | floor) %), group medians within ±\(.groupmax * 10 | round / 10) %, \(.sig) significant, \(.changed) changed"),
    ($runs | {n: (map(.n) | add), w: (map(.within5) | add), s: (map(.sig) | add), c: (map(.changed) | add), g2: (map(select(.groupmax <= 2)) | length), runs: length}
      | "  pooled: \(.w) of \(.n) per-test ratios within ±5 % (\(1000 * .w / .n | round / 10) %); every group median within ±2 % in \(.g2) of \(.runs) runs; significant at α = 0.05: \(.s) (\(1000 * .s / .n | round / 10) %); changed: \(.c) (\(1000 * .c / .n | round / 10) %)")
  ' "$@"
}

echo "== (a) A/A at $AA_SECS s per test and repeat (the demo's budget is 1 s): test-level interleaving, $AA_RUNS runs"
for i in $(seq 1 "$AA_RUNS"); do aa "aat$i" test; done
summary "$out"/aat*.json
echo "== (a) for contrast: pass-level interleaving (--interleave pass), $PASS_RUNS runs"
for i in $(seq 1 "$PASS_RUNS"); do aa "aap$i" pass; done
summary "$out"/aap*.json

echo "== (b) $PG_B against $PG_A, hot-points_range=100 among several tests, --repeat 4 × ${AB_SECS} s, $AB_RUNS runs"
for b in "$PG_A" "$PG_B"; do $Q builds fetch "$b" >/dev/null; done
for i in $(seq 1 "$AB_RUNS"); do
  $Q configs add "ab$i" --family postgres /dev/null >/dev/null
  $Q run sysbench --build "$PG_A,$PG_B" --config "ab$i" --rows 100000 --read-secs "$AB_SECS" --write-secs "$AB_SECS" --warmup 1 \
    --postwrite-scale 0 --repeat 4 --tests 'point-query.pre*,hot-points*,read-only.pre_range=10,update-index*,scan*' >"$out/ab$i.log" 2>&1
  $Q compare "$PG_A.ab$i" "$PG_B.ab$i" --format json >"$out/ab$i.json"
  jq -r --arg i "$i" '.rows[] | select(.test == "hot-points_range=100") | .others[0] |
    "  run \($i): hot-points_range=100 \(.rel * 1000 | round / 1000) [\(.verdict.lo * 1000 | round / 1000), \(.verdict.hi * 1000 | round / 1000)], \(.verdict.n) rounds (\(.verdict.pairing)), p=\(.verdict.p), \(.verdict.kind)"' "$out/ab$i.json"
done

[ "$DEMO_RUN" = 0 ] && exit 0
echo "== (c) the demo: MariaDB 10.11 against 10.2.11, 42 tests"
$Q demo >"$out/demo.log" 2>&1
$Q compare mariadb-10.2.11.demo mariadb-system.demo --format json >"$out/demo.json"
jq -r '[.rows[] | select(.group != "load") | .others[0]] as $t |
  "  \($t | length) tests: \([$t[] | select(.verdict.kind == "worse")] | length) worse, \([$t[] | select(.verdict.kind == "better")] | length) better beyond the noise; \([$t[] | select(.verdict.kind == "same")] | length) no significant change, \([$t[] | select(.verdict.kind == "inside the noise floor")] | length) inside the floor, \([$t[] | select(.verdict.kind == "cannot tell")] | length) cannot tell"' "$out/demo.json"
grep '^Verdict' "$out/demo.log" || true
