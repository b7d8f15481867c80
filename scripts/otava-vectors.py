"""Cross-check vectors for internal/changepoint: runs Apache Otava on fixed
series and writes the inputs with Otava's answers as JSON.

Run it through scripts/otava-vectors.sh (which supplies a Python with Otava).
Usage: otava-vectors.py OUTDIR [VALIDATION_DIR] [--fuzz N] [--seed S] [--fuzz-only]
VALIDATION_DIR defaults to internal/changepoint/testdata/validation of the
repository this script is in.

Each output file is {"otava_version", "generator", "cases": [case...]} with
case = {name, note, values (null = missing) or values_from (the name of an
earlier case in the file with the same values), window, pvalue, min_magnitude,
published (expected indexes stated by Otava's or Nyrkio's tests, if any),
otava: {change_points: [{index, pvalue, mean_before, mean_after,
std_before, std_after}], weak_change_points: [index...]}}.

Otava is called as a library: otava.analysis.split for the weak change
points and otava.analysis.merge on a copy of them, which is what
compute_change_points does (0.8.0 returns the merged list as both of its
results, so the weak points have to be taken before the merge); the script
checks that the merged indexes equal compute_change_points'.
"""

import copy
import csv
import importlib.metadata
import json
import math
import os
import sys

import numpy as np
from otava.analysis import compute_change_points, fill_missing, merge, split

OTAVA_VERSION = importlib.metadata.version("apache-otava")
DEFAULT_VALIDATION_DIR = os.path.normpath(os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "..", "internal", "changepoint", "testdata", "validation"))


def first_pass_pvalue(p):
    # Otava's relaxed threshold for the weak change points (analysis.py).
    return p * 10 if p < 0.05 else (p * 2 if p < 0.5 else p)


def num(x):
    x = float(x)
    return None if math.isnan(x) else x


def run_otava(values, window, pvalue, min_magnitude):
    series = list(values)
    fill_missing(series)
    series = [float(v) for v in series]
    weak = split(series, window, first_pass_pvalue(pvalue))
    final = merge(copy.copy(weak), series, pvalue, min_magnitude)
    check, _ = compute_change_points(series, window_len=window, max_pvalue=pvalue, min_magnitude=min_magnitude)
    assert [int(c.index) for c in check] == [int(c.index) for c in final]
    return {
        "change_points": [
            {
                "index": int(c.index),
                "pvalue": num(c.stats.pvalue),
                "mean_before": num(c.stats.mean_1),
                "mean_after": num(c.stats.mean_2),
                "std_before": num(c.stats.std_1),
                "std_after": num(c.stats.std_2),
            }
            for c in final
        ],
        "weak_change_points": [int(c.index) for c in weak],
    }


def case(name, values, window=50, pvalue=0.001, min_magnitude=0.0, note="", published=None):
    values = [None if v is None or (isinstance(v, float) and math.isnan(v)) else v for v in values]
    c = {
        "name": name,
        "note": note,
        "values": values,
        "window": window,
        "pvalue": pvalue,
        "min_magnitude": min_magnitude,
    }
    if published is not None:
        c["published"] = published
    c["otava"] = run_otava(values, window, pvalue, min_magnitude)
    if published is not None and published != [cp["index"] for cp in c["otava"]["change_points"]]:
        print(f"note: {name}: Otava {OTAVA_VERSION} gives {[cp['index'] for cp in c['otava']['change_points']]}, "
              f"published {published}", file=sys.stderr)
    return c


def r4(a):
    return [round(float(v), 4) for v in a]


def read_csv(path):
    with open(path) as f:
        return [float(row["value"]) for row in csv.DictReader(f)]


