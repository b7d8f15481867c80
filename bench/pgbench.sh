#!/usr/bin/env bash
# qpslab's script suite against pgbench itself (Debian's, the PostgreSQL
# client programs), on one PostgreSQL sandbox and the same pgbench tables
# (qpslab loads them once, at --scale SCALE; pgbench -n reads the same
# ones), in the same query mode (pgbench -M prepared against qpslab's
# prepared path), interleaved A B A B over ROUNDS paired rounds, for
# pgbench's built-in scripts tpcb-like and select-only at each client
# count in THREADS. Per round: the TPS of each (qpslab: the run's
# totals.tps; pgbench: its "tps =" line) and the client's CPU per
# transaction (user+system of the whole process / transactions, GNU
# time). Prints the median of each side and the median of the per-round
# ratios (qpslab / pgbench). Goal: qpslab's client CPU per transaction at
# most pgbench's (ratio <= 1).
set -euo pipefail
cd "$(dirname "$0")/.."
Q=${QPSLAB_BIN:-$PWD/bin/qpslab}
ROUNDS=${ROUNDS:-7}
SECS=${SECS:-5}
SCALE=${SCALE:-1}
THREADS=${THREADS:-"1 4"}
SCRIPTS=${SCRIPTS:-"select-only tpcb-like"}
PGBENCH=${PGBENCH:-$(ls /usr/lib/postgresql/*/bin/pgbench 2>/dev/null | sort -V | tail -n 1)}
[ -x "$PGBENCH" ] || { echo "bench/pgbench.sh: no pgbench: make setup installs postgresql (its client programs hold pgbench)" >&2; exit 1; }
work=$(mktemp -d /tmp/qpslab-pgbench-XXXXXX); chmod 755 "$work"
export QPSLAB_HOME=$work/home
trap '$Q server stop --all >/dev/null 2>&1 || true; rm -rf "$work"' EXIT

median() { sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }

sb=bench-pgbench
$Q server start postgres-system default --name "$sb" >/dev/null
read -r port sock < <($Q server status "$sb" | awk 'NR==2 {print $7, $8}')
conn=(-h "$(dirname "$sock")" -p "$port" -U postgres qpslab)
# qpslab loads the pgbench tables once (as pgbench -i makes them); both
# clients then read and write the same ones.
$Q run script --sandbox "$sb" --builtin select-only --scale "$SCALE" --secs 0.2 --warmup 0 --out "$work/load.json" >/dev/null 2>&1

echo "$("$PGBENCH" --version) against qpslab run script, scale $SCALE, ${SECS}s, -M prepared, $ROUNDS paired rounds; medians"
for script in $SCRIPTS; do
  for n in $THREADS; do
    : >"$work/ta"; : >"$work/tb"; : >"$work/ca"; : >"$work/cb"; : >"$work/tr"; : >"$work/cr"
    for i in $(seq "$ROUNDS"); do
      /usr/bin/time -f '%U %S' -o "$work/t" $Q run script --sandbox "$sb" --no-init --builtin "$script" --scale "$SCALE" \
        --threads "$n" --secs "$SECS" --warmup 0 --out "$work/a.json" >/dev/null 2>&1
      read -r txa tpsa < <(jq -r --arg s "$script" '.runs[] | select(.test == $s) | "\(.totals.events) \(.totals.tps)"' "$work/a.json")
      read -r ua sa <"$work/t"
      /usr/bin/time -f '%U %S' -o "$work/t" "$PGBENCH" -n -M prepared -b "$script" -c "$n" -j "$n" -T "$SECS" "${conn[@]}" >"$work/pb.out" 2>"$work/pb.err"
      txb=$(awk -F': ' '/number of transactions actually processed/ {split($2, a, "/"); print a[1]; exit}' "$work/pb.out")
      tpsb=$(awk '/^tps = / {print $3; exit}' "$work/pb.out")
      read -r ub sb_ <"$work/t"
      ca=$(awk -v u="$ua" -v s="$sa" -v n="$txa" 'BEGIN {print (u + s) * 1e6 / n}')
      cb=$(awk -v u="$ub" -v s="$sb_" -v n="$txb" 'BEGIN {print (u + s) * 1e6 / n}')
      echo "$tpsa" >>"$work/ta"; echo "$tpsb" >>"$work/tb"; echo "$ca" >>"$work/ca"; echo "$cb" >>"$work/cb"
      awk -v a="$tpsa" -v b="$tpsb" 'BEGIN {print a / b}' >>"$work/tr"
      awk -v a="$ca" -v b="$cb" 'BEGIN {print a / b}' >>"$work/cr"
    done
    printf '%-12s %2d clients: TPS qpslab %.0f pgbench %.0f ratio %.2f | client CPU us/tx qpslab %.1f pgbench %.1f ratio %.2f\n' \
      "$script" "$n" "$(median <"$work/ta")" "$(median <"$work/tb")" "$(median <"$work/tr")" \
      "$(median <"$work/ca")" "$(median <"$work/cb")" "$(median <"$work/cr")"
  done
done
$Q server stop "$sb" >/dev/null
