"""Calibration of qpslab's change point detector against Apache Otava on the
same series. Run through bench/changepoint-calibrate.sh.

Usage: changepoint_calibrate.py GO_BINARY WORKDIR

Noise (numpy default_rng, fixed seeds), level x (1 + cv * e), e of standard
deviation 1 (internal/changepoint/calibration_test.go makes the same kinds):
  white        e i.i.d. N(0, 1);
  ar           AR(1): e_i = 0.6 e_(i-1) + sqrt(1 - 0.36) N(0, 1), the lag-1
               autocorrelation of qpslab's per-run QPS series on a shared
               host;
  outliers     white, and 5 % of the points are slow runs, 5 to 15 standard
               deviations below the level;
  ar+outliers  both.
False alarms: NOISE_SERIES (default 200) series of 1,000 points of each
kind (cv 2 %; the detectors are scale-free). Recall: STEP_SERIES (default
100) series of 1,000 points per row, a step every 100 points (9 per
series) of the given size, up or down at random; white noise at cv 1, 2
and 5 % with steps of 2, 5 and 10 %, then the other noises at cv 2 %.
Detectors, each with its defaults (window 50, p 0.001, magnitude 0):
Otava 0.8.0 (also at p 0.0001 on the noise), qpslab --method otava (Otava's
t-test with the minimum segment) and qpslab's default, the calibrated
method; DetectOtava (Otava's rules exactly) is checked against Otava on
every series. A step is found within +-2 (and +-5) points if a change point
lies that close to it; a change point farther than 5 points from every
step is a false one; "interval" is the share of steps inside a change
point's 95 % interval. Prints markdown tables.
"""

import json
import os
import subprocess
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
NOISE_SERIES = int(os.environ.get("NOISE_SERIES", 200))
STEP_SERIES = int(os.environ.get("STEP_SERIES", 100))
N = 1000
EVERY = 100
PHI = 0.6
OUTLIER_RATE = 0.05
KINDS = ["white", "ar", "outliers", "ar+outliers"]


def noise(rng, n, kind, cv):
    phi = PHI if kind in ("ar", "ar+outliers") else 0.0
    e = rng.standard_normal()
    out = []
    for _ in range(n):
        e = phi * e + np.sqrt(1 - phi * phi) * rng.standard_normal()
        v = 1 + cv * e
        if kind in ("outliers", "ar+outliers") and rng.random() < OUTLIER_RATE:
            v -= cv * (5 + 10 * rng.random())
        out.append(v)
    return out


def noise_series(kind):
    k = KINDS.index(kind)
    return [[round(100 * x, 4) for x in noise(np.random.default_rng([19, k, s]), N, kind, 0.02)] for s in range(NOISE_SERIES)]


def step_series(kind, cv, step):
    out = []
    for s in range(STEP_SERIES):
        rng = np.random.default_rng([KINDS.index(kind), int(cv * 1000), int(step * 1000), s])
        v = noise(rng, N, kind, cv)
        level = 100.0
        for i in range(N):
            if i > 0 and i % EVERY == 0:
                level *= 1 + step * rng.choice([-1, 1])
            v[i] = round(level * v[i], 4)
        out.append(v)
    return out


def run(cmd, path):
    res = subprocess.run(cmd + [path], check=True, capture_output=True, text=True)
    return json.loads(res.stdout)


def detectors(go, path, pvalue=0.001, otava=True):
    py = sys.executable
    p = ["-pvalue", str(pvalue)]
    out = {
        "qpslab-otava-rules": run([go, "-mode", "otava"] + p, path),
        "qpslab-otava": run([go, "-method", "otava"] + p, path),
        "qpslab": run([go] + p, path),
    }
    if otava:
        out["otava"] = run([py, os.path.join(HERE, "changepoint_otava.py"), "--pvalue", str(pvalue)], path)
    return out


def write(work, name, series):
    path = os.path.join(work, name + ".json")
    with open(path, "w") as f:
        json.dump({"series": series}, f)
    return path


def main():
    go, work = sys.argv[1], sys.argv[2]
    mismatch, checked = 0, 0

    def check(r):
        nonlocal mismatch, checked
        if "otava" in r:
            checked += len(r["otava"]["change_points"])
            mismatch += sum(1 for a, b in zip(r["otava"]["change_points"], r["qpslab-otava-rules"]["change_points"]) if a != b)

    print(f"False change points per 1,000 points of noise ({NOISE_SERIES} series x {N} points of each kind, cv 2 %; "
          "in brackets the series with any)\n")
    print("| noise | Otava 0.8.0 | Otava 0.8.0, p 0.0001 | qpslab --method otava | qpslab (calibrated) |")
    print("|---|---|---|---|---|")
    for kind in KINDS:
        path = write(work, "noise_" + kind, noise_series(kind))
        r = detectors(go, path)
        r4 = {"otava": run([sys.executable, os.path.join(HERE, "changepoint_otava.py"), "--pvalue", "0.0001"], path)}
        check(r)
        cells = []
        for res in (r["otava"], r4["otava"], r["qpslab-otava"], r["qpslab"]):
            cps = res["change_points"]
            rate = sum(len(c) for c in cps) / (NOISE_SERIES * N) * 1000
            cells.append(f"{rate:.3f} ({sum(1 for c in cps if c)})")
        print(f"| {kind} | " + " | ".join(cells) + " |")
    print()
    print(f"Recall of steps ({STEP_SERIES} series x {N} points per row, a step every {EVERY} points: "
          f"{STEP_SERIES * 9} steps per row; p 0.001): found within +-2 points (+-5), false change points per "
          "1,000 points, steps inside a change point's 95 % interval\n")
    print("| noise | cv | step | Otava 0.8.0 | qpslab --method otava | qpslab (calibrated) | false/1,000 Otava / qpslab | interval (qpslab) |")
    print("|---|---|---|---|---|---|---|---|")
    rows = [("white", cv, step) for cv in (0.01, 0.02, 0.05) for step in (0.02, 0.05, 0.10)]
    rows += [(kind, 0.02, step) for kind in ("ar", "outliers", "ar+outliers") for step in (0.05, 0.10)]
    truth = list(range(EVERY, N, EVERY))
    for kind, cv, step in rows:
        path = write(work, f"steps_{kind}_{cv}_{step}", step_series(kind, cv, step))
        r = detectors(go, path)
        check(r)
        stats = {}
        for k in ("otava", "qpslab-otava", "qpslab"):
            f2 = f5 = false = cover = 0
            ivs = r[k].get("intervals")
            for s, cps in enumerate(r[k]["change_points"]):
                for t in truth:
                    f2 += any(abs(c - t) <= 2 for c in cps)
                    f5 += any(abs(c - t) <= 5 for c in cps)
                    if ivs is not None:
                        cover += any(lo <= t <= hi for lo, hi in ivs[s])
                false += sum(1 for c in cps if all(abs(c - t) > 5 for t in truth))
            total = len(truth) * STEP_SERIES
            stats[k] = (f2 / total, f5 / total, false / (STEP_SERIES * N) * 1000, cover / total)
        cell = lambda k: f"{stats[k][0]:.1%} ({stats[k][1]:.1%})"
        print(f"| {kind} | {cv * 100:g} % | {step * 100:g} % | {cell('otava')} | {cell('qpslab-otava')} | {cell('qpslab')} | "
              f"{stats['otava'][2]:.2f} / {stats['qpslab'][2]:.2f} | {stats['qpslab'][3]:.1%} |")
    print()
    print(f"qpslab with Otava's rules (DetectOtava) differs from Otava 0.8.0 on {mismatch} of {checked} series.")


if __name__ == "__main__":
    main()
