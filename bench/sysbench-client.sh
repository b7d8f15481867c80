#!/usr/bin/env bash
# qpslab's client against sysbench 1.0.20 (Debian), on the same sandbox and
# the same tables, interleaved A B A B so the machine's drift hits both alike:
#  - client CPU per statement (user+system of the whole client process, from
#    GNU time, which reads the same counters as /proc/PID/stat) and QPS, for
#    point-query (oltp_point_select --skip_trx) and read-only_range=10
#    (oltp_read_only --range_size=10) at 1 and 8 threads;
#  - load rows/s: qpslab's loader against `sysbench prepare`, same tables,
#    rows and threads.
# Both connect over the unix socket with server-side prepared statements and
# no warmup (sysbench 1.0 has no --warmup-time). Prints medians and ratios.
set -euo pipefail
cd "$(dirname "$0")/.."
Q=$PWD/bin/qpslab
ROUNDS=${ROUNDS:-3}
SECS=${SECS:-10}
ROWS=${ROWS:-200000}
TABLES=2
work=$(mktemp -d /tmp/qpslab-bench-XXXXXX); chmod 755 "$work"
export QPSLAB_HOME=$work/home
trap '$Q server stop --all >/dev/null 2>&1 || true; rm -rf "$work"' EXIT

median() { sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.2f", (b == 0 ? 0 : a / b)}'; }
cputime() { awk '{print $1 + $2}' "$1"; } # GNU time -f '%U %S'

for flavor in mariadb postgres; do
  sb=bench-$flavor
  $Q server start "$flavor-system" default --name "$sb" >/dev/null
  sock=$($Q server status "$sb" | awk 'NR==2 {print $8}')
  port=$($Q server status "$sb" | awk 'NR==2 {print $7}')
  if [ "$flavor" = mariadb ]; then
    conn=(--db-driver=mysql --mysql-socket="$sock" --mysql-user=root)
    $Q server sql "$sb" "CREATE DATABASE sbtest" >/dev/null
    sbdb=(--mysql-db=sbtest); qdb=(--mysql-db=qpslab)
  else
    conn=(--db-driver=pgsql --pgsql-host="$(dirname "$sock")" --pgsql-port="$port" --pgsql-user=postgres)
    $Q server sql "$sb" "CREATE DATABASE sbtest" >/dev/null
    sbdb=(--pgsql-db=sbtest); qdb=(--pgsql-db=qpslab)
  fi
  common=(--tables=$TABLES --table-size=$ROWS --rand-type=uniform)

  # Load, A B A B: qpslab's loader (2 connections) and sysbench prepare (2 threads).
  : >"$work/la"; : >"$work/lb"
  for i in $(seq "$ROUNDS"); do
    $Q run sysbench --sandbox "$sb" --tables $TABLES --rows "$ROWS" --load-threads 2 --tests point-query_range=100 \
      --read-secs 0.2 --warmup 0 --out "$work/load.json" 2>"$work/load.log" >/dev/null
    jq '.runs[] | select(.role == "load") | .totals.rows_per_sec' "$work/load.json" >>"$work/la"
    t0=$(date +%s.%N)
    sysbench oltp_point_select "${conn[@]}" "${sbdb[@]}" "${common[@]}" --threads=2 prepare >/dev/null
    t1=$(date +%s.%N)
    sysbench oltp_point_select "${conn[@]}" "${sbdb[@]}" "${common[@]}" cleanup >/dev/null
    awk -v a="$t0" -v b="$t1" -v n=$((TABLES * ROWS)) 'BEGIN {print n / (b - a)}' >>"$work/lb"
  done
  la=$(median <"$work/la"); lb=$(median <"$work/lb")
  printf '%-8s load %d×%d rows, 2 threads: qpslab %.0f rows/s, sysbench prepare %.0f rows/s, ratio %s\n' \
    "$flavor" $TABLES "$ROWS" "$la" "$lb" "$(ratio "$la" "$lb")"

  # The tables qpslab loaded last stay for the runs below.
  for spec in "point-query_range=100|oltp_point_select --skip_trx=on" "read-only_range=10|oltp_read_only --range_size=10"; do
    test=${spec%%|*}; sbt=${spec#*|}
    for th in 1 8; do
      : >"$work/qa"; : >"$work/qb"; : >"$work/ca"; : >"$work/cb"
      for i in $(seq "$ROUNDS"); do
        /usr/bin/time -f '%U %S' -o "$work/t" $Q run sysbench --sandbox "$sb" --no-load --tables $TABLES --rows "$ROWS" \
          --tests "$test" --threads "$th" --read-secs "$SECS" --warmup 0 --out "$work/a.json" >/dev/null 2>&1
        stmts=$(jq '.runs[0].totals.statements' "$work/a.json")
        jq '.runs[0].totals.qps' "$work/a.json" >>"$work/qa"
        awk -v c="$(cputime "$work/t")" -v n="$stmts" 'BEGIN {print c * 1e6 / n}' >>"$work/ca"
        # shellcheck disable=SC2086
        /usr/bin/time -f '%U %S' -o "$work/t" sysbench $sbt "${conn[@]}" "${qdb[@]}" "${common[@]}" \
          --threads="$th" --time="$SECS" run >"$work/sb.out"
        q=$(awk '/queries:/ {print $2; exit}' "$work/sb.out")
        awk '/queries:/ {gsub(/\(/, "", $3); print $3; exit}' "$work/sb.out" >>"$work/qb"
        awk -v c="$(cputime "$work/t")" -v n="$q" 'BEGIN {print c * 1e6 / n}' >>"$work/cb"
      done
      qa=$(median <"$work/qa"); qb=$(median <"$work/qb"); ca=$(median <"$work/ca"); cb=$(median <"$work/cb")
      printf '%-8s %-22s %d thr: QPS qpslab %.0f sysbench %.0f ratio %s | client CPU us/stmt qpslab %.2f sysbench %.2f ratio %s\n' \
        "$flavor" "$test" "$th" "$qa" "$qb" "$(ratio "$qa" "$qb")" "$ca" "$cb" "$(ratio "$ca" "$cb")"
    done
  done
  $Q server stop "$sb" >/dev/null
done
