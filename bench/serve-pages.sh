#!/usr/bin/env bash
# The dashboard's page budgets at a team's size (issue 47; docs/perf.md,
# "Dashboard pages at 20,000 runs"). A SQLite store receives, through
# POST /api/v1/results in posts of 5,000 runs (bench/servegen writes them):
#   wide     38 builds × 12 configs × the 44 report tests of sysbench at 1
#            thread: 20,064 runs, 456 labels; the point tests 15 % slower
#            from the 20th build on, so the attention view has entries;
#   configs  point-query_range=100 over 30 builds × 100 more configs: one
#            test with 112 configs (3,000 runs more).
# Then each page is timed with curl (time_total, the whole request):
#   post     GET / at once after each post (the view a user opens after CI
#            posted: it used to wait for the whole attention list);
#   trickle  TRICKLE posts of one new build (44 runs) a second apart, with
#            GET / and GET /suites/sysbench after each;
#   cold     the server restarted on the store: the first GET of each page;
#   warm     ROUNDS more GETs of each page.
# Prints each page's median and worst per phase, against the budget (1 s).
# With BASE=/path/to/an/older/qpslab, the same runs on a copy of the store
# served by that binary, interleaved with this one request by request
# (A B A B), and the per-page median of the per-request ratios base/this
# is printed too. Needs curl and Go (to build servegen).
set -euo pipefail
cd "$(dirname "$0")/.."
Q=${QPSLAB_BIN:-$PWD/bin/qpslab}
BASE=${BASE:-}
ROUNDS=${ROUNDS:-7}
TRICKLE=${TRICKLE:-10}
BUDGET=${BUDGET:-1.0}
work=$(mktemp -d /tmp/qpslab-serve-pages-XXXXXX)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

go build -o "$work/servegen" ./bench/servegen
"$work/servegen" -shape wide -out "$work/gen"
"$work/servegen" -shape configs -out "$work/gen"
for i in $(seq 1 "$TRICKLE"); do "$work/servegen" -shape tail -per 44 -seq "$i" -out "$work/tail"; done

# sides: "new" is $Q; "base" is $BASE, when given.
sides=(new)
declare -A bin=([new]=$Q)
if [ -n "$BASE" ]; then sides+=(base); bin[base]=$BASE; fi
declare -A url tok pid
start() { # side: serve its home's store on a free port
  local s=$1 log=$work/$1/serve.log
  QPSLAB_HOME=$work/$s "${bin[$s]}" serve --listen 127.0.0.1:0 >"$log" 2>&1 &
  pid[$s]=$!
  pids+=("$!")
  for _ in $(seq 1 600); do
    if grep -q 'listening on' "$log"; then break; fi
    if ! kill -0 "${pid[$s]}" 2>/dev/null; then echo "serve ($s) ended: $(cat "$log")" >&2; exit 1; fi
    sleep 0.1
  done
  url[$s]=http://$(sed -n 's/.*(listening on \([^)]*\)).*/\1/p' "$log" | head -1)
}
stop() {
  kill "${pid[$1]}"
  wait "${pid[$1]}" 2>/dev/null || true
}
for s in "${sides[@]}"; do
  mkdir -p "$work/$s"
  tok[$s]=$(QPSLAB_HOME=$work/$s "${bin[$s]}" tokens create bench --scope ingest 2>/dev/null | head -1)
  start "$s"
done

times=$work/times # side phase page seconds
post() { # side file
  local code
  code=$(curl -s -o "$work/post.out" -w '%{http_code}' -H "Authorization: Bearer ${tok[$1]}" -H 'Content-Type: application/json' \
    --data-binary @"$2" "${url[$1]}/api/v1/results")
  if [ "$code" != 201 ]; then echo "post $2 to $1: $code $(head -c 300 "$work/post.out")" >&2; exit 1; fi
}
get() { # side phase page
  local out
  out=$(curl -s -o /dev/null -w '%{http_code} %{time_total}' "${url[$1]}$3")
  if [ "${out%% *}" != 200 ]; then echo "GET $3 ($1): ${out%% *}" >&2; exit 1; fi
  echo "$1 $2 $3 ${out##* }" >>"$times"
}

history='/suites/sysbench/tests/point-query_range=100'
compare='/compare?base=ma10.11.1.c000&other=ma10.11.38.c000'
pages=(/ /suites/sysbench "$history" "$compare" /labels /runs /bisections)

echo "posting $(ls "$work/gen" | wc -l) files (20,064 + 3,000 runs)…" >&2
for f in "$work"/gen/*.json; do
  for s in "${sides[@]}"; do post "$s" "$f"; get "$s" post /; done
done
echo "trickle: $TRICKLE posts of 44 runs…" >&2
for f in "$work"/tail/*.json; do
  for s in "${sides[@]}"; do
    post "$s" "$f"
    get "$s" trickle /
    get "$s" trickle /suites/sysbench
  done
  sleep 1
done
for s in "${sides[@]}"; do stop "$s"; start "$s"; done
for p in "${pages[@]}"; do for s in "${sides[@]}"; do get "$s" cold "$p"; done; done
for _ in $(seq 1 "$ROUNDS"); do
  for p in "${pages[@]}"; do for s in "${sides[@]}"; do get "$s" warm "$p"; done; done
done

python3 - "$times" "$BUDGET" "${sides[@]}" <<'EOF'
import sys, statistics
path, budget, sides = sys.argv[1], float(sys.argv[2]), sys.argv[3:]
rows = [l.split() for l in open(path)]
order, t = [], {}
for side, phase, page, sec in rows:
    k = (phase, page)
    if k not in order:
        order.append(k)
    t.setdefault((side, phase, page), []).append(float(sec))
print(f"{'phase':8} {'page':44} {'n':>3} {'median s':>9} {'worst s':>8}  budget {budget:g} s" + ("   base/new (median of ratios)" if "base" in sides else ""))
over = 0
for phase, page in order:
    v = t[("new", phase, page)]
    worst = max(v)
    ok = "ok" if worst <= budget else "OVER"
    over += worst > budget
    line = f"{phase:8} {page[:44]:44} {len(v):3} {statistics.median(v):9.3f} {worst:8.3f}  {ok}"
    if "base" in sides:
        b = t[("base", phase, page)]
        ratios = [x / y for x, y in zip(b, v) if y > 0]
        line += f"   {statistics.median(b):7.3f} s base, ×{statistics.median(ratios):.2f}"
    print(line)
print(f"{over} page(s) over the budget" if over else "every page within the budget")
EOF
