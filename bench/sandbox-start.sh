#!/usr/bin/env bash
# Time to a ready server: qpslab's sandbox (init datadir, start, wait until it
# answers, create the database, stop) against the same steps done by hand the
# way a shell harness does them (mariadb-install-db / initdb, start in the
# background, poll with mysqladmin ping / pg_isready, stop). Interleaved
# A B A B, so the machine's drift hits both alike; prints medians and the ratio.
# The reference harness itself waits a fixed `sleep 10` after ini.sh
# (mytools bench/sysbench.lua/cmp_*.sh), which this does not imitate.
set -euo pipefail
cd "$(dirname "$0")/.."
Q=$PWD/bin/qpslab
ROUNDS=${ROUNDS:-7}
work=$(mktemp -d /tmp/qpslab-bench-XXXXXX); chmod 755 "$work"
export QPSLAB_HOME=$work/home
trap 'QPSLAB_HOME=$work/home $Q server stop --all >/dev/null 2>&1 || true; rm -rf "$work"' EXIT

now() { date +%s%N; }

qpslab_cycle() { # build config
  $Q server start "$1" "$2" --name bench >/dev/null
  $Q server stop bench >/dev/null
}

by_hand_mariadb() {
  local d=$work/hand; rm -rf "$d"; mkdir -p "$d"
  mariadb-install-db --no-defaults --basedir=/usr --datadir="$d/data" --user=root --auth-root-authentication-method=normal >/dev/null 2>&1
  mariadbd --defaults-file="$PWD/internal/config/shipped/default.cnf" --datadir="$d/data" --socket="$d/s" --port=0 \
    --bind-address=127.0.0.1 --user=root --log-error="$d/err" 2>/dev/null & local pid=$!
  until mysqladmin -S "$d/s" -uroot ping >/dev/null 2>&1; do sleep 0.1; done
  mysql -S "$d/s" -uroot -e 'CREATE DATABASE qpslab'
  kill $pid; wait $pid || true
}

by_hand_postgres() {
  local d=$work/hand pgbin=/usr/lib/postgresql/15/bin; rm -rf "$d"; mkdir -p "$d"; chown postgres "$d"
  su postgres -s /bin/sh -c "$pgbin/initdb -D $d/data -U postgres --auth=trust -E UTF8 --locale=C --no-sync >/dev/null"
  cat "$PWD/internal/config/shipped/default.conf" >> "$d/data/postgresql.conf"
  su postgres -s /bin/sh -c "exec $pgbin/postgres -D $d/data -c port=54329 -c listen_addresses=127.0.0.1 -c unix_socket_directories=$d" >"$d/log" 2>&1 & local pid=$!
  until pg_isready -h "$d" -p 54329 -U postgres >/dev/null 2>&1; do sleep 0.1; done
  psql -h "$d" -p 54329 -U postgres -qc 'CREATE DATABASE qpslab'
  kill -INT $pid; wait $pid || true
}

median() { sort -n | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }

for flavor in mariadb postgres; do
  if [ "$flavor" = postgres ] && [ "$(id -u)" != 0 ]; then echo "postgres by hand needs root (su postgres); skipped"; continue; fi
  : >"$work/a"; : >"$work/b"
  for i in $(seq "$ROUNDS"); do
    t0=$(now); qpslab_cycle "$flavor-system" default; t1=$(now); "by_hand_$flavor"; t2=$(now)
    echo $(( (t1 - t0) / 1000000 )) >>"$work/a"; echo $(( (t2 - t1) / 1000000 )) >>"$work/b"
  done
  a=$(median <"$work/a"); b=$(median <"$work/b")
  printf '%-8s start+stop, median of %d interleaved rounds: qpslab %s ms, by hand %s ms, ratio qpslab/by-hand %.2f\n' \
    "$flavor" "$ROUNDS" "$a" "$b" "$(echo "$a / $b" | bc -l)"
done
