#!/usr/bin/env bash
# Seed 001's concurrency sweep, client and server on two "hosts": MariaDB's
# thread pool (pool-of-threads) against one thread per connection, from 4 to
# CLIENTS connections on point-query_range=100 (and read-only_range=10), the
# way the seed ran it with its clients on another machine.
#
# The two hosts are network namespaces joined by a veth pair (10.213.9.1,
# the server's; 10.213.9.2, qpslab's), made here and removed at the end; no
# other address is ever connected to. Two MariaDB servers (Debian's
# mariadbd, started by this script's own command lines with the shipped
# configs pool-of-threads and one-thread-per-connection, which allow 5,000
# connections; the shipped default's 1,000 is below 1,024) listen in the
# server's namespace, pinned to SERVER_CPUS; qpslab runs in the client's,
# pinned to CLIENT_CPUS with --client-cpus, against both as targets
# (qpslab targets add), their passes in turn, REPEAT times. The password is
# in an environment variable, never on a command line.
#
# Prints `qpslab compare` (the sweep's tables by clients: QPS, p99, jain,
# client CPU per statement) and the client's share of its CPU at each
# count, so a reader sees whether the client was the limit; writes them to
# OUT (default bench/.work/seed001-sweep/out; OUT=docs/examples/seed001-sweep
# rewrites the committed ones). Needs root (namespaces) and the Debian
# MariaDB server (make setup installs it).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
Q=${QPSLAB_BIN:-$ROOT/bin/qpslab}
[ -x "$Q" ] || { echo "bench/seed001-sweep.sh: no $Q: run make setup (it builds bin/qpslab)" >&2; exit 1; }
[ "$(id -u)" = 0 ] || { echo "bench/seed001-sweep.sh: network namespaces need root: run it as root" >&2; exit 1; }
CLIENTS=${CLIENTS:-4,16,64,256,1024}
SECS=${SECS:-10}
REPEAT=${REPEAT:-3}
ROWS=${ROWS:-100000}
TESTS=${TESTS:-point-query_range=100,read-only_range=10}
SERVER_CPUS=${SERVER_CPUS:-0}
CLIENT_CPUS=${CLIENT_CPUS:-1}
work=$ROOT/bench/.work/seed001-sweep
OUT=${OUT:-$work/out}
rm -rf "$work/home" "$work/servers"
mkdir -p "$work/servers" "$OUT"
chmod 755 "$work" "$work/servers"
export QPSLAB_HOME=$work/home
S=qpsl-sweep-s C=qpsl-sweep-c SA=10.213.9.1 CA=10.213.9.2
export QPSLAB_SWEEP_PW="sweep-$RANDOM$RANDOM"
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do while kill -0 "$p" 2>/dev/null; do sleep 0.2; done; done
  ip netns del "$S" 2>/dev/null || true
  ip netns del "$C" 2>/dev/null || true
}
trap cleanup EXIT
ip netns del "$S" 2>/dev/null || true
ip netns del "$C" 2>/dev/null || true
ip netns add "$S"
ip netns add "$C"
ip link add qvsweeps type veth peer name qvsweepc
ip link set qvsweeps netns "$S"
ip link set qvsweepc netns "$C"
ip -n "$S" addr add "$SA/30" dev qvsweeps
ip -n "$C" addr add "$CA/30" dev qvsweepc
for ns in "$S" "$C"; do ip -n "$ns" link set lo up; done
ip -n "$S" link set qvsweeps up
ip -n "$C" link set qvsweepc up

