#!/usr/bin/env bash
# The client at the machine's limit: qpslab's client CPU per statement on
# each of its transports against sysbench 1.0.20's, on the same sandbox and
# tables, in paired rounds (every variant once per round, back to back, at
# least 7 rounds), for MariaDB and PostgreSQL (the system builds):
#  - point-query (sysbench oltp_point_select --skip_trx=on) at 1 and 8
#    threads, closed loop;
#  - point-query at 1 thread in open loop at OPEN_SHARE of sysbench's
#    closed-loop rate (the slowest of three short runs), Poisson arrivals in
#    both clients, against the same client's closed loop in the same round.
# Client CPU is user + system of the whole client process (GNU time: every
# thread, io_uring's included) over the statements it reports. Every figure
# is the median over the rounds; every ratio the median of the per-round
# ratios. The Insert Benchmark's rows are bench/ibench.sh's (TRANSPORTS=…).
set -euo pipefail
cd "$(dirname "$0")/.."
Q=${QPSLAB_BIN:-$PWD/bin/qpslab}
ROUNDS=${ROUNDS:-7}
SECS=${SECS:-6}
ROWS=${ROWS:-100000}
OPEN_SHARE=${OPEN_SHARE:-0.5}
FLAVORS=${FLAVORS:-"mariadb postgres"}
TRANSPORTS=${TRANSPORTS:-"blocking uring"}
TABLES=2
if [ "$ROUNDS" -lt 7 ]; then echo "client-limit.sh: ROUNDS=$ROUNDS: use at least 7 paired rounds" >&2; exit 2; fi
work=$(mktemp -d /tmp/qpslab-bench-XXXXXX); chmod 755 "$work"
export QPSLAB_HOME=$work/home
trap '$Q server stop --all >/dev/null 2>&1 || true; rm -rf "$work"' EXIT

# shellcheck source=bench/pairs.bash
. bench/pairs.bash

for flavor in $FLAVORS; do
  sb=limit-$flavor
  $Q server start "$flavor-system" default --name "$sb" >/dev/null
  sock=$($Q server status "$sb" | awk 'NR==2 {print $8}')
  port=$($Q server status "$sb" | awk 'NR==2 {print $7}')
  if [ "$flavor" = mariadb ]; then
    conn=(--db-driver=mysql --mysql-socket="$sock" --mysql-user=root --mysql-db=qpslab)
  else
    conn=(--db-driver=pgsql --pgsql-host="$(dirname "$sock")" --pgsql-port="$port" --pgsql-user=postgres --pgsql-db=qpslab)
  fi
  $Q run sysbench --sandbox "$sb" --tables $TABLES --rows "$ROWS" --tests point-query_range=100 --read-secs 0.2 --warmup 0 >/dev/null 2>&1
  # qrun OUT THREADS ARGS…: one qpslab run; appends QPS and CPU µs/stmt to OUT.q, OUT.c
  qrun() {
    local out=$1 th=$2; shift 2
    /usr/bin/time -f '%U %S' -o "$work/t" "$Q" run sysbench --sandbox "$sb" --no-load --tables $TABLES --rows "$ROWS" \
      --tests point-query_range=100 --threads "$th" --read-secs "$SECS" --warmup 0 "$@" --out "$work/a.json" >/dev/null 2>&1 || true
    jq '.runs[0].totals.qps' "$work/a.json" >>"$out.q"
    awk -v c="$(cputime "$work/t")" -v n="$(jq '.runs[0].totals.statements' "$work/a.json")" 'BEGIN {print c * 1e6 / n}' >>"$out.c"
  }
  # srun OUT THREADS ARGS…: one sysbench run, likewise
  srun() {
    local out=$1 th=$2; shift 2
    /usr/bin/time -f '%U %S' -o "$work/t" sysbench oltp_point_select --skip_trx=on "${conn[@]}" --tables=$TABLES \
      --table-size="$ROWS" --rand-type=uniform --threads="$th" --time="$SECS" "$@" run >"$work/sb.out"
    awk '/queries:/ {gsub(/\(/, "", $3); print $3; exit}' "$work/sb.out" >>"$out.q"
    awk -v c="$(cputime "$work/t")" -v n="$(awk '/queries:/ {print $2; exit}' "$work/sb.out")" 'BEGIN {print c * 1e6 / n}' >>"$out.c"
  }
  : >"$work/cal.q"; : >"$work/cal.c"
  for _ in 1 2 3; do SECS=3 srun "$work/cal" 1; done
  rate=$(sort -g "$work/cal.q" | awk 'NR == 1 {printf "%.0f", $1 * '"$OPEN_SHARE"'}')
  for th in 1 8; do
    rm -f "$work"/v-*; for v in sysbench $TRANSPORTS; do touch "$work/v-$v.q" "$work/v-$v.c" "$work/v-$v-open.q" "$work/v-$v-open.c"; done
    for _ in $(seq "$ROUNDS"); do
      for tr in $TRANSPORTS; do qrun "$work/v-$tr" "$th" --transport "$tr"; done
      srun "$work/v-sysbench" "$th"
      if [ "$th" = 1 ]; then
        for tr in $TRANSPORTS; do qrun "$work/v-$tr-open" 1 --transport "$tr" --rate "$rate"; done
        srun "$work/v-sysbench-open" 1 --rate="$rate"
      fi
    done
    {
      echo
      echo "$flavor, point-query, $th thread(s), closed loop, $ROUNDS paired rounds of $SECS s"
      echo
      echo "| client | QPS | CPU µs/stmt | CPU / sysbench's | QPS / sysbench's |"
      echo "|---|---|---|---|---|"
      for v in sysbench $TRANSPORTS; do
        printf '| %s | %.0f | %.2f | %.2f | %.2f |\n' "$v" "$(median <"$work/v-$v.q")" "$(median <"$work/v-$v.c")" \
          "$(pairs "$work/v-$v.c" "$work/v-sysbench.c" | median)" "$(pairs "$work/v-$v.q" "$work/v-sysbench.q" | median)"
      done
      if [ "$th" = 1 ]; then
        echo
        echo "$flavor, point-query, 1 thread, open loop at $rate/s ($OPEN_SHARE of sysbench's slowest closed-loop rate)"
        echo
        echo "| client | QPS | CPU µs/stmt | open / closed, CPU per statement |"
        echo "|---|---|---|---|"
        for v in sysbench $TRANSPORTS; do
          printf '| %s | %.0f | %.2f | %.2f |\n' "$v" "$(median <"$work/v-$v-open.q")" "$(median <"$work/v-$v-open.c")" \
            "$(pairs "$work/v-$v-open.c" "$work/v-$v.c" | median)"
        done
      fi
    } | tee -a "$work/report"
  done
  $Q server stop "$sb" >/dev/null
done
echo
echo "== summary (qpslab at $(git rev-parse --short HEAD 2>/dev/null || echo unknown), $(date -u +%F))"
cat "$work/report"
