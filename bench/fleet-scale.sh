#!/usr/bin/env bash
# How far one PostgreSQL carries a fleet (docs/fleet.md, "How it scales").
# For each N in AGENTS, N qpslab agents (homes of their own, on this
# machine, each under its own --name) work against one PostgreSQL sandbox:
#
#   idle  IDLE seconds with every agent registered and waiting: what the
#         fleet costs PostgreSQL when nothing runs (River's fetch polls and
#         LISTEN, its leader's maintenance, the heartbeats);
#   busy  (N <= BUSY_MAX) JOBS short jobs per agent, queued at once: a
#         sysbench plan of one 1-second test on mariadb-system with a
#         1,000-row table and a small config, so that a job is mostly its
#         server's start and stop.
#
# Per phase: PostgreSQL's connections to the fleet's database, its
# transactions/s (pg_stat_database) and its CPU (its processes' user+system
# time over the phase's wall time, % of one CPU), and the agents' own CPU;
# for busy, the jobs' wall time, throughput, and each job's dispatch delay:
# its start after it was queued or after its agent's previous job ended,
# whichever is later (River's fetch, as the agent sees it).
set -euo pipefail
cd "$(dirname "$0")/.."
Q=${QPSLAB_BIN:-$PWD/bin/qpslab}
AGENTS=${AGENTS:-"1 8 32"}
BUSY_MAX=${BUSY_MAX:-8}
JOBS=${JOBS:-2}
IDLE=${IDLE:-30}
BEAT=${BEAT:-10s}
work=$(mktemp -d /tmp/qpslab-fleet-XXXXXX)
chmod 755 "$work"
export QPSLAB_HOME=$work/pg
pids=()
stop_agents() {
  for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  pids=()
}
cleanup() {
  stop_agents
  QPSLAB_HOME=$work/pg $Q server stop --all >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT

$Q server start postgres-system default --name fleetpg >/dev/null
$Q server sql fleetpg "CREATE DATABASE fleet" >/dev/null
port=$(awk '/^ *port:/ {print $2; exit}' "$QPSLAB_HOME/sandboxes/fleetpg/sandbox.yaml")
user=$(awk '/^ *user:/ {print $2; exit}' "$QPSLAB_HOME/sandboxes/fleetpg/sandbox.yaml")
export QPSLAB_STORE="postgres://$user@127.0.0.1:$port/fleet?sslmode=disable"
printf '[mysqld]\ninnodb_buffer_pool_size=64M\ninnodb_log_file_size=48M\nloose-innodb_redo_log_capacity=96M\n' >"$work/small.cnf"

sql() { $Q server sql fleetpg "$1" | tail -n +2; }
# pgcpu: user+system seconds of PostgreSQL: its postmaster, its live
# backends (its children), and the children it has reaped (PostgreSQL's
# children retitle themselves over their environment, so they are found
# by parent, not by the home their environment named).
pgpid=$(awk '/^pid:/ {print $2; exit}' "$QPSLAB_HOME/sandboxes/fleetpg/sandbox.yaml")
pgcpu() {
  local ticks p
  ticks=$(awk '{print $14 + $15 + $16 + $17}' "/proc/$pgpid/stat")
  for p in /proc/[0-9]*; do
    if [ "$(awk '{print $4}' "$p/stat" 2>/dev/null)" = "$pgpid" ]; then
      ticks=$((ticks + $(awk '{print $14 + $15}' "$p/stat" 2>/dev/null || echo 0)))
    fi
  done
  awk -v t="$ticks" -v hz="$(getconf CLK_TCK)" 'BEGIN {printf "%.2f", t / hz}'
}
# agentcpu: user+system seconds of the agents (qpslab processes whose
# environment names an agent's home; not the servers they start).
agentcpu() {
  local ticks=0 p
  for p in /proc/[0-9]*; do
    if [ "$(cat "$p/comm" 2>/dev/null)" = qpslab ] && grep -qs -- "$work/a-" "$p/environ" 2>/dev/null; then
      ticks=$((ticks + $(awk '{print $14 + $15}' "$p/stat" 2>/dev/null || echo 0)))
    fi
  done
  awk -v t="$ticks" -v hz="$(getconf CLK_TCK)" 'BEGIN {printf "%.2f", t / hz}'
}
xacts() { sql "SELECT xact_commit + xact_rollback FROM pg_stat_database WHERE datname = 'fleet'"; }
conns() { sql "SELECT count(*) FROM pg_stat_activity WHERE datname = 'fleet'"; }
median() { sort -g | awk '{a[NR]=$1} END {if (NR == 0) print "-"; else print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }

# measure SECONDS-OR-COMMAND: PostgreSQL's and the agents' load while it
# lasts; prints "conns xacts/s pg-cpu% agents-cpu% seconds".
measure() {
  local x0 p0 a0 t0 x1 p1 a1 t1 c
  x0=$(xacts); p0=$(pgcpu); a0=$(agentcpu); t0=$(date +%s.%N)
  "$@"
  c=$(conns)
  x1=$(xacts); p1=$(pgcpu); a1=$(agentcpu); t1=$(date +%s.%N)
  awk -v c="$c" -v x="$((x1 - x0))" -v p="$p0" -v P="$p1" -v a="$a0" -v A="$a1" -v t="$t0" -v T="$t1" \
    'BEGIN {d = T - t; printf "%s %.1f %.1f %.1f %.1f\n", c, x / d, 100 * (P - p) / d, 100 * (A - a) / d, d}'
}

echo "PostgreSQL 15 sandbox; agents on this machine ($(nproc) CPUs), heartbeat $BEAT; busy: $JOBS short job(s) per agent"
printf '%-7s %-5s %6s %9s %8s %10s %8s %9s %16s\n' agents phase conns xacts/s pg-cpu% agents-cpu% seconds jobs/min "dispatch med/max"
total=0
for n in $AGENTS; do
  # Agents are added up to n (they stay from the last count).
  while [ "$total" -lt "$n" ]; do
    total=$((total + 1))
    h=$work/a-$total
    mkdir -p "$h"
    chmod 755 "$h"
    QPSLAB_HOME=$h $Q configs add small "$work/small.cnf" >/dev/null
    QPSLAB_HOME=$h $Q agent --name "a-$total" --labels scale --heartbeat "$BEAT" >"$h/agent.log" 2>&1 &
    pids+=($!)
  done
  until [ "$($Q fleet hosts --format json | jq '[.[]? | select(.state == "idle")] | length')" -ge "$n" ]; do sleep 1; done
  read -r c x p a d < <(measure sleep "$IDLE")
  printf '%-7s %-5s %6s %9s %8s %10s %8s %9s %16s\n' "$n" idle "$c" "$x" "$p" "$a" "$d" - -
  [ "$n" -le "$BUSY_MAX" ] || continue
  before=$($Q fleet status --format json | jq '[.jobs[]? | .id] | max // 0')
  busy() {
    for _ in $(seq "$JOBS"); do
      $Q fleet submit sysbench --build mariadb-system --config small --tests point-query_range=100 --tables 1 --rows 1000 \
        --read-secs 1 --warmup 0 --hosts scale --timeout 10m >/dev/null
    done
    until $Q fleet status --format json | jq -e --argjson b "$before" '[.jobs[]? | select(.id > $b and .state != "completed")] | length == 0' >/dev/null; do
      sleep 1
    done
  }
  read -r c x p a d < <(measure busy)
  njobs=$((n * JOBS))
  # Dispatch delay: a job's start after it was queued or after its host's
  # previous job (of this round) ended, whichever is later.
  delays=$($Q fleet status --format json | jq -r --argjson b "$before" '
    def ts: (sub("\\.[0-9]+"; "") | fromdateiso8601) + ((capture("\\.(?<f>[0-9]+)").f // "0") | "0." + . | tonumber);
    [.jobs[]? | select(.id > $b)] | group_by(.job.host)[] | sort_by(.attempted) |
    reduce .[] as $j ({prev: null, out: []};
      ($j.created | ts) as $q |
      ($j.attempted | ts) as $s |
      (if .prev == null or .prev < $q then $q else .prev end) as $ready |
      {prev: ($j.finalized | ts), out: (.out + [$s - $ready])}) | .out[] | . * 1000 | round / 1000')
  printf '%-7s %-5s %6s %9s %8s %10s %8s %9.1f %16s\n' "$n" busy "$c" "$x" "$p" "$a" "$d" \
    "$(awk -v j="$njobs" -v d="$d" 'BEGIN {print 60 * j / d}')" \
    "$(echo "$delays" | median)/$(echo "$delays" | sort -g | tail -1) s"
done
stop_agents