def validation_cases(vdir):
    out = []
    tb = read_csv(os.path.join(vdir, "tigerbeetle_load_accepted.csv"))
    out.append(case("tigerbeetle_defaults", tb, note="Otava defaults (w=50, p=0.001, M=0)"))
    out.append(case("tigerbeetle_nyrkio", tb, min_magnitude=0.05, published=[15, 71],
                    note="Nyrkio defaults (p=0.001, M=0.05): backend/tests/test_core.py expects commits e88458cb (15) and 7a724369 (71)"))
    # Otava tests/tigerbeetle_test.py: window 30 and these (p, M) with the indexes it expects.
    for p, m, exp in [
        (0.01, 0.05, [15, 71]),
        (0.05, 0.05, [15, 71]),
        (0.1, 0.05, [10, 11, 15, 71, 363]),
        (0.2, 0.05, [10, 11, 15, 71]),
        (0.1, 0.01, [10, 11, 15, 28, 29, 35, 37, 48, 49, 61, 71, 95, 117, 131, 142, 148, 165, 169, 192, 206, 212, 260, 265, 268, 278, 282, 363]),
        (0.2, 0.0, [3, 6, 7, 10, 11, 13, 15, 16, 28, 29, 35, 37, 39, 41, 44, 48, 49, 56, 58, 61, 65, 66, 69, 71, 74, 76, 82, 95, 108, 117, 125, 126, 129, 131, 136, 137, 142, 148, 165, 169, 187, 190, 192, 197, 200, 212, 220, 241, 243, 246, 247, 249, 250, 260, 265, 266, 268, 278, 282, 288, 305, 306, 325, 330, 337, 338, 340, 347, 349, 363]),
        (0.1, 0.0, [3, 6, 10, 11, 15, 16, 28, 29, 35, 37, 39, 41, 44, 48, 49, 61, 71, 95, 117, 131, 142, 148, 165, 169, 192, 206, 212, 260, 265, 268, 278, 282, 288, 305, 363]),
        (0.01, 0.0, [15, 26, 61, 71, 95, 117, 131, 142, 148, 165, 169, 192, 212, 260]),
        (0.001, 0.0, [15, 61, 71, 95, 117, 131, 142, 148, 192, 212, 260]),
        (0.0001, 0.0, [71, 95, 117, 131, 142, 148, 192, 212]),
        (0.00001, 0.0, [71, 95, 131, 192, 212]),
    ]:
        out.append(case(f"tigerbeetle_w30_p{p:g}_m{m:g}", tb, window=30, pvalue=p, min_magnitude=m, published=exp,
                        note="Otava tests/tigerbeetle_test.py"))
    single = read_csv(os.path.join(vdir, "otava_single_series.csv"))
    out.append(case("otava_single_series_w10", single, window=10, pvalue=0.0001, published=[10],
                    note="Otava tests/analysis_test.py test_single_series"))
    out.append(case("otava_single_series_defaults", single))
    s1 = read_csv(os.path.join(vdir, "otava_series1.csv"))
    s2 = read_csv(os.path.join(vdir, "otava_series2.csv"))
    out.append(case("otava_series1", s1, published=[6], note="Otava tests/series_test.py: series1 changes at 6"))
    out.append(case("otava_series2", s2, published=[4], note="Otava tests/series_test.py: series2 changes at 4"))
    out.append(case("otava_series1_m02", s1, min_magnitude=0.2, published=[6], note="Otava tests/series_test.py min magnitude 0.2"))
    out.append(case("otava_series2_m02", s2, min_magnitude=0.2, published=[], note="Otava tests/series_test.py min magnitude 0.2"))
    seq = read_csv(os.path.join(vdir, "otava_divisive_sequence.csv"))
    out.append(case("otava_divisive_sequence_w14_p01", seq, window=14, pvalue=0.01,
                    note="one window over the whole sequence; Otava's detector test (p=0.01, no merge) expects [5, 8]"))
    out.append(case("otava_divisive_sequence_defaults", seq))
    staircase = [1] * 5 + [5] * 8 + [9] * 8 + [3] * 9
    out.append(case("otava_series3_staircase", staircase, pvalue=0.05, note="Otava tests/series_test.py: 3 change points, first at 5"))
    out.append(case("otava_div_by_zero", [0.0, 0.0, 0.0, 1.00, 1.12, 0.90, 0.50, 0.51, 0.48, 0.48, 0.55],
                    note="Otava tests/series_test.py: zeros first, 2 change points, first at 3"))
    return out


