#!/usr/bin/env bash
# qpslab bisect, end to end, on a real server (issue 33, docs/bisect.md):
#  1. PostgreSQL 15's source from Debian's source package (bookworm's
#     postgresql-15, PG_DEB_VERSION), fetched with qpslab builds source
#     (apt-get source through qpslab's private apt state; the system's apt
#     config is not changed), from the Debian mirror this machine's sources name;
#     its upstream tarball (postgresql-15_15.18.orig.tar.*) is unpacked;
#  2. made into a local git repository of NCOMMITS commits: commit 1 the
#     pristine tree, each later one a small harmless change (a comment, a
#     README line, a test file), author and committer dates fixed one day
#     apart, so every run makes the same hashes; commit PLANT_AT plants a
#     CPU regression on the point-query path: a busy loop of SPIN iterations
#     of a volatile counter at the top of ExecutorStart, which every
#     statement runs, simple or extended protocol;
#  3. runs `qpslab bisect GOOD BAD` (GOOD commit 1, BAD the last) on the
#     sysbench point-query test and checks that it names the planted commit:
#     the script exits non-zero otherwise. It prints the bisection's wall
#     time and how much of it went to compiles and to runs.
# VIA=serve asks the same question from the dashboard instead (step 3'):
# a history of the builds of commits 1-3 and the last three in a PostgreSQL
# store, qpslab serve --bisect-src REPO and one qpslab agent; the attention
# entry's "bisect this" is pressed through the API as the page's button
# does, and the fleet's bisection must name the planted commit, on the
# entry too (docs/bisect.md).
# The download, the repository and the ccache (when ccache is installed)
# are kept under bench/.work/bisect-e2e/ so a second run fetches nothing
# and compiles from the cache (rm -rf bench/.work to reclaim them); qpslab
# runs with a QPSLAB_HOME of its own there, removed at exit with the servers
# it started (KEEP_HOME=1 keeps it, for qpslab bisect status / history).
# Runs from a fresh checkout after `make setup` (which installs PostgreSQL's
# build dependencies); needs apt-get, git, tar and Debian's mirror.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
Q=${QPSLAB_BIN:-$ROOT/bin/qpslab}

# ---- What the run does: the lead adjusts these at merge. ------------------
PG_DEB_VERSION=${PG_DEB_VERSION:-15.18-0+deb12u1}  # bookworm's postgresql-15
NCOMMITS=${NCOMMITS:-16}
PLANT_AT=${PLANT_AT:-11}       # the commit (1 = pristine) that plants the loop
SPIN=${SPIN:-40000}            # busy-loop iterations per statement (docs/bisect.md: its size)
# The bisection: qpslab bisect GOOD BAD --src REPO "${BISECT_FLAGS[@]}".
# --test is the suite's test name (qpslab run sysbench --list-tests); --set
# passes the sysbench suite's own flags (as qpslab run sysbench takes them):
# a small table, short windows, no postwrite wait. --threshold is fixed so
# a noise floor stored by an earlier --aa cannot change the outcome: the
# planted loop costs about 40 % of point-query's QPS here (a paired ratio
# near 0.6), while an A/A on a busy 2-core host can put the floor beyond
# that (docs/bisect.md).
BISECT_FLAGS=(
  --suite sysbench --test point-query_range=100 --threshold 15%
  --set rows=10000 --set read-secs=4 --set warmup=1 --set postwrite-scale=0
)
# ---------------------------------------------------------------------------

die() { echo "bench/bisect-e2e.sh: $*" >&2; exit 1; }
[ -x "$Q" ] || die "no $Q: run make setup (it builds bin/qpslab)"
for t in apt-get git tar make gcc; do
  command -v "$t" >/dev/null || die "$t is missing: make setup installs PostgreSQL's build dependencies"
done
(( PLANT_AT > 1 && PLANT_AT <= NCOMMITS )) || die "PLANT_AT=$PLANT_AT: must be between 2 and NCOMMITS=$NCOMMITS"

