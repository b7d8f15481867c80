#!/usr/bin/env bash
# qpslab's Insert Benchmark client (`qpslab run ibench`) on MariaDB and
# PostgreSQL (the system builds), one sandbox each:
#  (a) the client's CPU per operation against the server's for the same
#      work: per inserted row on l.i0 and l.i1, per query on qr100. Each
#      step runs as its own qpslab process (l.x between them builds the
#      indexes, unmeasured). Whole process: the client's user+system time
#      from GNU time, the server's from /proc (its process and children,
#      exited backends included through cutime/cstime) over the same
#      process, divided by the step's rows (l.*) or queries (qr100).
#      Measured window: the run's own hw client_cpu_us/o and
#      server_cpu_us/o. The goal: client ≤ 10 % of server.
#  (b) pacing: how evenly the inserts of qr100 and qr1000 arrive at the
#      server with --pacing smooth (A) and --pacing reference (B), measured
#      outside qpslab: MariaDB's general log in a table (event_time has
#      microseconds), PostgreSQL's log_statement=mod lines with epoch
#      milliseconds (%n). The INSERTs are counted per 100 ms of the clock
#      over the step's planned seconds: the coefficient of variation and the
#      max/mean of those counts, and the CV of the gaps between inserts.
# Each round runs (a) once per client transport in TRANSPORTS (default
# "auto"; e.g. "blocking uring" pairs them round by round), then A B for
# qr100 and A B for qr1000 (PACING=0 leaves (b) out); ROUNDS rounds
# (default 7); medians of the per-round figures and of per-round ratios.
set -euo pipefail
cd "$(dirname "$0")/.."
Q=${QPSLAB_BIN:-$PWD/bin/qpslab} # another build of qpslab to compare
ROUNDS=${ROUNDS:-7}
MR1=${MR1:-0.1}  # million rows loaded by l.i0 (and each round reloaded)
MR2=${MR2:-0.05}  # l.i1 inserts 4/5 of it
SECS=${SECS:-4}  # seconds of inserts of qr100 and qr1000
TRANSPORTS=${TRANSPORTS:-auto}
PACING=${PACING:-1}
work=$(mktemp -d /tmp/qpslab-bench-XXXXXX); chmod 755 "$work"
export QPSLAB_HOME=$work/home
trap '$Q server stop --all >/dev/null 2>&1 || true; rm -rf "$work"' EXIT
HZ=$(getconf CLK_TCK)

median() { sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {if (b == 0) print "inf"; else printf "%.4f\n", a / b}'; }

# servercpu PID: CPU seconds of the server and its children so far; a
# child that exited and was reaped is in its parent's cutime and cstime.
servercpu() {
  # shellcheck disable=SC2046
  cat /proc/"$1"/stat $(pgrep -P "$1" | sed 's|.*|/proc/&/stat|') 2>/dev/null |
    awk -v hz="$HZ" '{sub(/^.*\) /, ""); t += $12 + $13 + $14 + $15} END {printf "%.2f\n", t / hz}'
}

ib() { $Q run ibench --sandbox "$sb" --mr1 "$MR1" --mr2 "$MR2" --query-secs "$SECS" --wait-scale 0 "$@"; }

# cpustep STEP TRANSPORT: runs one step in its own process; appends the
# whole-process and window µs/op of client and server and their ratios to
# $work/STEP.TRANSPORT.*.
cpustep() {
  local step=$1 tr=$2 s0 s1 ops
  s0=$(servercpu "$pid")
  /usr/bin/time -f '%U %S' -o "$work/t" "$Q" run ibench --sandbox "$sb" --mr1 "$MR1" --mr2 "$MR2" --query-secs "$SECS" \
    --rates 100 --wait-scale 0 --steps "$step" --transport "$tr" --out "$work/r.json" >/dev/null 2>"$work/r.log" || { cat "$work/r.log"; exit 1; }
  sleep 0.3 # the backends' exit and reaping
  s1=$(servercpu "$pid")
  if [ "$step" = qr100 ]; then
    ops=$(jq '.runs[0].totals.ops[] | select(.kind == "query") | .count' "$work/r.json")
  else
    ops=$(jq '.runs[0].totals.rows' "$work/r.json")
  fi
  local wc ws cc cs
  wc=$(awk '{printf "%.4f", ($1 + $2) * 1e6 / '"$ops"'}' "$work/t")
  ws=$(awk -v a="$s0" -v b="$s1" -v n="$ops" 'BEGIN {printf "%.4f", (b - a) * 1e6 / n}')
  cc=$(jq '.runs[0].hw["client_cpu_us/o"]' "$work/r.json")
  cs=$(jq '.runs[0].hw["server_cpu_us/o"]' "$work/r.json")
  local f=$work/$step.$tr
  echo "$wc" >>"$f.wc"; echo "$ws" >>"$f.ws"; ratio "$wc" "$ws" >>"$f.wr"
  echo "$cc" >>"$f.cc"; echo "$cs" >>"$f.cs"; ratio "$cc" "$cs" >>"$f.cr"
}

# spread SECS: reads insert arrival times (epoch seconds, one a line, in
# order) and prints the CV and max/mean of the counts per 100 ms of the
# clock over SECS seconds from the first (longer if inserts came later),
# the CV of the gaps between inserts, and the number of inserts.
spread() {
  awk -v secs="$1" '{t[NR] = $1}
    END {
      n = NR; if (n < 2) {print "nan nan nan " n; exit}
      b0 = int(t[1] * 10); nb = secs * 10
      for (i = 1; i <= n; i++) {b = int(t[i] * 10) - b0; c[b]++; if (b + 1 > nb) nb = b + 1}
      m = n / nb
      for (b = 0; b < nb; b++) {x = c[b] + 0; ss += (x - m) ^ 2; if (x > mx) mx = x}
      for (i = 2; i <= n; i++) {g = t[i] - t[i - 1]; gs += g; gq += g * g}
      gm = gs / (n - 1); gv = gq / (n - 1) - gm * gm; if (gv < 0) gv = 0
      printf "%.4f %.4f %.4f %d\n", sqrt(ss / nb) / m, mx / m, sqrt(gv) / gm, n
    }'
}

# pace RATE PACING: runs qrRATE with that pacing and appends its spread to
# $work/pace.RATE.PACING.
pace() {
  local rate=$1 pacing=$2 off
  if [ "$flavor" = mariadb ]; then
    $Q server sql "$sb" "TRUNCATE TABLE mysql.general_log" >/dev/null
  else
    off=$(stat -c %s "$log")
  fi
  ib --rates "$rate" --steps "qr$rate" --pacing "$pacing" --out "$work/p.json" >/dev/null 2>"$work/p.log" || { cat "$work/p.log"; exit 1; }
  if [ "$flavor" = mariadb ]; then
    $Q server sql "$sb" "SELECT UNIX_TIMESTAMP(event_time) FROM mysql.general_log WHERE argument LIKE 'INSERT INTO pi%' ORDER BY event_time" | tail -n +2
  else
    tail -c +$((off + 1)) "$log" | awk '/LOG:  statement: INSERT INTO pi/ {print $1}'
  fi | spread "$SECS" >>"$work/pace.$rate.$pacing"
}

col() { awk -v k="$1" '{print $k}' "$2" | median; }

for flavor in mariadb postgres; do
  sb=ib-$flavor
  out=$($Q server start "$flavor-system" default --name "$sb")
  log=${out##*, log }
  pid=$($Q server status "$sb" | awk 'NR==2 {print $6}')
  ver=$($Q server status "$sb" | awk 'NR==2 {print $3}')
  rm -f "$work"/l.* "$work"/qr100.* "$work"/pace.*
  for i in $(seq "$ROUNDS"); do
    for tr in $TRANSPORTS; do
      for step in l.i0 l.x l.i1 qr100; do cpustep "$step" "$tr"; done
    done
    [ "$PACING" = 0 ] && continue
    if [ "$flavor" = mariadb ]; then
      $Q server sql "$sb" "SET GLOBAL log_output = 'TABLE'" >/dev/null
      $Q server sql "$sb" "SET GLOBAL general_log = 1" >/dev/null
    else
      $Q server sql "$sb" "ALTER SYSTEM SET log_statement = 'mod'" >/dev/null
      $Q server sql "$sb" "ALTER SYSTEM SET log_line_prefix = '%n [%p] '" >/dev/null
      $Q server sql "$sb" "SELECT pg_reload_conf()" >/dev/null
    fi
    for rate in 100 1000; do
      pace "$rate" smooth
      pace "$rate" reference
    done
    if [ "$flavor" = mariadb ]; then
      $Q server sql "$sb" "SET GLOBAL general_log = 0" >/dev/null
    else
      $Q server sql "$sb" "ALTER SYSTEM RESET log_statement" >/dev/null
      $Q server sql "$sb" "SELECT pg_reload_conf()" >/dev/null
    fi
  done

  echo "$flavor $ver, $ROUNDS rounds, l.i0 $MR1 M rows, l.i1 $(awk -v m="$MR2" 'BEGIN {print m * 0.8}') M rows, qr100 $SECS s"
  printf '  %-9s %-6s %-6s | %-40s | %-40s\n' transport step per "whole process: client / server µs, ratio" "measured window: client / server µs, ratio"
  for tr in $TRANSPORTS; do
    for step in l.i0 l.i1 qr100; do
      per=row; [ "$step" = qr100 ] && per=query
      f=$work/$step.$tr
      printf '  %-9s %-6s %-6s | %8.2f / %8.2f  %6.1f %%              | %8.2f / %8.2f  %6.1f %%\n' "$tr" "$step" "$per" \
        "$(median <"$f.wc")" "$(median <"$f.ws")" "$(awk '{print 100 * $1}' "$f.wr" | median)" \
        "$(median <"$f.cc")" "$(median <"$f.cs")" "$(awk '{print 100 * $1}' "$f.cr" | median)"
    done
  done
  if [ "$PACING" = 0 ]; then $Q server stop "$sb" >/dev/null; continue; fi
  echo "  pacing: INSERTs per 100 ms at the server (median of $ROUNDS rounds; ratio: median of per-round reference / smooth)"
  printf '  %-7s | %-22s | %-22s | %-22s | %s\n' step "CV smooth / ref" "max/mean smooth / ref" "gap CV smooth / ref" "inserts"
  for rate in 100 1000; do
    a=$work/pace.$rate.smooth; b=$work/pace.$rate.reference
    paste "$a" "$b" | awk '{print ($1 == 0 ? "inf" : $5 / $1), ($2 == 0 ? "inf" : $6 / $2)}' >"$work/pace.$rate.ratio"
    printf '  %-7s | %5.2f / %5.2f (×%5s) | %5.2f / %5.2f (×%5s) | %5.2f / %5.2f        | %s / %s\n' "qr$rate" \
      "$(col 1 "$a")" "$(col 1 "$b")" "$(col 1 "$work/pace.$rate.ratio" | xargs printf '%.2f')" \
      "$(col 2 "$a")" "$(col 2 "$b")" "$(col 2 "$work/pace.$rate.ratio" | xargs printf '%.2f')" \
      "$(col 3 "$a")" "$(col 3 "$b")" "$(col 4 "$a")" "$(col 4 "$b")"
  done
  $Q server stop "$sb" >/dev/null
done