def steps(rng, n, every, rel, cv, level=100.0):
    v, lv = [], level
    for i in range(n):
        if i > 0 and i % every == 0:
            lv *= 1 + rel * rng.choice([-1, 1])
        v.append(lv * (1 + cv * rng.standard_normal()))
    return v


def synthetic_cases():
    out = []
    for seed in (1, 2, 3):
        rng = np.random.default_rng(seed)
        out.append(case(f"steps5pct_cv2_seed{seed}", r4(steps(rng, 400, 80, 0.05, 0.02)),
                        note="level 100, +-5% steps every 80 points, Gaussian noise CV 2%"))
    for seed in (1, 2):
        rng = np.random.default_rng(10 + seed)
        out.append(case(f"noise_1000_seed{seed}", r4(100 + 2 * rng.standard_normal(1000)), note="N(100, 2)"))
    rng = np.random.default_rng(21)
    v = 100 + rng.standard_normal(200)
    v[60] *= 1.3
    v[140] *= 0.7
    v[100:] += 10
    out.append(case("spikes_and_step", r4(v), note="one-point spikes at 60 and 140, +10 step at 100, CV 1%"))
    rng = np.random.default_rng(22)
    v = 100 + rng.standard_normal(150)
    v[70:72] += 25
    out.append(case("two_point_spike", r4(v), note="two-point spike at 70-71"))
    rng = np.random.default_rng(23)
    v = 100 + rng.standard_normal(120)
    v[0] += 30
    v[-1] -= 30
    out.append(case("spikes_at_ends", r4(v), note="odd first and last points"))
    rng = np.random.default_rng(24)
    v = 100 + rng.standard_normal(160)
    v[80:] += 8
    v[-2:] -= 8 + 30
    out.append(case("step_then_edge", r4(v), note="step at 80, two odd points at the end"))
    rng = np.random.default_rng(25)
    base = np.concatenate([np.full(60, 100.0), np.linspace(100, 110, 20), np.full(80, 110.0)])
    out.append(case("ramp", r4(base + rng.standard_normal(160)), note="20-point ramp from 100 to 110"))
    rng = np.random.default_rng(26)
    v = np.round(steps(rng, 300, 60, 0.03, 0.01, level=1000.0))
    out.append(case("integers", [float(x) for x in v], note="integer values (equal distances, possible ties)"))
    out.append(case("plateaus", [1.0] * 10 + [2.0] * 10 + [1.0] * 10, window=10, pvalue=0.01,
                    note="exactly constant segments: t = inf or NaN"))
    out.append(case("constant", [5.0] * 40, note="all equal"))
    rng = np.random.default_rng(27)
    v = list(r4(steps(rng, 120, 40, 0.1, 0.01)))
    for i in (0, 1, 17, 40, 41, 90, 119):
        v[i] = None
    out.append(case("missing_values", v, note="missing values filled forward (backward at the start)"))
    rng = np.random.default_rng(28)
    for n in (1, 2, 3, 5, 8, 13):
        out.append(case(f"short_{n}", r4(steps(rng, n, 4, 0.2, 0.01)), window=10, pvalue=0.05, note="short series"))
    rng = np.random.default_rng(29)
    v = r4(steps(rng, 300, 50, 0.05, 0.01))
    for w in (2, 3, 7, 51, 100):
        out.append(case(f"window_{w}", v, window=w, pvalue=0.01, note="same series, other windows"))
    rng = np.random.default_rng(30)
    out.append(case("lognormal", r4(100 * np.exp(0.05 * rng.standard_normal(500))), note="log-normal noise, sigma 0.05"))
    rng = np.random.default_rng(31)
    v = 100 + 2 * rng.standard_t(3, 400)
    v[200:] += 4
    out.append(case("student_t3", r4(v), note="heavy tails (t, 3 d.o.f.), step +4 at 200"))
    rng = np.random.default_rng(32)
    v = r4(steps(rng, 200, 50, 0.1, 0.02))
    for p in (0.05, 0.5):
        out.append(case(f"pvalue_{p:g}", v, pvalue=p, note="weak threshold 2x p (p=0.05) and p itself (p=0.5)"))
    rng = np.random.default_rng(33)
    v = rng.standard_normal(300)
    v[150:] += 1.5
    out.append(case("around_zero", r4(v), note="mean 0 then 1.5: magnitudes with small denominators"))
    rng = np.random.default_rng(34)
    v = 1e6 + rng.standard_normal(300)
    v[120:] += 5
    out.append(case("big_level_tiny_cv", [round(float(x), 3) for x in v], note="level 1e6, sigma 1, step 5"))
    out.append(case("ties_symmetric", [10.0] * 5 + [20.0] * 5 + [10.0] * 5, window=15, pvalue=0.05,
                    note="mirror-symmetric: equal q-hat at different splits (numpy's argmax takes the first)"))
    rng = np.random.default_rng(35)
    for k in range(3):
        v = [float(x) for x in rng.integers(0, 2, 60)]
        v[30:] = [x + 1 for x in v[30:]]
        out.append(case(f"ties_binary_{k}", v, window=[10, 20, 50][k], pvalue=0.05,
                        note="values in {0, 1, 2}: many equal distances and q-hat ties"))
    return out


