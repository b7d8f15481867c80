#!/usr/bin/env bash
# Known A/B pairs at the demo's budget (issue 59's goals, docs/perf.md
# "Known A/B pairs"): two server settings whose effect was measured first
# by a long run, each compared by the demo's plan (3 s a test and label,
# --repeat auto, --until-decided) within a budget of BUDGET seconds for
# the pair (default 600: the issue allows up to 10 minutes).
#
#  (1) writes only: mariadb-system with innodb_flush_log_at_trx_commit=1
#      against the default's 2 (a log sync per commit) on WRITES_TESTS
#      (8 reads and 4 writes): the reads run on servers whose settings
#      differ only in how they flush the log, so they are an A/A inside the
#      run. Goal: at most 1 of the 8 reads called changed, at least 3 of
#      the 4 writes called worse.
#  (2) a read slowdown: READ_SETTING (my.cnf lines; default the
#      performance schema with every instrument and consumer on, and the
#      general query log written to /dev/null: a cost in CPU alone, which
#      measured 10–15 % on READ_TESTS in a long run, docs/perf.md; the
#      general log to a file alone, the earlier default, cost 3–18 % from
#      run to run with the disk) against the default on READ_TESTS (5
#      reads). Goal: at least 3 of the 5 reads called worse, none better.
#      ALLOW (default /dev/null) is passed as --allow-server-file: the
#      files outside the sandbox the setting names.
#
# RUNS (default 1) runs of each; PAIRS (default "1 2") which of the two;
# SECS (default 3, the demo's) the measured seconds per test and label of
# the first look: with few tests, --until-decided's four looks end long
# before the budget, so a pair of 5 tests can spend its 10 minutes only on
# longer tests. Every figure comes from `qpslab compare
# --format json` of the runs. WORK keeps the store and the outputs
# (default: a temporary folder, removed at the end).
set -euo pipefail
cd "$(dirname "$0")/.."
Q=$PWD/bin/qpslab
RUNS=${RUNS:-1}
PAIRS=${PAIRS:-1 2}
BUDGET=${BUDGET:-600}
SECS=${SECS:-3}
READ_SETTING=${READ_SETTING:-"performance_schema=ON
performance-schema-instrument='%=ON'
performance-schema-consumer-events-statements-history-long=ON
performance-schema-consumer-events-stages-history-long=ON
performance-schema-consumer-events-waits-history-long=ON
performance-schema-consumer-events-statements-history=ON
performance-schema-consumer-events-stages-current=ON
performance-schema-consumer-events-waits-current=ON
general_log=ON
general_log_file=/dev/null"}
ALLOW=${ALLOW:-/dev/null}
WRITES_TESTS=${WRITES_TESTS:-point-query.pre_range=100,random-points.pre_range=100,hot-points_range=100,points-covered-pk.pre_range=100,range-covered-pk.pre_range=100,read-only.pre_range=10,scan_range=100,range-notcovered-si.pre_range=100,update-index_range=100,update-nonindex_range=100,insert_range=100,delete_range=100}
READ_TESTS=${READ_TESTS:-point-query_range=100,read-only.pre_range=10,read-only.pre_range=100,read-only_range=10,read-only_range=100}
command -v jq >/dev/null || { echo "known-pairs.sh: jq is missing (make setup installs it)" >&2; exit 2; }
[ -x "$Q" ] || { echo "known-pairs.sh: $Q is missing (run make build first)" >&2; exit 2; }
if [ -n "${WORK:-}" ]; then
  work=$WORK; mkdir -p "$work"
  trap '$Q server stop --all >/dev/null 2>&1 || true' EXIT
else
  work=$(mktemp -d /tmp/qpslab-pairs-XXXXXX)
  trap '$Q server stop --all >/dev/null 2>&1 || true; rm -rf "$work"' EXIT
fi
chmod 755 "$work"
export QPSLAB_HOME=$work/home
out=$work/out; mkdir -p "$out"
empty=$work/empty.cnf; : >"$empty"
printf '# qpslab: base=default\n[mysqld]\ninnodb_flush_log_at_trx_commit=1\n' >"$work/sync.cnf"
printf '# qpslab: base=default\n[mysqld]\n%s\n' "$READ_SETTING" >"$work/slow.cnf"
DEMO=(--rows 100000 --read-secs "$SECS" --write-secs "$SECS" --insert-secs "$SECS" --warmup 0 --postwrite-scale 0 --until-decided --budget "$BUDGET" --report-interval 60)

# pair NAME CNF TESTS: one run of the default against CNF on TESTS; its
# comparison as JSON in $out/NAME.json. A run WORK holds already is
# compared, not run again.
pair() {
  local name=$1 cnf=$2 tests=$3
  if [ ! -s "$out/$name-runs.json" ]; then
    $Q configs add "$name-a" --family mysql "$empty" --replace >/dev/null
    $Q configs add "$name-b" --family mysql "$cnf" --replace >/dev/null
    local t0=$SECONDS
    local allow=()
    [ -z "$ALLOW" ] || allow=(--allow-server-file "$ALLOW")
    $Q run sysbench --build mariadb-system --config "$name-a,$name-b" "${DEMO[@]}" "${allow[@]}" --tests "$tests" --out "$out/$name-runs.json" >"$out/$name.log" 2>&1
    echo "  $name: $((SECONDS - t0)) s"
    $Q server prune >/dev/null
  fi
  $Q compare "mariadb-system.$name-a" "mariadb-system.$name-b" --format json >"$out/$name.json"
  $Q compare "mariadb-system.$name-a" "mariadb-system.$name-b" | grep -E '^(Verdict|  (worse|better|cost))' | sed 's/^/    /'
}

# calls FILE POOL: per test of POOL (reads or writes), its ratio,
# interval and verdict; then the counts.
calls() {
  jq -r --arg p "$2" '
    [.rows[] | select(.group != "load") | select((.others[0].verdict.pool // "") | startswith($p))] as $t |
    ($t[] | "    \(.test): \(.others[0].verdict.rel // "-" | tostring | .[0:5]) [\(.others[0].verdict.lo // "-" | tostring | .[0:5]), \(.others[0].verdict.hi // "-" | tostring | .[0:5])] \(.others[0].verdict.kind)\(if .others[0].verdict.not_after_fdr then " (not after FDR)" else "" end)"),
    "  \($p): \($t | length) tests, \([$t[] | select(.others[0].verdict.kind == "worse")] | length) worse, \([$t[] | select(.others[0].verdict.kind == "better")] | length) better, \([$t[] | select(.others[0].verdict.kind == "equivalent")] | length) the same within the floor, \([$t[] | select(.others[0].verdict.kind == "same")] | length) undecided"' "$1"
}

if [[ " $PAIRS " == *" 1 "* ]]; then
echo "== (1) innodb_flush_log_at_trx_commit=1 against 2, $RUNS run(s): goal at most 1 of 8 reads called, at least 3 of 4 writes worse"
for i in $(seq 1 "$RUNS"); do
  pair "wo$i" "$work/sync.cnf" "$WRITES_TESTS"
  calls "$out/wo$i.json" reads
  calls "$out/wo$i.json" writes
done
fi

[[ " $PAIRS " == *" 2 "* ]] || exit 0
echo "== (2) $(echo "$READ_SETTING" | paste -sd' ') against the default, $RUNS run(s): goal at least 3 of 5 reads worse, none better"
for i in $(seq 1 "$RUNS"); do
  pair "rs$i" "$work/slow.cnf" "$READ_TESTS"
  calls "$out/rs$i.json" reads
done
