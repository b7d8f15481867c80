#!/usr/bin/env bash
# qpslab's YCSB suite against PingCAP's go-ycsb (built from the Go module
# proxy into bench/.work/peers, bench/peers.bash), on one sandbox per flavor
# and the same usertable size: each loads its own usertable of RECORDS rows
# (qpslab in its database qpslab, go-ycsb in ycsb), LOAD_ROUNDS paired
# rounds (qpslab's load, then go-ycsb load with LOAD_THREADS threads and
# YCSB_BATCH rows per INSERT); then ROUNDS paired rounds (qpslab run ycsb
# --no-load, then go-ycsb run) of SECS seconds for each workload in
# WORKLOADS at each thread count in THREADS, closed loop, no warmup, over
# loopback TCP (go-ycsb only speaks TCP: qpslab --tcp; QPSLAB_TCP=0 puts
# qpslab on its unix socket).
#
# go-ycsb runs YCSB's workloads as YCSB's own files define them (and as
# qpslab's suite does, docs/ycsb.md), given here as properties: go-ycsb's
# bundled workloads/ files differ (uniform request distribution for
# a, b, c, e, f; workloade's maxscanlength 1). Its run is bounded by time
# (SIGINT after SECS, to it alone: timeout --foreground, since a second
# SIGINT makes it exit without its totals); for workloadd and
# workloade also by operationcount = RECORDS, as YCSB's files set
# operationcount = recordcount, since that count sizes the key space of the
# workloads that insert, as in qpslab. Its recordcount is the rows its
# usertable has before each run, so that its inserts take new keys, as
# qpslab's counter does.
#
# Per round: operations/s (qpslab: totals.qps, YCSB's [OVERALL] Throughput;
# go-ycsb: its TOTAL's Count less READ_MODIFY_WRITE's, whose read and update
# it counts in TOTAL too, over its run's seconds) and the client's CPU per
# operation (user+system of the whole client process, GNU time, over its
# operations). Prints the median of each side and the median of the
# per-round ratios (qpslab / go-ycsb). Goals: throughput within a few
# percent, qpslab's CPU per operation at most go-ycsb's (ratio <= 1),
# qpslab's load rows/s at least go-ycsb's (ratio >= 1).
set -euo pipefail
cd "$(dirname "$0")/.."
Q=${QPSLAB_BIN:-$PWD/bin/qpslab}
ROUNDS=${ROUNDS:-7}
LOAD_ROUNDS=${LOAD_ROUNDS:-3}
SECS=${SECS:-5}
RECORDS=${RECORDS:-100000}
WORKLOADS=${WORKLOADS:-"workloada workloadc"}
THREADS=${THREADS:-"2"}
LOAD_THREADS=${LOAD_THREADS:-2}
YCSB_BATCH=${YCSB_BATCH:-1}
FLAVORS=${FLAVORS:-"mariadb postgres"}
QPSLAB_TCP=${QPSLAB_TCP:-1}
[ -x "$Q" ] || { echo "bench/ycsb.sh: no $Q: make build" >&2; exit 1; }
"$Q" run ycsb --help >/dev/null 2>&1 || { echo "bench/ycsb.sh: $Q has no ycsb suite: build it from a tree that has one" >&2; exit 1; }
# shellcheck source=bench/pairs.bash
. bench/pairs.bash
# shellcheck source=bench/peers.bash
. bench/peers.bash
build_go_ycsb
work=$(mktemp -d /tmp/qpslab-ycsb-XXXXXX); chmod 755 "$work"
export QPSLAB_HOME=$work/home
trap '$Q server stop --all >/dev/null 2>&1 || true; rm -rf "$work"' EXIT
tcp=(); [ "$QPSLAB_TCP" = 1 ] && tcp=(--tcp)
# cpu FILE: user + system seconds from GNU time -f '%U %S' (its last line:
# a non-zero exit, as timeout's 124, adds a line before it).
cpu() { tail -n 1 "$1" | awk '{print $1 + $2}'; }

