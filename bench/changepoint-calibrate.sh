#!/usr/bin/env bash
# Calibration of qpslab's change point detector (internal/changepoint)
# against Apache Otava 0.8.0 on the same seeded series: false change points
# per 1,000 points of Gaussian noise, and recall of 2 %, 5 % and 10 % steps
# at noise CV 1 %, 2 % and 5 %. See bench/changepoint_calibrate.py for the
# series and the scoring; NOISE_SERIES, STEP_SERIES and MARGIN change them.
# Otava is installed once into ${XDG_CACHE_HOME:-$HOME/.cache}/qpslab-bench/otava-venv.
set -euo pipefail
cd "$(dirname "$0")/.."
py=$(scripts/otava-venv.sh)
work=$(mktemp -d /tmp/qpslab-cpcal-XXXXXX)
trap 'rm -rf "$work"' EXIT
go build -o "$work/changepoint" ./bench/changepoint
"$py" bench/changepoint_calibrate.py "$work/changepoint" "$work"