work=$ROOT/bench/.work/bisect-e2e
upstream=${PG_DEB_VERSION%%-*}          # 15.18
mkdir -p "$work"/dl

# ---- 1. Debian's source package, fetched once ------------------------------
# qpslab builds source: apt-get source through qpslab's private apt state
# (the suite's deb-src lists under its cache; the system's apt config is not
# changed), from the Debian mirror this machine's own sources name (MIRROR=
# overrides); a folder that holds the tarball already is not fetched again.
tarball() { ls "$work"/dl/postgresql-15_"$upstream".orig.tar.* 2>/dev/null | head -n 1; }
if [ -z "$(tarball)" ]; then
  echo "== fetching postgresql-15 $PG_DEB_VERSION's source package (qpslab builds source)"
  "$Q" builds source "postgresql-15=$PG_DEB_VERSION" --suite bookworm --into "$work"/dl ${MIRROR:+--mirror "$MIRROR"} >/dev/null ||
    die "qpslab builds source postgresql-15=$PG_DEB_VERSION failed"
  [ -n "$(tarball)" ] || die "the source package brought no postgresql-15_$upstream.orig.tar.*"
fi
echo "== source: $(tarball) ($(du -h "$(tarball)" | cut -f1))"

# ---- 2. the git repository, its commits reproducible -----------------------
repo=$work/repo
day0=1704110400                 # 2024-01-01 12:00:00 UTC: commit N is N-1 days later
export GIT_AUTHOR_NAME="qpslab e2e" GIT_AUTHOR_EMAIL="e2e@qpslab.invalid"
export GIT_COMMITTER_NAME="qpslab e2e" GIT_COMMITTER_EMAIL="e2e@qpslab.invalid"
g() { git -C "$repo" -c core.autocrlf=false -c commit.gpgsign=false -c init.defaultBranch=main "$@"; }
commit() { # N SUBJECT: commit everything as commit N
  local d="@$((day0 + ($1 - 1) * 86400)) +0000"
  g add -A
  GIT_AUTHOR_DATE=$d GIT_COMMITTER_DATE=$d g commit -q --no-verify -m "$2"
}
# A C comment appended to a file: the file recompiles, the program does not change.
note() { printf '\n/* e2e commit %d: %s */\n' "$1" "$2" >>"$repo/$3"; }

# change N: commit N's change and subject (2..NCOMMITS; PLANT_AT plants).
change() {
  local n=$1
  if (( n == PLANT_AT )); then
    plant; return
  fi
  case $(( n % 5 )) in
    0) note "$n" "a comment in the executor" src/backend/executor/execMain.c
       echo "executor: comment ExecutorStart's callers (e2e commit $n)" ;;
    1) note "$n" "a comment in the traffic cop" src/backend/tcop/postgres.c
       echo "tcop: comment the simple-query path (e2e commit $n)" ;;
    2) echo "e2e commit $n: a line in the README." >>"$repo/README"
       echo "README: one more line (e2e commit $n)" ;;
    3) printf -- '-- e2e commit %d: a test file, run by nothing\nSELECT %d;\n' "$n" "$n" >"$repo/src/test/regress/sql/e2e_$n.sql"
       echo "tests: e2e_$n.sql (e2e commit $n)" ;;
    4) note "$n" "a comment in psql's help" src/bin/psql/help.c
       echo "psql: comment the help text (e2e commit $n)" ;;
  esac
}
# plant: the regression, SPIN iterations of a volatile counter at the top of
# ExecutorStart (every statement runs it, through either protocol).
plant() {
  local f=$repo/src/backend/executor/execMain.c
  grep -q '^ExecutorStart(QueryDesc \*queryDesc, int eflags)$' "$f" || die "no ExecutorStart( line in $f: the planted change does not apply to this version"
  awk -v spin="$SPIN" '
    { print }
    prev ~ /^ExecutorStart\(QueryDesc \*queryDesc, int eflags\)$/ && $0 == "{" {
      print "\t/* recheck the query descriptor (e2e: the planted CPU regression) */"
      print "\t{"
      print "\t\tvolatile uint64 e2e_spin = 0;"
      print "\t\tint\t\t\te2e_i;"
      print ""
      print "\t\tfor (e2e_i = 0; e2e_i < " spin "; e2e_i++)"
      print "\t\t\te2e_spin++;"
      print "\t}"
      print ""
    }
    { prev = $0 }' "$f" >"$f.new"
  mv "$f.new" "$f"
  grep -q e2e_spin "$f" || die "the planted change did not apply to $f"
  echo "executor: recheck the query descriptor at ExecutorStart"
}

