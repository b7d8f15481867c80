"""Calibration of qpslab's change point detector against Apache Otava on the
same series. Run through bench/changepoint-calibrate.sh.

Usage: changepoint_calibrate.py GO_BINARY WORKDIR

Series (numpy default_rng, fixed seeds):
  noise: NOISE_SERIES (default 100) series of 1,000 points of N(100, 2)
         (the detectors are scale-free, so the CV does not matter here);
  steps: for CV 1 %, 2 %, 5 % and steps of 2 %, 5 %, 10 %: STEP_SERIES
         (default 30) series of 1,000 points, level 100, a step every 100
         points (9 per series) of the given size, up or down at random.
Both detectors run on every series with their defaults (window 50,
p 0.001, magnitude 0); the noise series also at p 0.0001. A true step is
found if a change point lies within MARGIN (default 5) points of it; a
change point farther than MARGIN from every true step is a false one.
Prints markdown tables.
"""

import json
import os
import statistics
import subprocess
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
NOISE_SERIES = int(os.environ.get("NOISE_SERIES", 100))
STEP_SERIES = int(os.environ.get("STEP_SERIES", 30))
MARGIN = int(os.environ.get("MARGIN", 5))
N = 1000
EVERY = 100


def noise_series():
    return [[round(float(x), 4) for x in 100 + 2 * np.random.default_rng(1000 + k).standard_normal(N)]
            for k in range(NOISE_SERIES)]


def step_series(cv, step):
    out = []
    for k in range(STEP_SERIES):
        rng = np.random.default_rng([int(cv * 1000), int(step * 1000), k])
        level, v = 100.0, []
        for i in range(N):
            if i > 0 and i % EVERY == 0:
                level *= 1 + step * rng.choice([-1, 1])
            v.append(round(level * (1 + cv * rng.standard_normal()), 4))
        out.append(v)
    return out


def run(cmd, path):
    res = subprocess.run(cmd + [path], check=True, capture_output=True, text=True)
    return json.loads(res.stdout)["change_points"]


def detectors(go, path, pvalue=0.001):
    py = sys.executable
    p = ["-pvalue", str(pvalue)]
    return {
        "otava": run([py, os.path.join(HERE, "changepoint_otava.py"), "--pvalue", str(pvalue)], path),
        "qpslab-otava-rules": run([go, "-mode", "otava"] + p, path),
        "qpslab-minseg1": run([go, "-min-segment", "1"] + p, path),
        "qpslab": run([go] + p, path),
    }


def score(cps, truth):
    found = sum(1 for t in truth if any(abs(c - t) <= MARGIN for c in cps))
    false = sum(1 for c in cps if all(abs(c - t) > MARGIN for t in truth))
    errs = [min(abs(c - t) for c in cps) for t in truth if any(abs(c - t) <= MARGIN for c in cps)]
    return found, false, errs


def main():
    go, work = sys.argv[1], sys.argv[2]
    names = ["otava", "qpslab-otava-rules", "qpslab-minseg1", "qpslab"]
    print(f"Noise: false change points per 1,000 points ({NOISE_SERIES} series x {N} points of N(100, 2))\n")
    print("| p-value | Otava 0.8.0 | qpslab, Otava's rules | qpslab, MinSegment 1 | qpslab defaults (MinSegment 3) |")
    print("|---|---|---|---|---|")
    path = os.path.join(work, "noise.json")
    with open(path, "w") as f:
        json.dump({"series": noise_series()}, f)
    mismatch = 0
    for p in (0.001, 0.0001):
        r = detectors(go, path, p)
        mismatch += sum(1 for a, b in zip(r["otava"], r["qpslab-otava-rules"]) if a != b)
        rates = [sum(len(c) for c in r[k]) / (NOISE_SERIES * N) * 1000 for k in names]
        series_with = [sum(1 for c in r[k] if c) for k in names]
        print(f"| {p:g} | " + " | ".join(f"{x:.2f} ({s} of {NOISE_SERIES} series)" for x, s in zip(rates, series_with)) + " |")
    print()
    print(f"Steps: recall within +-{MARGIN} points and false change points per 1,000 points "
          f"({STEP_SERIES} series x {N} points per row, a step every {EVERY} points, {STEP_SERIES * 9} steps per row; "
          f"defaults: window 50, p 0.001)\n")
    print("| noise CV | step | recall Otava 0.8.0 | recall qpslab | false/1,000 Otava | false/1,000 qpslab | median location error Otava / qpslab |")
    print("|---|---|---|---|---|---|---|")
    for cv in (0.01, 0.02, 0.05):
        for step in (0.02, 0.05, 0.10):
            path = os.path.join(work, f"steps_{cv}_{step}.json")
            with open(path, "w") as f:
                json.dump({"series": step_series(cv, step)}, f)
            r = detectors(go, path)
            mismatch += sum(1 for a, b in zip(r["otava"], r["qpslab-otava-rules"]) if a != b)
            truth = list(range(EVERY, N, EVERY))
            row = {}
            for k in ("otava", "qpslab"):
                found = false = 0
                errs = []
                for cps in r[k]:
                    fo, fa, er = score(cps, truth)
                    found, false, errs = found + fo, false + fa, errs + er
                row[k] = (found / (len(truth) * STEP_SERIES), false / (STEP_SERIES * N) * 1000,
                          statistics.median(errs) if errs else float("nan"))
            print(f"| {cv * 100:g} % | {step * 100:g} % | {row['otava'][0]:.1%} | {row['qpslab'][0]:.1%} | "
                  f"{row['otava'][1]:.2f} | {row['qpslab'][1]:.2f} | {row['otava'][2]:g} / {row['qpslab'][2]:g} |")
    print()
    print(f"qpslab with Otava's rules (DetectOtava) differs from Otava 0.8.0 on {mismatch} series of "
          f"{2 * NOISE_SERIES + 9 * STEP_SERIES}.")


if __name__ == "__main__":
    main()
