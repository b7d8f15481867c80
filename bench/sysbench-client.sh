#!/usr/bin/env bash
# qpslab's client against sysbench 1.0.20 (Debian), on the same sandbox and
# the same tables, in paired rounds (qpslab then sysbench, ROUNDS times, at
# least 7), so that the machine's drift hits both alike. Each figure is the
# median over the rounds of the round's own ratio (qpslab / sysbench): the
# ratio of two medians taken minutes apart is what this machine's drift
# makes unstable.
#  - client CPU per statement (user+system of the whole client process, from
#    GNU time, which reads the same counters as /proc/PID/stat) and QPS, for
#    point-query (oltp_point_select --skip_trx) and read-only_range=10
#    (oltp_read_only --range_size=10) at 1 and 8 threads, closed loop and
#    open loop (--rate at OPEN_SHARE of sysbench's closed-loop rate, the
#    slowest of three short runs first, Poisson arrivals in both);
#  - open loop against closed loop, per statement and paired by round, for
#    both clients; and qpslab's open loop saturated (arrivals at twice its
#    closed-loop rate, so that no worker waits for one): what the pacing
#    and the hand-off alone add;
#  - the load: qpslab's loader (INSERTs, and --load-method copy) against
#    `sysbench prepare`, same tables, rows and threads: rows/s and client CPU
#    per row (qpslab's from its client µs/row over the load's window;
#    sysbench's from GNU time over the whole prepare);
#  - client RSS per connection at 1,024 and 4,096 connections (qpslab's max
#    RSS at N threads less at 1, over N-1), on a sandbox whose config allows
#    them.
# Both connect over the unix socket with server-side prepared statements and
# no warmup (sysbench 1.0 has no --warmup-time).
set -euo pipefail
cd "$(dirname "$0")/.."
Q=$PWD/bin/qpslab
ROUNDS=${ROUNDS:-7}
SECS=${SECS:-10}
ROWS=${ROWS:-200000}
OPEN_SHARE=${OPEN_SHARE:-0.5}
CONNS=${CONNS:-"1024 4096"}
FLAVORS=${FLAVORS:-"mariadb postgres"}
TABLES=2
if [ "$ROUNDS" -lt 7 ]; then echo "sysbench-client.sh: ROUNDS=$ROUNDS: use at least 7 paired rounds" >&2; exit 2; fi
work=$(mktemp -d /tmp/qpslab-bench-XXXXXX); chmod 755 "$work"
export QPSLAB_HOME=$work/home
trap '$Q server stop --all >/dev/null 2>&1 || true; rm -rf "$work"' EXIT

# shellcheck source=bench/pairs.bash
. bench/pairs.bash

# A config that allows 4,096 connections and more, for the RSS runs.
printf '[mysqld]\nmax_connections=5000\n' >"$work/conns.cnf"
printf 'max_connections = 4300\n' >"$work/conns.conf"
$Q configs add conns-my "$work/conns.cnf" --family mysql >/dev/null
$Q configs add conns-pg "$work/conns.conf" --family postgres >/dev/null