# YCSB's workloads/workloada … workloadf (core workload; readallfields,
# fieldcount 10, fieldlength 100, insertorder hashed are go-ycsb's defaults
# as YCSB's).
workload_props() {
  local p=(workload=core readallfields=true writeallfields=false readproportion=0 updateproportion=0 scanproportion=0
    insertproportion=0 readmodifywriteproportion=0 requestdistribution=zipfian maxscanlength=100 scanlengthdistribution=uniform)
  case $1 in
    workloada) p+=(readproportion=0.5 updateproportion=0.5) ;;
    workloadb) p+=(readproportion=0.95 updateproportion=0.05) ;;
    workloadc) p+=(readproportion=1) ;;
    workloadd) p+=(readproportion=0.95 insertproportion=0.05 requestdistribution=latest) ;;
    workloade) p+=(scanproportion=0.95 insertproportion=0.05) ;;
    workloadf) p+=(readproportion=0.5 readmodifywriteproportion=0.5) ;;
    *) echo "bench/ycsb.sh: WORKLOADS: $1 is none of workloada … workloadf" >&2; exit 2 ;;
  esac
  printf -- '-p\n%s\n' "${p[@]}"
}
# go-ycsb's final block (after "Run finished") → "ops/s ops seconds": its TOTAL
# less READ_MODIFY_WRITE (a read-modify-write is one YCSB operation; go-ycsb
# counts its read and its update in TOTAL).
# The seconds are "Run finished, takes" (a Go duration: 4.97s, 950ms,
# 1m2.5s), to the nanosecond, where TOTAL's Takes(s) has one decimal.
goycsb_parse() {
  awk '/^Run finished, takes / {
         d = $4; secs = 0
         if (d ~ /ms$/) { sub(/ms$/, "", d); secs = d / 1000 }
         else if (d ~ /µs$|us$/) { sub(/(µs|us)$/, "", d); secs = d / 1e6 }
         else { if (d ~ /m/) { m = d; sub(/m.*/, "", m); secs = 60 * m; sub(/^[0-9]+m/, "", d) }
                if (d ~ /h/) exit 1
                sub(/s$/, "", d); secs += d }
         f = 1; next }
       f && /^(TOTAL|READ_MODIFY_WRITE) / {
         c = $0; sub(/.*Count: /, "", c); sub(/,.*/, "", c)
         if ($1 == "TOTAL") n = c; else rmw = c
       }
       END { if (n == "" || secs <= 0) exit 1; print (n - rmw) / secs, n - rmw, secs }' "$1"
}