# The repository is made again unless it is the one this configuration makes
# (its last commit's hash is kept beside it).
stamp="$PG_DEB_VERSION $NCOMMITS $PLANT_AT $SPIN"
if [ -d "$repo/.git" ] && [ "$(cat "$work/repo.stamp" 2>/dev/null)" = "$stamp $(g rev-parse HEAD 2>/dev/null)" ] &&
  [ -z "$(g status --porcelain)" ]; then
  echo "== repository: $repo (kept from an earlier run)"
else
  echo "== making the repository: $repo ($NCOMMITS commits, the regression at commit $PLANT_AT, SPIN=$SPIN)"
  rm -rf "$repo" "$work/repo.stamp"
  mkdir -p "$repo"
  tar -xf "$(tarball)" -C "$repo" --strip-components=1
  g init -q
  commit 1 "PostgreSQL $upstream: the upstream tarball of Debian's postgresql-15 $PG_DEB_VERSION"
  for n in $(seq 2 "$NCOMMITS"); do
    subject=$(change "$n")
    commit "$n" "$subject"
  done
  echo "$stamp $(g rev-parse HEAD)" >"$work/repo.stamp"
fi
hashes=($(g rev-list --reverse --first-parent HEAD))
(( ${#hashes[@]} == NCOMMITS )) || die "$repo has ${#hashes[@]} commits, not $NCOMMITS"
good=${hashes[0]} bad=${hashes[NCOMMITS - 1]} planted=${hashes[PLANT_AT - 1]}
g log --reverse --format='   %h %cd %s' --date=short | sed "s/^   ${planted:0:7}/ * ${planted:0:7}/"
echo "== planted: commit $PLANT_AT, ${planted:0:8} $(g log -1 --format=%s "$planted")"

# ---- 3. the bisection ---------------------------------------------------------
export QPSLAB_HOME=$work/home QPSLAB_CACHE=$work/home/cache # never the caller's cache
bg_pids=()
cleanup() {
  for p in "${bg_pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
  for p in "${bg_pids[@]}"; do wait "$p" 2>/dev/null || true; done
  bg_pids=()
  "$Q" server stop --all >/dev/null 2>&1 || true
  if [ -d "$work/storehome" ]; then
    QPSLAB_HOME=$work/storehome "$Q" server stop --all >/dev/null 2>&1 || true
    rm -rf "$work/storehome"
  fi
  [ "${KEEP_HOME:-0}" = 1 ] || rm -rf "$QPSLAB_HOME"
}
trap cleanup EXIT
cleanup
mkdir -p "$QPSLAB_HOME"
if command -v ccache >/dev/null; then
  # A ccache of its own, kept between runs; paths under the home are
  # rewritten relative so a rebuilt home still hits it.
  export CCACHE_DIR=${CCACHE_DIR:-$work/ccache} CCACHE_BASEDIR=$QPSLAB_HOME CCACHE_NOHASHDIR=1
  ccache -z >/dev/null
  echo "== ccache: $CCACHE_DIR"
else
  echo "== ccache: not installed (every compile is cold)"
fi

if [ "${VIA:-}" = serve ]; then
  # ---- 3'. the bisection asked from the dashboard (VIA=serve) ----------------
  # A PostgreSQL store (a sandbox of the system's PostgreSQL, in a home of its
  # own) with a history of point-query on the builds of commits 1-3 and
  # NCOMMITS-2..NCOMMITS, so that the attention view has a regression
  # between commit 3 and commit NCOMMITS-2; qpslab serve with --bisect-src
  # the repository and one qpslab agent (this home: its builds); the entry
  # found through GET /api/v1/attention and its "bisect this" pressed through
  # POST /api/v1/attention/{key}/bisect with a token of the triage scope, as
  # the page's button does; then the fleet job is waited for, and the
  # bisection it stored must name the planted commit, on the entry too.
  log=$work/bisect-serve.log
  : >"$log"
  say() { echo "$*" | tee -a "$log"; }
  api() { curl -fsS "$url/api/v1/$1"; }
  start_s=$(date +%s)
  (( NCOMMITS >= 8 && PLANT_AT > 3 && PLANT_AT < NCOMMITS - 2 )) || die "VIA=serve needs PLANT_AT from 4 to NCOMMITS-3"
  QPSLAB_HOME=$work/storehome "$Q" server start postgres-system default --name e2estore >/dev/null ||
    die "could not start the store's PostgreSQL (qpslab server start postgres-system; make setup installs it)"
  QPSLAB_HOME=$work/storehome "$Q" server sql e2estore "CREATE DATABASE e2e" >/dev/null
  sb=$work/storehome/sandboxes/e2estore/sandbox.yaml
  port=$(awk '/^ *port:/ {print $2; exit}' "$sb") user=$(awk '/^ *user:/ {print $2; exit}' "$sb")
  export QPSLAB_STORE="postgres://$user@127.0.0.1:$port/e2e?sslmode=disable"
  say "== store: $QPSLAB_STORE"
  hist=()
  for n in 1 2 3 $((NCOMMITS - 2)) $((NCOMMITS - 1)) "$NCOMMITS"; do
    h=${hashes[n - 1]}
    "$Q" builds compile "$repo" --commit "$h" >>"$log" 2>&1 ||
      die "qpslab builds compile of commit $n failed (see $log)"
    # (awk reads all of it: a reader that stops early breaks the pipe, and pipefail the script)
    hist+=("$("$Q" builds list | awk -v h="_${h:0:8}" 'substr($1, length($1) - 8) == h && !n++ { print $1 }')")
    [ -n "${hist[-1]}" ] || die "no build of commit $n (${h:0:8}) after qpslab builds compile (see $log)"
  done
  say "== the history: ${hist[*]}"
  "$Q" run sysbench --build "$(IFS=,; echo "${hist[*]}")" --tests point-query_range=100 --repeat 2 \
    --rows 10000 --read-secs 4 --warmup 1 --postwrite-scale 0 >>"$log" 2>&1 ||
    die "the history's runs failed (see $log)"
  "$Q" agent --name e2e --heartbeat 2s >>"$work/agent.log" 2>&1 &
  bg_pids+=($!)
  "$Q" serve --listen 127.0.0.1:0 --poll 2s --bisect-src "$repo" >"$work/serve.log" 2>&1 &
  bg_pids+=($!)
  tok=$("$Q" tokens create e2e --scope read,triage 2>/dev/null)
  url=
  for _ in $(seq 120); do
    url=$(sed -n 's/^qpslab serve: \(http:[^ ]*\) .*/\1/p' "$work/serve.log" | head -n 1)
    [ -n "$url" ] && break
    sleep 1
  done
  [ -n "$url" ] || die "qpslab serve did not start (see $work/serve.log)"
  # The button refuses (409) while no agent is live: wait for its
  # registration, as a user would see it in qpslab fleet hosts.
  for _ in $(seq 120); do
    "$Q" fleet hosts --format json 2>/dev/null | jq -e '.[] | select(.name == "e2e" and (.state == "idle" or .state == "working"))' >/dev/null && break
    kill -0 "${bg_pids[0]}" 2>/dev/null || die "the agent ended (see $work/agent.log)"
    sleep 1
  done
  key=
  for _ in $(seq 300); do # the attention view is found at the server's first poll
    key=$(api attention | jq -r '[.entries[] | select(.bisect.offer) | .key] | first // empty')
    [ -n "$key" ] && break
    sleep 2
  done
  [ -n "$key" ] || die "no attention entry offers a bisection: $(api 'attention?attention=all' | head -c 2000)"
  say "== entry $key: $(api attention | jq -c --arg k "$key" '.entries[] | select(.key == $k) | .bisect')"
  # The script's --set flags and --threshold, as the request's JSON.
  set_json=$(printf '%s\n' "${BISECT_FLAGS[@]}" |
    awk '$0 == "--set" { getline; split($0, kv, "="); printf "%s\"%s\": \"%s\"", n++ ? ", " : "", kv[1], kv[2] }')
  threshold=$(printf '%s\n' "${BISECT_FLAGS[@]}" | awk '$0 == "--threshold" { getline; sub(/%$/, ""); print $0 / 100 }')
  body="{\"set\": {$set_json}, \"threshold\": $threshold}"
  say "== POST $url/api/v1/attention/$key/bisect $body"
  curl -sS --fail-with-body -X POST -H "Authorization: Bearer $tok" -H 'Content-Type: application/json' -d "$body" \
    "$url/api/v1/attention/$key/bisect" | jq -c . | tee -a "$log"
  # Until it ends, each new line the entry shows: the entry the button
  # was on, then (its builds' runs move the change point) the one that
  # shows the bisection.
  t0=$(date +%s) last= id=
  while :; do
    b=$("$Q" bisect status --format json |
      jq -c --arg k "$key" '[.[] | select(.params.attention == $k)] | first // empty')
    st=queued
    [ -z "$b" ] || { st=$(jq -r .state <<<"$b"); id=$(jq -r .id <<<"$b"); }
    line=$(api 'attention?attention=all' | jq -r --arg k "$key" --arg id "${id:-0}" '[.entries[]
      | select(.key == $k or .bisect.bisection == ($id | tonumber)) | .bisect.status // empty] | last // ""')
    [ "$line" != "$last" ] && say "$(printf '%6d' $(($(date +%s) - t0)))s $line" && last=$line
    case $st in queued|running) ;; *) break ;; esac
    kill -0 "${bg_pids[0]}" 2>/dev/null || die "the agent ended (see $work/agent.log)"
    (( $(date +%s) - t0 < ${WAIT:-7200} )) || die "the bisection did not end in ${WAIT:-7200}s"
    sleep 5
  done
  wall=$(($(date +%s) - t0)) all=$(($(date +%s) - start_s))
  result=$(jq -r '.result' <<<"$b")
  say "== bisection $id: $st: $result"
  found=$(sed -n 's/^first bad commit: \([0-9a-f]\{8,\}\).*/\1/p' <<<"$result")
  [ -n "$found" ] ||
    die "the bisection asked from the dashboard named no first bad commit ($st: $result; $work/agent.log)"
  [ "${planted:0:${#found}}" = "$found" ] ||
    die "the bisection asked from the dashboard named $found, not the planted commit ${planted:0:8}"
  shown=$(api 'attention?attention=all' |
    jq -r --arg id "$id" '[.entries[] | select(.bisect.bisection == ($id | tonumber)) | .bisect.status] | first // empty')
  # The bisection's runs are runs: with its builds in the history, the
  # change point may arrive elsewhere, or (a noisy final step on a busy
  # host) no longer be found at all; an entry that remains must show it.
  entries=$(api 'attention?attention=all' | jq '.entries | length')
  if [ "$entries" = 0 ]; then
    say "== no attention entry remains: with the bisection's runs in the history detect finds no change point"
  else
    say "== the entry says: $shown"
    [[ $shown == *"first bad commit: ${planted:0:8}"* ]] || die "the attention entry does not show the answer"
  fi
  say "== PASS (VIA=serve): the bisection asked from the dashboard named the planted commit ${planted:0:8}" \
    "(commit $PLANT_AT of $NCOMMITS) in ${wall}s from the button (${all}s with the history's compiles and runs)"
  exit 0
fi

log=$work/bisect.log
echo "== $(basename "$Q") bisect ${good:0:8} ${bad:0:8} --src $repo ${BISECT_FLAGS[*]}"
# Every line of the output with the seconds since the start, for the phase times.
usecs() { echo "${EPOCHREALTIME//[.,]/}"; }
start=$(usecs)
stamp() {
  while IFS= read -r line; do
    t=$((($(usecs) - start) / 100000)); printf '%6d.%d %s\n' $((t / 10)) $((t % 10)) "$line"
  done
}
set +e
"$Q" bisect "$good" "$bad" --src "$repo" "${BISECT_FLAGS[@]}" 2>&1 | stamp | tee "$log"
status=${PIPESTATUS[0]}
# A step that cannot tell (its interval straddles the halfway cut: a noisy
# minute on a shared host) is retried as the output says, with more rounds
# pooled with its earlier ones, as a user would: at most RETRIES times.
retries=0
while [ "$status" != 0 ] && (( retries < ${RETRIES:-2} )); do
  again=$(sed -n 's/.*cannot tell.*\(qpslab bisect resume [0-9][0-9]* --rounds [0-9][0-9]*\).*/\1/p' "$log" | tail -n 1)
  [ -n "$again" ] || break
  retries=$((retries + 1))
  echo "== cannot tell: retry $retries: $again" | tee -a "$log"
  read -r _ _ _ id _ rounds <<<"$again"
  "$Q" bisect resume "$id" --rounds "$rounds" 2>&1 | stamp | tee -a "$log"
  status=${PIPESTATUS[0]}
done
set -e
wall=$((($(usecs) - start) / 1000000))

# Compile time: each compile starts at its first "compile NAME: PHASE (log:
# PATH)" progress line and ends when its logs were last written (a log that
# is gone: at the next line that is not a compile's); the rest of the wall
# time is runs: server starts, loads, measured windows.
compile_secs=$(awk -v start="$start" '
  function ended(t,   p, cmd, m, e) {
    e = 0
    for (p in logs) {
      cmd = "date -r \"" p "\" +%s.%N 2>/dev/null"; m = ""
      cmd | getline m; close(cmd)
      if (m != "" && m / 1 - start / 1e6 > e) e = m / 1 - start / 1e6
    }
    if (e <= c0 || e > t) e = t
    sum += e - c0; in_c = 0; delete logs
  }
  { t = $1; line = $0; sub(/^ *[0-9.]+ /, "", line) }
  line ~ /^compile / {
    if (!in_c) c0 = t
    in_c = 1
    if (match(line, /^compile [^:]+:/)) if (!(substr(line, 9, RLENGTH - 9) in built)) { built[substr(line, 9, RLENGTH - 9)] = 1; n++ }
    if (match(line, /\(log: [^)]*\)/)) logs[substr(line, RSTART + 6, RLENGTH - 7)] = 1
    next
  }
  in_c { ended(t) }
  END { if (in_c) ended(t); printf "%.0f %d", sum, n }' "$log")
read -r csecs ncomp <<<"$compile_secs"
echo "== wall time: ${wall}s; compiles: ${csecs}s over $ncomp compile(s); runs (servers, loads, measured windows): $((wall - csecs))s"
command -v ccache >/dev/null && ccache -s 2>/dev/null | grep -Ei 'hits|misses' | sed 's/^/   ccache: /' || true

found=$(sed -n 's/.*first bad commit: \([0-9a-f]\{8,\}\).*/\1/p' "$log" | tail -n 1)
if [ "$status" != 0 ]; then
  die "qpslab bisect exited $status (its output: $log)"
elif [ -z "$found" ]; then
  die "qpslab bisect named no first bad commit (its output: $log)"
elif [ "${planted:0:${#found}}" != "$found" ]; then
  die "qpslab bisect named $found, not the planted commit ${planted:0:8} (its output: $log)"
fi
echo "== PASS: qpslab bisect named the planted commit ${planted:0:8} (commit $PLANT_AT of $NCOMMITS) in ${wall}s, $retries retr$( ((retries == 1)) && echo y || echo ies) of a step that could not tell"