for flavor in $FLAVORS; do
  sb=bench-$flavor
  $Q server start "$flavor-system" default --name "$sb" >/dev/null
  sock=$($Q server status "$sb" | awk 'NR==2 {print $8}')
  port=$($Q server status "$sb" | awk 'NR==2 {print $7}')
  if [ "$flavor" = mariadb ]; then
    conn=(--db-driver=mysql --mysql-socket="$sock" --mysql-user=root)
    sbdb=(--mysql-db=sbtest); qdb=(--mysql-db=qpslab)
  else
    conn=(--db-driver=pgsql --pgsql-host="$(dirname "$sock")" --pgsql-port="$port" --pgsql-user=postgres)
    sbdb=(--pgsql-db=sbtest); qdb=(--pgsql-db=qpslab)
  fi
  $Q server sql "$sb" "CREATE DATABASE sbtest" >/dev/null
  common=(--tables=$TABLES --table-size=$ROWS --rand-type=uniform)

  # The load, paired: qpslab's INSERTs, qpslab's copy, sysbench prepare (2
  # threads each).
  : >"$work/lr"; : >"$work/lc"; : >"$work/lcr"; : >"$work/lcc"; : >"$work/lb"; : >"$work/lbc"
  for i in $(seq "$ROUNDS"); do
    for method in insert copy; do
      $Q run sysbench --sandbox "$sb" --tables $TABLES --rows "$ROWS" --load-threads 2 --load-method $method \
        --tests point-query_range=100 --read-secs 0.2 --warmup 0 --out "$work/load.json" 2>"$work/load.log" >/dev/null
      r=$(jq '.runs[] | select(.role == "load") | .totals.rows_per_sec' "$work/load.json")
      c=$(jq '.runs[] | select(.role == "load") | .hw["client_cpu_us/o"] // 0' "$work/load.json")
      if [ $method = insert ]; then echo "$r" >>"$work/lr"; echo "$c" >>"$work/lc"; else echo "$r" >>"$work/lcr"; echo "$c" >>"$work/lcc"; fi
    done
    t0=$(date +%s.%N)
    /usr/bin/time -f '%U %S' -o "$work/t" sysbench oltp_point_select "${conn[@]}" "${sbdb[@]}" "${common[@]}" --threads=2 prepare >/dev/null
    t1=$(date +%s.%N)
    sysbench oltp_point_select "${conn[@]}" "${sbdb[@]}" "${common[@]}" cleanup >/dev/null
    awk -v a="$t0" -v b="$t1" -v n=$((TABLES * ROWS)) 'BEGIN {print n / (b - a)}' >>"$work/lb"
    awk -v c="$(cputime "$work/t")" -v n=$((TABLES * ROWS)) 'BEGIN {print c * 1e6 / n}' >>"$work/lbc"
  done
  # The tables of the last qpslab load stay for the runs below.
  {
    echo
    echo "load of $flavor, $TABLES × $ROWS rows, 2 threads, $ROUNDS paired rounds (medians; ratios are medians of per-round ratios)"
    echo
    echo "| method | qpslab rows/s | sysbench prepare rows/s | rows/s ratio | client CPU µs/row qpslab | client CPU µs/row sysbench | CPU ratio |"
    echo "|---|---|---|---|---|---|---|"
    for m in insert copy; do
      if [ $m = insert ]; then r=$work/lr; c=$work/lc; else r=$work/lcr; c=$work/lcc; fi
      printf '| %s | %.0f | %.0f | %.2f | %.2f | %.2f | %.2f |\n' "$m" "$(median <"$r")" "$(median <"$work/lb")" \
        "$(pairs "$r" "$work/lb" | median)" "$(median <"$c")" "$(median <"$work/lbc")" "$(pairs "$c" "$work/lbc" | median)"
    done
  } | tee -a "$work/report"

  {
    echo
    echo "statements on $flavor, $ROUNDS paired rounds of ${SECS} s (medians; ratios are medians of per-round ratios)"
    echo
    echo "| test | threads | loop | QPS qpslab | QPS sysbench | QPS ratio | CPU µs/stmt qpslab | CPU µs/stmt sysbench | CPU ratio |"
    echo "|---|---|---|---|---|---|---|---|---|"
  } | tee -a "$work/report"
  : >"$work/openclosed"
  # qpslab run: test threads extra-args… → appends QPS and CPU µs/stmt to $1.q, $1.c
  qrun() {
    local out=$1 test=$2 th=$3; shift 3
    /usr/bin/time -f '%U %S' -o "$work/t" $Q run sysbench --sandbox "$sb" --no-load --tables $TABLES --rows "$ROWS" \
      --tests "$test" --threads "$th" --read-secs "$SECS" --warmup 0 "$@" --out "$work/a.json" >/dev/null 2>&1 || true
    jq '.runs[0].totals.qps' "$work/a.json" >>"$out.q"
    jq '.runs[0].totals.tps' "$work/a.json" >"$work/tps"
    awk -v c="$(cputime "$work/t")" -v n="$(jq '.runs[0].totals.statements' "$work/a.json")" 'BEGIN {print c * 1e6 / n}' >>"$out.c"
  }
  # sysbench run: sbtest-args threads extra-args… → likewise
  srun() {
    local out=$1 sbt=$2 th=$3; shift 3
    # shellcheck disable=SC2086
    /usr/bin/time -f '%U %S' -o "$work/t" sysbench $sbt "${conn[@]}" "${qdb[@]}" "${common[@]}" \
      --threads="$th" --time="$SECS" "$@" run >"$work/sb.out"
    awk '/queries:/ {gsub(/\(/, "", $3); print $3; exit}' "$work/sb.out" >>"$out.q"
    awk '/transactions:/ {gsub(/\(/, "", $3); print $3; exit}' "$work/sb.out" >"$work/tps"
    awk -v c="$(cputime "$work/t")" -v n="$(awk '/queries:/ {print $2; exit}' "$work/sb.out")" 'BEGIN {print c * 1e6 / n}' >>"$out.c"
  }
  for spec in "point-query_range=100|oltp_point_select --skip_trx=on" "read-only_range=10|oltp_read_only --range_size=10"; do
    test=${spec%%|*}; sbt=${spec#*|}
    for th in 1 8; do
      rm -f "$work"/{qc,sc,qo,so,qs}.{q,c}; touch "$work"/{qc,sc,qo,so,qs}.{q,c}
      # The open loop's rates, from three short closed-loop runs of
      # sysbench: OPEN_SHARE of the slowest (the machine drifts; a rate the
      # server cannot follow measures nothing), and for the saturated run
      # three times the fastest.
      : >"$work/cal"
      for c in 1 2 3; do
        SECS=3 srun "$work/cal-scratch" "$sbt" "$th"
        cat "$work/tps" >>"$work/cal"
      done
      rate=$(sort -g "$work/cal" | awk 'NR == 1 {printf "%.0f", $1 * '"$OPEN_SHARE"'}')
      sat=$(sort -g "$work/cal" | awk '{m = $1} END {printf "%.0f", m * 3}')
      # Each round runs every variant back to back: closed loop (qpslab,
      # sysbench), open loop at that rate (both), and qpslab's open loop
      # saturated (no worker ever waits for an arrival, so what it adds to
      # closed loop is the pacing and the hand-off alone).
      for i in $(seq "$ROUNDS"); do
        qrun "$work/qc" "$test" "$th"
        srun "$work/sc" "$sbt" "$th"
        qrun "$work/qo" "$test" "$th" --rate "$rate"
        srun "$work/so" "$sbt" "$th" --rate="$rate"
        qrun "$work/qs" "$test" "$th" --rate "$sat" --max-backlog 1000000000
      done
      for loop in closed open; do
        a=$work/qc; b=$work/sc; label=closed
        [ $loop = open ] && a=$work/qo && b=$work/so && label="open, $rate/s"
        printf '| %s | %d | %s | %.0f | %.0f | %.2f | %.2f | %.2f | %.2f |\n' "$test" "$th" "$label" \
          "$(median <"$a.q")" "$(median <"$b.q")" "$(pairs "$a.q" "$b.q" | median)" \
          "$(median <"$a.c")" "$(median <"$b.c")" "$(pairs "$a.c" "$b.c" | median)" | tee -a "$work/report"
      done
      printf '| %s | %d | %.2f | %.2f | %.2f (%s/s) |\n' "$test" "$th" "$(pairs "$work/qo.c" "$work/qc.c" | median)" \
        "$(pairs "$work/so.c" "$work/sc.c" | median)" "$(pairs "$work/qs.c" "$work/qc.c" | median)" "$sat" >>"$work/openclosed"
    done
  done
  {
    echo
    echo "open loop against closed loop on $flavor: CPU per statement, open / closed (medians of per-round ratios)"
    echo
    echo "| test | threads | qpslab, open | sysbench, open | qpslab, open saturated |"
    echo "|---|---|---|---|---|"
    cat "$work/openclosed"
  } | tee -a "$work/report"
  $Q server stop "$sb" >/dev/null

  # Client RSS per connection: qpslab at 1 thread, then at each of CONNS.
  cfg=conns-my; [ "$flavor" = postgres ] && cfg=conns-pg
  $Q server start "$flavor-system" $cfg --name "$sb-conns" >/dev/null
  $Q run sysbench --sandbox "$sb-conns" --tables $TABLES --rows 10000 --tests point-query_range=100 --read-secs 0.2 --warmup 0 \
    --out "$work/r.json" >/dev/null 2>&1
  rss() { # threads → max RSS in KB, and the run's status
    /usr/bin/time -f '%M' -o "$work/t" $Q run sysbench --sandbox "$sb-conns" --no-load --tables $TABLES --rows 10000 \
      --tests point-query_range=100 --threads "$1" --read-secs 5 --warmup 0 --out "$work/r.json" >/dev/null 2>&1 || true
    echo "$(cat "$work/t") $(jq -r '.runs[0].status // "failed"' "$work/r.json" 2>/dev/null)"
  }
  read -r base _ < <(rss 1)
  {
    echo
    echo "client RSS on $flavor, point-query, closed loop, 5 s (max RSS of the qpslab process; $base KB at 1 thread)"
    echo
    echo "| connections | max RSS | RSS per connection | run |"
    echo "|---|---|---|---|"
  } | tee -a "$work/report"
  for n in $CONNS; do
    read -r kb status < <(rss "$n")
    printf '| %d | %.1f MB | %.1f KB | %s |\n' "$n" "$(awk -v k="$kb" 'BEGIN {print k / 1024}')" \
      "$(awk -v k="$kb" -v b="$base" -v n="$n" 'BEGIN {print (k - b) / (n - 1)}')" "$status" | tee -a "$work/report"
  done
  $Q server stop "$sb-conns" >/dev/null
done
echo
echo "== summary"
cat "$work/report"
