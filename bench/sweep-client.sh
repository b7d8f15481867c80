#!/usr/bin/env bash
# qpslab's client against sysbench 1.0.20 (Debian) at 1,024 and 4,096
# connections, on the same MariaDB sandbox (one-thread-per-connection,
# max_connections 5000) and the same table, interleaved A B A B over
# ROUNDS paired rounds: the client's peak RSS (GNU time %M, the whole
# process) and its CPU per statement (user+system of the whole process /
# statements). Prints the median of each side and the median of the
# per-round ratios (qpslab / sysbench).
set -euo pipefail
cd "$(dirname "$0")/.."
Q=${QPSLAB_BIN:-$PWD/bin/qpslab}
ROUNDS=${ROUNDS:-7}
SECS=${SECS:-5}
ROWS=${ROWS:-100000}
CONNS=${CONNS:-"1024 4096"}
work=$(mktemp -d /tmp/qpslab-sweep-XXXXXX); chmod 755 "$work"
export QPSLAB_HOME=$work/home
trap '$Q server stop --all >/dev/null 2>&1 || true; rm -rf "$work"' EXIT

median() { sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }

sb=bench-sweep
$Q server start mariadb-system one-thread-per-connection --name "$sb" >/dev/null
sock=$($Q server status "$sb" | awk 'NR==2 {print $8}')
conn=(--db-driver=mysql --mysql-socket="$sock" --mysql-user=root --mysql-db=qpslab)
# qpslab loads the table once; sysbench reads the same one.
$Q run sysbench --sandbox "$sb" --tables 1 --rows "$ROWS" --tests point-query_range=100 --read-secs 0.2 --warmup 0 \
  --out "$work/load.json" >/dev/null 2>&1

echo "client at N connections, point-query (oltp_point_select --skip_trx=on), ${SECS}s, $ROUNDS paired rounds; medians"
for n in $CONNS; do
  : >"$work/ra"; : >"$work/rb"; : >"$work/ca"; : >"$work/cb"; : >"$work/rr"; : >"$work/cr"
  for i in $(seq "$ROUNDS"); do
    /usr/bin/time -f '%U %S %M' -o "$work/t" $Q run sysbench --sandbox "$sb" --no-load --tables 1 --rows "$ROWS" \
      --tests point-query_range=100 --threads "$n" --read-secs "$SECS" --warmup 0 --out "$work/a.json" >/dev/null 2>&1
    stmts=$(jq '.runs[0].totals.statements' "$work/a.json")
    read -r ua sa ma <"$work/t"
    ca=$(awk -v u="$ua" -v s="$sa" -v n="$stmts" 'BEGIN {print (u + s) * 1e6 / n}')
    /usr/bin/time -f '%U %S %M' -o "$work/t" sysbench oltp_point_select --skip_trx=on "${conn[@]}" --tables=1 --table-size="$ROWS" \
      --rand-type=uniform --threads="$n" --time="$SECS" run >"$work/sb.out"
    q=$(awk '/queries:/ {print $2; exit}' "$work/sb.out")
    read -r ub sb_ mb <"$work/t"
    cb=$(awk -v u="$ub" -v s="$sb_" -v n="$q" 'BEGIN {print (u + s) * 1e6 / n}')
    echo "$ma" >>"$work/ra"; echo "$mb" >>"$work/rb"; echo "$ca" >>"$work/ca"; echo "$cb" >>"$work/cb"
    awk -v a="$ma" -v b="$mb" 'BEGIN {print a / b}' >>"$work/rr"
    awk -v a="$ca" -v b="$cb" 'BEGIN {print a / b}' >>"$work/cr"
  done
  printf '%5d conns: RSS MB qpslab %.0f sysbench %.0f ratio %.2f | client CPU us/stmt qpslab %.1f sysbench %.1f ratio %.2f\n' \
    "$n" "$(awk '{print $1/1024}' "$work/ra" | median)" "$(awk '{print $1/1024}' "$work/rb" | median)" "$(median <"$work/rr")" \
    "$(median <"$work/ca")" "$(median <"$work/cb")" "$(median <"$work/cr")"
done
$Q server stop "$sb" >/dev/null
