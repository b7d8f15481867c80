#!/usr/bin/env bash
# Change point detection: qpslab's internal/changepoint against Apache Otava
# 0.8.0 on the same series (N points, default 20,000; level 100, a step of
# ±5 % every 500 points, Gaussian noise CV 2 %, numpy seed 1). Each round
# runs A (qpslab, bench/changepoint) then B (Otava, bench/changepoint_otava.py)
# for a full analysis, then A and B again for the incremental append of the
# last point; ROUNDS rounds (default 3), so the machine's drift hits both
# alike. Prints each round, the medians and the ratios, and whether the
# change points agree: with qpslab's defaults and with DetectOtava (Otava's
# rules). Times are measured inside each program around the computation;
# the process wall times (Go start vs Python start with numpy and scipy)
# are shown too. Otava is installed once into
# ${XDG_CACHE_HOME:-$HOME/.cache}/qpslab-bench/otava-venv (scripts/otava-venv.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${ROUNDS:-3}
N=${N:-20000}
py=$(scripts/otava-venv.sh)
work=$(mktemp -d /tmp/qpslab-cpbench-XXXXXX)
trap 'rm -rf "$work"' EXIT
go build -o "$work/changepoint" ./bench/changepoint

"$py" - "$N" >"$work/series.json" <<'EOF'
import json, sys
import numpy as np
n = int(sys.argv[1])
rng = np.random.default_rng(1)
v, level = [], 100.0
for i in range(n):
    if i > 0 and i % 500 == 0:
        level *= 1 + 0.05 * rng.choice([-1, 1])
    v.append(round(level * (1 + 0.02 * rng.standard_normal()), 4))
json.dump({"series": [v]}, sys.stdout)
EOF

now() { date +%s%N; }
run() { # name command...: writes $work/name.json and appends the wall time to $work/name.wall
  local name=$1; shift
  local t0; t0=$(now)
  "$@" >"$work/$name.json"
  echo $(( $(now) - t0 )) >>"$work/$name.wall"
  cp "$work/$name.json" "$work/$name.$(wc -l <"$work/$name.wall").json"
}

echo "series: $N points, a ±5 % step every 500 points, Gaussian noise CV 2 %; $ROUNDS rounds, A B A B"
for r in $(seq "$ROUNDS"); do
  run qpslab "$work/changepoint" "$work/series.json"
  run otava "$py" bench/changepoint_otava.py "$work/series.json"
  run qpslab-append "$work/changepoint" -mode append "$work/series.json"
  run otava-append "$py" bench/changepoint_otava.py --mode append "$work/series.json"
done
"$work/changepoint" -mode otava "$work/series.json" >"$work/qpslab-otava-rules.json"

"$py" - "$work" "$ROUNDS" <<'EOF'
import json, statistics, sys
work, rounds = sys.argv[1], int(sys.argv[2])
def load(name):
    runs = [json.load(open(f"{work}/{name}.{r}.json")) for r in range(1, rounds + 1)]
    walls = [int(x) / 1e9 for x in open(f"{work}/{name}.wall").read().split()]
    return runs, [r["total_seconds"] for r in runs], walls
def ms(s):
    return f"{s * 1e3:.2f} ms" if s < 1 else f"{s:.2f} s"
res = {k: load(k) for k in ("qpslab", "otava", "qpslab-append", "otava-append")}
for r in range(rounds):
    print(f"round {r + 1}: analyse: qpslab {ms(res['qpslab'][1][r])} (process {ms(res['qpslab'][2][r])}), "
          f"Otava {ms(res['otava'][1][r])} (process {ms(res['otava'][2][r])}); "
          f"append: qpslab {ms(res['qpslab-append'][1][r])}, Otava {ms(res['otava-append'][1][r])}")
med = {k: (statistics.median(v[1]), statistics.median(v[2])) for k, v in res.items()}
print(f"median analysis: qpslab {ms(med['qpslab'][0])}, Otava {ms(med['otava'][0])}: "
      f"{med['otava'][0] / med['qpslab'][0]:.0f}x faster")
print(f"median process wall time: qpslab {ms(med['qpslab'][1])}, Otava {ms(med['otava'][1])}: "
      f"{med['otava'][1] / med['qpslab'][1]:.0f}x")
print(f"median append of the last point: qpslab {ms(med['qpslab-append'][0])}, Otava {ms(med['otava-append'][0])}: "
      f"{med['otava-append'][0] / med['qpslab-append'][0]:.0f}x faster")
q = res["qpslab"][0][0]["change_points"][0]
o = res["otava"][0][0]["change_points"][0]
qo = json.load(open(f"{work}/qpslab-otava-rules.json"))["change_points"][0]
qa = res["qpslab-append"][0][0]["change_points"][0]
oa = res["otava-append"][0][0]["change_points"][0]
stable = all(run["change_points"] == res[k][0][0]["change_points"] for k in res for run in res[k][0])
print(f"change points: qpslab {len(q)}, Otava {len(o)}; same in every round: {'yes' if stable else 'NO'}")
print(f"  qpslab with Otava's rules (DetectOtava) = Otava: {'yes' if qo == o else 'NO'}")
only_o, only_q = sorted(set(o) - set(q)), sorted(set(q) - set(o))
print(f"  qpslab defaults = Otava: {'yes' if q == o else 'no'}; only Otava: {only_o}; only qpslab: {only_q}")
oa_diff = "yes" if oa == o else f"no (only append: {sorted(set(oa) - set(o))}; only analysis: {sorted(set(o) - set(oa))})"
print(f"  qpslab append = qpslab analysis: {'yes' if qa == q else 'NO'}; Otava append = Otava analysis: {oa_diff}")
EOF