def fuzz_cases(count, seed):
    rng = np.random.default_rng(seed)
    out = []
    for k in range(count):
        n = int(rng.integers(20, 400))
        window = int(rng.choice([4, 5, 8, 10, 16, 20, 30, 31, 50, 64, 80]))
        pvalue = float(rng.choice([0.1, 0.05, 0.01, 0.001, 0.0001]))
        mm = float(rng.choice([0.0, 0.0, 0.01, 0.05]))
        v = steps(rng, n, int(rng.integers(10, 120)), float(rng.choice([0.01, 0.03, 0.1, 0.3])), float(rng.choice([0.005, 0.02, 0.05])))
        v = np.array(v)
        for _ in range(int(rng.integers(0, 4))):
            v[int(rng.integers(0, n))] *= 1 + float(rng.choice([-0.4, 0.4]))
        out.append(case(f"fuzz_{seed}_{k}", r4(v), window=window, pvalue=pvalue, min_magnitude=mm,
                        note="random steps, noise and spikes"))
    return out


def write(outdir, fname, cases):
    # A case whose values equal an earlier case's names that case instead.
    seen = {}
    for c in cases:
        key = json.dumps(c["values"])
        if key in seen:
            c["values_from"] = seen[key]
            del c["values"]
        else:
            seen[key] = c["name"]
    path = os.path.join(outdir, fname)
    with open(path, "w") as f:
        json.dump({"otava_version": OTAVA_VERSION, "generator": "scripts/otava-vectors.sh", "cases": cases}, f,
                  separators=(",", ":"))
        f.write("\n")
    print(f"{path}: {len(cases)} cases", file=sys.stderr)


def main():
    args = sys.argv[1:]
    fuzz, seed = 40, 1
    if "--fuzz" in args:
        i = args.index("--fuzz")
        fuzz = int(args[i + 1])
        del args[i:i + 2]
    if "--seed" in args:
        i = args.index("--seed")
        seed = int(args[i + 1])
        del args[i:i + 2]
    fuzz_only = "--fuzz-only" in args
    if fuzz_only:
        args.remove("--fuzz-only")
    outdir = args[0]
    os.makedirs(outdir, exist_ok=True)
    if not fuzz_only:
        vdir = args[1] if len(args) > 1 and args[1] else DEFAULT_VALIDATION_DIR
        write(outdir, "validation.json", validation_cases(vdir))
        write(outdir, "synthetic.json", synthetic_cases())
    write(outdir, f"fuzz{'' if seed == 1 else '_' + str(seed)}.json", fuzz_cases(fuzz, seed))


if __name__ == "__main__":
    main()
