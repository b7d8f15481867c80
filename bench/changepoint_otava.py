"""Apache Otava's side of bench/changepoint.sh and bench/changepoint-calibrate.sh.

Usage: changepoint_otava.py [--window W] [--pvalue P] [--min-magnitude M]
                            [--mode detect|append] FILE

FILE holds {"series": [[v, ...], ...]} (null = missing). Prints one JSON
object like bench/changepoint/main.go's: {"mode", "change_points",
"seconds", "total_seconds"}. detect times otava.analysis.compute_change_points
(the function behind `otava analyze`) on each series after Otava's
fill_missing; append builds an AnalyzedSeries of all but the last point and
times AnalyzedSeries.append of the last one (Otava's incremental path).
Times cover the computation only, not the Python start or imports.
"""

import argparse
import json
import time

from otava.analysis import compute_change_points, fill_missing
from otava.series import AnalysisOptions, Metric, Series


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--window", type=int, default=50)
    ap.add_argument("--pvalue", type=float, default=0.001)
    ap.add_argument("--min-magnitude", type=float, default=0.0)
    ap.add_argument("--mode", default="detect", choices=["detect", "append"])
    ap.add_argument("file")
    a = ap.parse_args()
    with open(a.file) as f:
        series = json.load(f)["series"]
    out = {"mode": "otava-" + a.mode, "change_points": [], "seconds": [], "total_seconds": 0.0}
    for values in series:
        values = list(values)
        fill_missing(values)
        values = [float(v) for v in values]
        if a.mode == "detect":
            t0 = time.perf_counter()
            cps, _ = compute_change_points(values, window_len=a.window, max_pvalue=a.pvalue,
                                           min_magnitude=a.min_magnitude)
            dt = time.perf_counter() - t0
            idx = [int(c.index) for c in cps]
        else:
            opts = AnalysisOptions()
            opts.window_len, opts.max_pvalue, opts.min_magnitude = a.window, a.pvalue, a.min_magnitude
            n = len(values)
            s = Series("bench", branch=None, time=list(range(n - 1)), metrics={"m": Metric(1, 1.0)},
                       data={"m": values[:-1]}, attributes={})
            analyzed = s.analyze(opts)
            t0 = time.perf_counter()
            analyzed.append(time=[n - 1], new_data={"m": [values[-1]]}, attributes={})
            dt = time.perf_counter() - t0
            idx = [int(c.index) for c in analyzed.change_points["m"]]
        out["change_points"].append(idx)
        out["seconds"].append(dt)
        out["total_seconds"] += dt
    print(json.dumps(out))


if __name__ == "__main__":
    main()