report=$work/report
echo "go-ycsb $GO_YCSB_VERSION against $($Q version 2>/dev/null | head -n 1): $RECORDS records, ${SECS}s, threads $THREADS, $ROUNDS paired rounds (load: $LOAD_ROUNDS; go-ycsb $LOAD_THREADS threads, batch.size $YCSB_BATCH); qpslab over ${tcp[*]:-its unix socket}, go-ycsb over TCP" | tee "$report"
for flavor in $FLAVORS; do
  sb=bench-ycsb-$flavor
  build=mariadb-system; [ "$flavor" = postgres ] && build=postgres-system
  $Q server start "$build" default --name "$sb" >/dev/null
  read -r port sock < <($Q server status "$sb" | awk 'NR==2 {print $7, $8}')
  if [ "$flavor" = mariadb ]; then
    db=mysql; conn=(-p mysql.host=127.0.0.1 -p "mysql.port=$port" -p mysql.user=root -p mysql.db=ycsb)
    count() { $Q server sql "$sb" "SELECT COUNT(*) FROM ycsb.usertable" | awk 'NR == 2'; }
  else
    db=pg; conn=(-p pg.host=127.0.0.1 -p "pg.port=$port" -p pg.user=postgres -p pg.db=ycsb -p pg.sslmode=disable)
    count() { psql -h "$(dirname "$sock")" -p "$port" -U postgres -d ycsb -Atc "SELECT COUNT(*) FROM usertable"; }
  fi
  $Q server sql "$sb" "CREATE DATABASE ycsb" >/dev/null

  # The loads, paired (qpslab's load step runs before any workload: the
  # shortest workloadc after it is not looked at).
  rm -f "$work"/l{q,p,qc,pc}; touch "$work"/l{q,p,qc,pc}
  for i in $(seq "$LOAD_ROUNDS"); do
    $Q run ycsb --sandbox "$sb" --records "$RECORDS" --tests workloadc --secs 0.2 --warmup 0 --repeat 1 "${tcp[@]}" \
      --out "$work/load.json" >"$work/load.log" 2>&1 || { cat "$work/load.log" >&2; exit 1; }
    need "$work/load.json" '.runs[] | select(.test == "load") | .totals.rows_per_sec' >>"$work/lq"
    need "$work/load.json" '.runs[] | select(.test == "load") | .hw["client_cpu_us/o"]' >>"$work/lqc"
    mapfile -t props < <(workload_props workloada)
    /usr/bin/time -f '%U %S' -o "$work/t" "$GOYCSB" load "$db" "${props[@]}" "${conn[@]}" -p "recordcount=$RECORDS" \
      -p "threadcount=$LOAD_THREADS" -p "batch.size=$YCSB_BATCH" -p dropdata=true >"$work/pl.log" 2>&1 ||
      { tail -n 20 "$work/pl.log" >&2; exit 1; }
    # Its TOTAL counts INSERT statements (a batch is one): rows/s is the
    # rows over its run's seconds.
    read -r _ _ secs < <(goycsb_parse "$work/pl.log") || { echo "bench/ycsb.sh: no TOTAL in go-ycsb's load output:" >&2; tail -n 20 "$work/pl.log" >&2; exit 1; }
    [ "$(count)" = "$RECORDS" ] || { echo "bench/ycsb.sh: go-ycsb loaded $(count) rows, not $RECORDS" >&2; exit 1; }
    awk -v n="$RECORDS" -v s="$secs" 'BEGIN {print n / s}' >>"$work/lp"
    awk -v c="$(cpu "$work/t")" -v n="$RECORDS" 'BEGIN {print c * 1e6 / n}' >>"$work/lpc"
  done
  {
    echo
    echo "load on $flavor: $RECORDS records, $LOAD_ROUNDS paired rounds (medians; ratios are medians of per-round ratios); qpslab: one connection, COPY / LOAD DATA, its client CPU over the load's window; go-ycsb: $LOAD_THREADS threads, INSERTs of $YCSB_BATCH row(s), GNU time over its process"
    echo
    echo "| qpslab rows/s | go-ycsb rows/s | ratio | CPU µs/row qpslab | CPU µs/row go-ycsb | CPU ratio |"
    echo "|---|---|---|---|---|---|"
    printf '| %.0f | %.0f | %.2f | %.2f | %.2f | %.2f |\n' "$(median <"$work/lq")" "$(median <"$work/lp")" "$(pairs "$work/lq" "$work/lp" | median)" \
      "$(median <"$work/lqc")" "$(median <"$work/lpc")" "$(pairs "$work/lqc" "$work/lpc" | median)"
    echo
    echo "workloads on $flavor: $RECORDS records, ${SECS}s, $ROUNDS paired rounds (medians; ratios are medians of per-round ratios, qpslab / go-ycsb)"
    echo
    echo "| workload | threads | ops/s qpslab | ops/s go-ycsb | ops/s ratio | CPU µs/op qpslab | CPU µs/op go-ycsb | CPU ratio |"
    echo "|---|---|---|---|---|---|---|---|"
  } | tee -a "$report"

  for w in $WORKLOADS; do
    mapfile -t props < <(workload_props "$w")
    for n in $THREADS; do
      rm -f "$work"/{q,p}.{ops,cpu}; touch "$work"/{q,p}.{ops,cpu}
      for i in $(seq "$ROUNDS"); do
        /usr/bin/time -f '%U %S' -o "$work/t" $Q run ycsb --sandbox "$sb" --no-load --records "$RECORDS" --tests "$w" --threads "$n" \
          --secs "$SECS" --warmup 0 --repeat 1 "${tcp[@]}" --out "$work/a.json" >"$work/a.log" 2>&1 || { cat "$work/a.log" >&2; exit 1; }
        st=$(need "$work/a.json" ".runs[] | select(.test == \"$w\") | .status")
        [ "$st" = ok ] || { echo "bench/ycsb.sh: qpslab's $w run on $flavor is $st" >&2; cat "$work/a.log" >&2; exit 1; }
        need "$work/a.json" ".runs[] | select(.test == \"$w\") | .totals.qps" >>"$work/q.ops"
        ev=$(need "$work/a.json" ".runs[] | select(.test == \"$w\") | .totals.events")
        awk -v c="$(cpu "$work/t")" -v e="$ev" 'BEGIN {print c * 1e6 / e}' >>"$work/q.cpu"

        rows=$(count)
        # operationcount sizes the zipfian key space of the workloads that
        # insert (recordcount + 2 × insertproportion × operationcount, with
        # operationcount = recordcount in qpslab as in YCSB's files): there
        # it is RECORDS, and the run may end before SECS; elsewhere it only
        # bounds the run, and time does.
        opc=1000000000; case $w in workloadd | workloade) opc=$RECORDS ;; esac
        /usr/bin/time -f '%U %S' -o "$work/t" timeout --foreground -s INT -k 30 "$SECS" "$GOYCSB" run "$db" "${props[@]}" "${conn[@]}" \
          -p "recordcount=$rows" -p "operationcount=$opc" -p "threadcount=$n" >"$work/b.log" 2>&1 || true
        read -r ops tx < <(goycsb_parse "$work/b.log") || { echo "bench/ycsb.sh: no TOTAL in go-ycsb's $w output:" >&2; tail -n 20 "$work/b.log" >&2; exit 1; }
        echo "$ops" >>"$work/p.ops"
        awk -v c="$(cpu "$work/t")" -v e="$tx" 'BEGIN {print c * 1e6 / e}' >>"$work/p.cpu"
      done
      printf '| %s | %d | %.0f | %.0f | %.2f | %.1f | %.1f | %.2f |\n' "$w" "$n" \
        "$(median <"$work/q.ops")" "$(median <"$work/p.ops")" "$(pairs "$work/q.ops" "$work/p.ops" | median)" \
        "$(median <"$work/q.cpu")" "$(median <"$work/p.cpu")" "$(pairs "$work/q.cpu" "$work/p.cpu" | median)" | tee -a "$report"
    done
  done
  $Q server stop "$sb" >/dev/null
done
echo
echo "== summary"
cat "$report"
