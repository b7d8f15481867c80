#!/usr/bin/env bash
# qpslab's TPC-C suite against PingCAP's go-tpc (built from the Go module
# proxy into bench/.work/peers, bench/peers.bash), on one sandbox per flavor
# and the same data size: each loads its own copy of the nine tables at
# WAREHOUSES (qpslab into its database qpslab, go-tpc into tpcc) with
# LOAD_THREADS connections, LOAD_ROUNDS paired rounds (qpslab's load, then
# go-tpc prepare --no-check --dropdata); then ROUNDS paired rounds (qpslab
# run tpcc --no-load, then go-tpc tpcc run) of SECS seconds at each thread
# count in THREADS, both closed loop without keying and think times, no
# warmup, over loopback TCP (go-tpc and go-ycsb only speak TCP: qpslab
# --tcp; QPSLAB_TCP=0 puts qpslab on its unix socket).
#
# Per round: NOPM (qpslab: committed New-Orders per minute, its NOPM
# figure; go-tpc: its tpmC, the NEW_ORDER rate, whose 1 % rolled-back
# New-Orders count as done), TPM (transactions of every type per minute,
# rollbacks included on both sides), the client's CPU per transaction
# (user+system of the whole client process, GNU time, over its
# transactions) and, on MariaDB, the statements the server executed per
# transaction (Questions). Prints the median of each side and the median
# of the per-round ratios (qpslab / go-tpc). Goals: throughput within a few
# percent, qpslab's CPU per transaction at most go-tpc's (ratio <= 1),
# qpslab's load rows/s at least go-tpc's (ratio >= 1).
#
# go-tpc v1.0.7 (the newest version the proxy serves) has no PostgreSQL
# driver: on postgres the comparison is said NOT RUN unless GO_TPC_VERSION
# names a served version that has one.
set -euo pipefail
cd "$(dirname "$0")/.."
Q=${QPSLAB_BIN:-$PWD/bin/qpslab}
ROUNDS=${ROUNDS:-7}
LOAD_ROUNDS=${LOAD_ROUNDS:-3}
SECS=${SECS:-10}
WAREHOUSES=${WAREHOUSES:-1}
THREADS=${THREADS:-"2"}
LOAD_THREADS=${LOAD_THREADS:-2}
FLAVORS=${FLAVORS:-"mariadb postgres"}
QPSLAB_TCP=${QPSLAB_TCP:-1}
[ -x "$Q" ] || { echo "bench/tpcc.sh: no $Q: make build" >&2; exit 1; }
"$Q" run tpcc --help >/dev/null 2>&1 || { echo "bench/tpcc.sh: $Q has no tpcc suite: build it from a tree that has one" >&2; exit 1; }
# shellcheck source=bench/pairs.bash
. bench/pairs.bash
# shellcheck source=bench/peers.bash
. bench/peers.bash
build_go_tpc
work=$(mktemp -d /tmp/qpslab-tpcc-XXXXXX); chmod 755 "$work"
export QPSLAB_HOME=$work/home
trap '$Q server stop --all >/dev/null 2>&1 || true; rm -rf "$work"' EXIT
tcp=(); [ "$QPSLAB_TCP" = 1 ] && tcp=(--tcp)

# The server's count of statements (MariaDB's Questions; empty elsewhere).
questions() {
  [ "$flavor" = mariadb ] || return 0
  $Q server sql "$sb" "SHOW GLOBAL STATUS LIKE 'Questions'" | awk 'NR == 2 {print $2}'
}
# The rows of go-tpc's nine tables in its database tpcc.
tables="item warehouse district customer history orders new_order order_line stock"
peer_rows() {
  local q="SELECT 0" t
  for t in $tables; do q="$q + (SELECT COUNT(*) FROM $t)"; done
  if [ "$flavor" = mariadb ]; then
    $Q server sql "$sb" "$(echo "$q" | sed 's/FROM /FROM tpcc./g') AS n" | awk 'NR == 2'
  else
    psql -h "$(dirname "$sock")" -p "$port" -U postgres -d tpcc -Atc "$q"
  fi
}
# per FILE-OF-DELTAS FILE-OF-TX: statements per transaction, per round.
per() { paste "$1" "$2" | awk '$1 != "" && $2 > 0 {print $1 / $2}'; }

