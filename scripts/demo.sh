#!/usr/bin/env bash
# The qpslab demo: what works so far, end to end, with the real CLI.
# Fetches two registry builds (once; cached after), starts four builds side by
# side (the Debian packages' MariaDB and PostgreSQL, and the fetched MariaDB
# 10.2.11 and PostgreSQL 12.17), asks each for its version, and stops them;
# then runs a few sysbench tests on MariaDB 10.11 and 10.2.11 with qpslab's
# own client.
set -euo pipefail
cd "$(dirname "$0")/.."
Q=./bin/qpslab
# It uses the qpslab home ($QPSLAB_HOME, default ~/.qpslab, /var/lib/qpslab for
# root), so the fetched builds stay for later use; its sandboxes are called
# demo-BUILD and never touch sandboxes of yours.
started=()
cleanup() { [ ${#started[@]} -eq 0 ] || $Q server stop "${started[@]}" || true; }
trap cleanup EXIT
trap 'exit 130' INT TERM

step() { printf '\n\033[1m== %s\033[0m\n' "$*"; }

step "qpslab version"
$Q version

step "fetch registry builds (Maven Central, cached after the first time)"
$Q builds fetch mariadb-10.2.11
$Q builds fetch postgres-12.17.0

step "builds"
$Q builds list

step "configs"
$Q configs list

for b in mariadb-system mariadb-10.2.11 postgres-system postgres-12.17.0; do
  step "start $b with config default"
  $Q server start "$b" default --name "demo-$b"
  started+=("demo-$b")
done

step "sandboxes"
$Q server status

for s in "${started[@]}"; do
  step "query $s"
  $Q server sql "$s" "SELECT version()"
done

step "stop"
$Q server stop "${started[@]}"
started=()
$Q server status

step "sysbench: MariaDB 10.11 against 10.2.11, a few of the 42 tests, short (qpslab run sysbench --list-tests shows them all)"
$Q run sysbench --build mariadb-system --build mariadb-10.2.11 --tables 1 --rows 20000 --threads 1,2 \
  --read-secs 2 --write-secs 2 --insert-secs 2 --warmup 1 --postwrite-scale 0 \
  --tests 'point-query_range=100,random-points_range=100,read-only_range=10,update-index_range=100,insert_range=100'
