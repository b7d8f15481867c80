#!/usr/bin/env bash
# The QPS cost of stack captures (qpslab run --pmp): point-query_range=100 on
# one MariaDB 10.11 sandbox (the table loaded once) with no capture, with
# --pmp 10 and with --pmp 1, interleaved: each round runs the three, in an
# order rotated from round to round, so that the machine's drift hits all
# alike. Prints each mode's median QPS, the median of the per-round ratios to
# no capture (paired), and the captures' mean wall time (eu-stack's).
set -euo pipefail
cd "$(dirname "$0")/.."
Q=$PWD/bin/qpslab
ROUNDS=${ROUNDS:-7}
SECS=${SECS:-20}
ROWS=${ROWS:-100000}
THREADS=${THREADS:-1}
work=$(mktemp -d /tmp/qpslab-bench-XXXXXX); chmod 755 "$work"
export QPSLAB_HOME=$work/home
trap '$Q server stop --all >/dev/null 2>&1 || true; rm -rf "$work"' EXIT

median() { sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }

sb=bench-pmp
$Q server start mariadb-system default --name "$sb" >/dev/null
$Q run sysbench --sandbox "$sb" --rows "$ROWS" --tests point-query_range=100 --read-secs 1 --warmup 0 \
  --out "$work/load.json" >/dev/null 2>"$work/err" || { cat "$work/err"; exit 1; }

# run PMP: one measured run with --pmp PMP; appends "QPS pause_ms captures"
# to $work/PMP.
run() {
  $Q run sysbench --sandbox "$sb" --no-load --rows "$ROWS" --tests point-query_range=100 --threads "$THREADS" \
    --read-secs "$SECS" --warmup 2 --pmp "$1" --out "$work/r.json" >/dev/null 2>"$work/err" || { cat "$work/err"; exit 1; }
  jq -r '.runs[] | select(.test == "point-query_range=100") | "\(.totals.reported) \((.stacks // [])[0].pause_mean_ms // 0) \((.stacks // [])[0].captures // 0)"' \
    "$work/r.json" >>"$work/$1"
}

modes=(0 10 1)
: >"$work/0"; : >"$work/10"; : >"$work/1"
for i in $(seq 0 $((ROUNDS - 1))); do
  for j in 0 1 2; do
    run "${modes[$(( (i + j) % 3 ))]}"
  done
done

echo "point-query_range=100, MariaDB 10.11, $THREADS thread(s), $ROWS rows, $ROUNDS rounds of ${SECS} s, interleaved"
echo
echo "| capture | median QPS | QPS / no capture (median of $ROUNDS pairs) | the pairs' ratios, sorted | captures per run | mean capture time |"
echo "|---|---|---|---|---|---|"
for m in 0 10 1; do
  q=$(awk '{print $1}' "$work/$m" | median)
  if [ "$m" = 0 ]; then
    printf '| none | %.0f | 1 | - | - | - |\n' "$q"
    continue
  fi
  r=$(paste "$work/$m" "$work/0" | awk '{print $1 / $4}' | median)
  all=$(paste "$work/$m" "$work/0" | awk '{printf "%.2f\n", $1 / $4}' | sort -g | tr '\n' ' ')
  c=$(awk '{print $3}' "$work/$m" | median)
  p=$(awk '{print $2}' "$work/$m" | median)
  printf '| --pmp %s | %.0f | %.3f | %s| %s | %.0f ms |\n' "$m" "$q" "$r" "$all" "$c" "$p"
done