# go-tpc's run output → "NOPM TPM transactions errors" (its [Summary] lines:
# each type's Count and Takes(s); tpmC is NEW_ORDER's rate).
gotpc_parse() {
  awk '/^\[Summary\]/ {
         op = $2; c = $0; sub(/.*Count: /, "", c); sub(/,.*/, "", c)
         t = $0; sub(/.*Takes\(s\): /, "", t); sub(/,.*/, "", t)
         if (op ~ /_ERR$/) { err += c; next }
         n += c; if (t > secs) secs = t
       }
       /^tpmC: / { nopm = $2; sub(/,/, "", nopm) }
       END { if (nopm == "" || n == 0) exit 1; print nopm, 60 * n / secs, n, err + 0 }' "$1"
}

report=$work/report
echo "go-tpc $GO_TPC_VERSION against $($Q version 2>/dev/null | head -n 1): $WAREHOUSES warehouse(s), ${SECS}s, threads $THREADS, $ROUNDS paired rounds (load: $LOAD_ROUNDS, $LOAD_THREADS threads); qpslab over ${tcp[*]:-its unix socket}, go-tpc over TCP" | tee "$report"
for flavor in $FLAVORS; do
  sb=bench-tpcc-$flavor
  build=mariadb-system; [ "$flavor" = postgres ] && build=postgres-system
  if [ "$flavor" = postgres ] && ! go_tpc_has_postgres; then
    printf '\n%s: NOT RUN: go-tpc %s has no PostgreSQL driver (its -d takes mysql only); set GO_TPC_VERSION to a version the Go module proxy serves that has one\n' \
      "$flavor" "$GO_TPC_VERSION" | tee -a "$report"
    continue
  fi
  $Q server start "$build" default --name "$sb" >/dev/null
  read -r port sock < <($Q server status "$sb" | awk 'NR==2 {print $7, $8}')
  if [ "$flavor" = mariadb ]; then
    peer=(-d mysql -H 127.0.0.1 -P "$port" -U root -D tpcc)
  else
    peer=(-d postgres -H 127.0.0.1 -P "$port" -U postgres -D tpcc --conn-params sslmode=disable)
  fi
  $Q server sql "$sb" "CREATE DATABASE tpcc" >/dev/null

  # The loads, paired. go-tpc's rows are counted on the server after it.
  : >"$work/lq"; : >"$work/lp"
  for i in $(seq "$LOAD_ROUNDS"); do
    $Q run tpcc --sandbox "$sb" --warehouses "$WAREHOUSES" --load-threads "$LOAD_THREADS" --threads 1 --secs 0.2 --warmup 0 \
      --repeat 1 "${tcp[@]}" --out "$work/load.json" >"$work/load.log" 2>&1 || { cat "$work/load.log" >&2; exit 1; }
    need "$work/load.json" '.runs[] | select(.test == "load") | .totals.rows_per_sec' >>"$work/lq"
    t0=$(date +%s.%N)
    "$GOTPC" tpcc prepare "${peer[@]}" --warehouses "$WAREHOUSES" -T "$LOAD_THREADS" --no-check --dropdata >"$work/prep.log" 2>&1 ||
      { tail -n 20 "$work/prep.log" >&2; exit 1; }
    t1=$(date +%s.%N)
    rows=$(peer_rows)
    awk -v n="$rows" -v a="$t0" -v b="$t1" 'BEGIN {print n / (b - a)}' >>"$work/lp"
  done
  {
    echo
    echo "load on $flavor: $WAREHOUSES warehouse(s), $LOAD_THREADS threads, $LOAD_ROUNDS paired rounds (medians; the ratio is the median of per-round ratios)"
    echo
    echo "| qpslab rows/s | go-tpc prepare rows/s | ratio |"
    echo "|---|---|---|"
    printf '| %.0f | %.0f | %.2f |\n' "$(median <"$work/lq")" "$(median <"$work/lp")" "$(pairs "$work/lq" "$work/lp" | median)"
    echo
    echo "transactions on $flavor: $WAREHOUSES warehouse(s), ${SECS}s, $ROUNDS paired rounds (medians; ratios are medians of per-round ratios, qpslab / go-tpc)"
    echo
    echo "| threads | NOPM qpslab | NOPM go-tpc | NOPM ratio | TPM qpslab | TPM go-tpc | TPM ratio | CPU µs/tx qpslab | CPU µs/tx go-tpc | CPU ratio | statements/tx qpslab | statements/tx go-tpc |"
    echo "|---|---|---|---|---|---|---|---|---|---|---|---|"
  } | tee -a "$report"

  for n in $THREADS; do
    rm -f "$work"/{q,p}.{nopm,tpm,cpu,tx,stm}; touch "$work"/{q,p}.{nopm,tpm,cpu,tx,stm}
    for i in $(seq "$ROUNDS"); do
      s0=$(questions)
      /usr/bin/time -f '%U %S' -o "$work/t" $Q run tpcc --sandbox "$sb" --no-load --warehouses "$WAREHOUSES" --threads "$n" --secs "$SECS" \
        --warmup 0 --repeat 1 "${tcp[@]}" --out "$work/a.json" >"$work/a.log" 2>&1 || { cat "$work/a.log" >&2; exit 1; }
      s1=$(questions)
      st=$(need "$work/a.json" '.runs[] | select(.test == "tpcc") | .status')
      [ "$st" = ok ] || { echo "bench/tpcc.sh: qpslab's tpcc run on $flavor is $st" >&2; cat "$work/a.log" >&2; exit 1; }
      # NOPM and TPM as the suite's figures define them (package tpcc,
      # figures.go): committed New-Orders (the new-order kind less its
      # rollbacks) and every event, per minute of the measured window.
      secs=$(need "$work/a.json" '.runs[] | select(.test == "tpcc") | .totals.seconds')
      ev=$(need "$work/a.json" '.runs[] | select(.test == "tpcc") | .totals.events')
      no=$(need "$work/a.json" '.runs[] | select(.test == "tpcc") | .totals.ops[] | select(.kind == "new-order") | .count')
      rb=$(jq -r '[.runs[] | select(.test == "tpcc") | .totals.ops[] | select(.kind == "new-order-rollback") | .count] | add // 0' "$work/a.json")
      awk -v a="$no" -v b="$rb" -v s="$secs" 'BEGIN {print 60 * (a - b) / s}' >>"$work/q.nopm"
      awk -v e="$ev" -v s="$secs" 'BEGIN {print 60 * e / s}' >>"$work/q.tpm"
      awk -v c="$(cputime "$work/t")" -v e="$ev" 'BEGIN {print c * 1e6 / e}' >>"$work/q.cpu"
      echo "$ev" >>"$work/q.tx"
      [ -n "$s1" ] && echo $((s1 - s0)) >>"$work/q.stm"

      s0=$(questions)
      /usr/bin/time -f '%U %S' -o "$work/t" "$GOTPC" tpcc run "${peer[@]}" --warehouses "$WAREHOUSES" -T "$n" --time "${SECS}s" \
        >"$work/b.log" 2>&1 || { tail -n 20 "$work/b.log" >&2; exit 1; }
      s1=$(questions)
      read -r nopm tpm tx errs < <(gotpc_parse "$work/b.log") || { echo "bench/tpcc.sh: no [Summary] or tpmC in go-tpc's output:" >&2; tail -n 20 "$work/b.log" >&2; exit 1; }
      echo "$nopm" >>"$work/p.nopm"; echo "$tpm" >>"$work/p.tpm"; echo "$tx" >>"$work/p.tx"
      awk -v c="$(cputime "$work/t")" -v e="$tx" 'BEGIN {print c * 1e6 / e}' >>"$work/p.cpu"
      [ -n "$s1" ] && echo $((s1 - s0)) >>"$work/p.stm"
      # go-tpc cancels the transactions in flight when --time ends: up to
      # one failed (NEW_ORDER_ERR …) per thread is that, more is not.
      [ "$errs" -le "$n" ] || echo "go-tpc round $i at $n threads: $errs failed transactions" >&2
    done
    stq=-; stp=-
    if [ -s "$work/q.stm" ]; then
      stq=$(printf '%.1f' "$(per "$work/q.stm" "$work/q.tx" | median)"); stp=$(printf '%.1f' "$(per "$work/p.stm" "$work/p.tx" | median)")
    fi
    printf '| %d | %.0f | %.0f | %.2f | %.0f | %.0f | %.2f | %.1f | %.1f | %.2f | %s | %s |\n' "$n" \
      "$(median <"$work/q.nopm")" "$(median <"$work/p.nopm")" "$(pairs "$work/q.nopm" "$work/p.nopm" | median)" \
      "$(median <"$work/q.tpm")" "$(median <"$work/p.tpm")" "$(pairs "$work/q.tpm" "$work/p.tpm" | median)" \
      "$(median <"$work/q.cpu")" "$(median <"$work/p.cpu")" "$(pairs "$work/q.cpu" "$work/p.cpu" | median)" "$stq" "$stp" | tee -a "$report"
  done
  $Q server stop "$sb" >/dev/null
done
echo
echo "== summary"
cat "$report"