server=$(command -v mariadbd || echo /usr/sbin/mariadbd)
port=3306
for cfg in pool-of-threads one-thread-per-connection; do
  d=$work/servers/$cfg
  mkdir -p "$d"
  "$Q" configs show "$cfg" >"$d/my.cnf"
  mariadb-install-db --no-defaults --force --user=root --datadir="$d/data" --auth-root-authentication-method=normal >"$d/install.log" 2>&1
  # The config's settings, then what makes it this host's server: its
  # address and port, a buffer pool both fit in, no binlog.
  ip netns exec "$S" taskset -c "$SERVER_CPUS" "$server" --defaults-file="$d/my.cnf" --user=root --datadir="$d/data" \
    --socket="$d/sock" --port=$port --bind-address=$SA --pid-file="$d/pid" --log-error="$d/error.log" \
    --innodb-buffer-pool-size=512M --skip-log-bin --open-files-limit=20000 &
  pids+=($!)
  for _ in $(seq 600); do mariadb --socket="$d/sock" -uroot -e 'SELECT 1' >/dev/null 2>&1 && break; sleep 0.1; done
  mariadb --socket="$d/sock" -uroot -e "CREATE USER bench@'$CA' IDENTIFIED BY '$QPSLAB_SWEEP_PW'; GRANT ALL ON qpslab.* TO bench@'$CA'; GRANT PROCESS ON *.* TO bench@'$CA'"
  name=${cfg%%-*}   # pool, one
  [ "$name" = one ] && name=perconn
  "$Q" targets add "$name" --flavor mariadb --host $SA --port $port --user bench --password-env QPSLAB_SWEEP_PW >/dev/null
  ip netns exec "$C" "$Q" targets check "$name" | sed -n 2p
  port=$((port + 1))
done

cmd=(run sysbench --target pool,perconn --tests "$TESTS" --threads "$CLIENTS" --rows "$ROWS" --read-secs "$SECS"
  --warmup 2 --repeat "$REPEAT" --client-cpus "$CLIENT_CPUS")
echo "qpslab ${cmd[*]}   (in the client's namespace; servers pinned to CPU $SERVER_CPUS)"
start=$(date +%s)
ip netns exec "$C" "$Q" "${cmd[@]}" --out "$work/sweep.json" >"$work/run.log" 2>&1 || { tail -20 "$work/run.log"; exit 1; }
echo "ran in $(( $(date +%s) - start )) s"
label() { jq -r '.runs[] | select((.role // "") == "") | .build + "." + .config' "$work/sweep.json" | grep "^$1-" | head -1; }
pool=$(label pool) perconn=$(label perconn)
"$Q" compare "$pool" "$perconn" --format md >"$OUT/compare.md"
# The client's CPU: its share of the one CPU it was pinned to (client CPU
# per statement × statements per second), the median over repeats.
{
  echo "| test | label | clients | QPS | client µs/stmt | client CPU % |"
  echo "|---|---|---:|---:|---:|---:|"
  jq -r '.runs[] | select((.role // "") == "" and .hw != null) |
    [.test, .build + "." + .config, .threads, .totals.reported, .hw["client_cpu_us/o"],
     (.hw["client_cpu_us/o"] * .totals.reported / 1e4)] | @tsv' "$work/sweep.json" |
    sort -t$'\t' -k1,1 -k2,2 -k3,3n |
    awk -F'\t' '{k=$1 FS $2 FS $3; q[k]=q[k] " " $4; c[k]=c[k] " " $5; p[k]=p[k] " " $6; if (!(k in seen)) {seen[k]=1; order[++n]=k}}
      function med(s,  a, m, i, j, t) { m = split(s, a, " "); for (i = 1; i <= m; i++) for (j = i + 1; j <= m; j++) if (a[j] < a[i]) {t = a[i]; a[i] = a[j]; a[j] = t}
        return m % 2 ? a[(m + 1) / 2] : (a[m / 2] + a[m / 2 + 1]) / 2 }
      END {for (i = 1; i <= n; i++) {split(order[i], f, FS); printf "| %s | %s | %d | %.0f | %.1f | %.0f |\n", f[1], f[2], f[3], med(q[order[i]]), med(c[order[i]]), med(p[order[i]])}}'
} >"$OUT/client.md"
cat "$OUT/compare.md" "$OUT/client.md"
