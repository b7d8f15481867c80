#!/usr/bin/env bash
# Calibration of qpslab's change point detector (internal/changepoint)
# against Apache Otava 0.8.0 on the same seeded series: false change points
# per 1,000 points of white, autocorrelated and outlier-ridden noise, and
# recall of 2 %, 5 % and 10 % steps (within ±2 and ±5 points) at noise CV 1 %,
# 2 % and 5 %, for Otava, qpslab --method otava and qpslab's calibrated
# default. See bench/changepoint_calibrate.py for the series and the scoring;
# NOISE_SERIES and STEP_SERIES change how many. About 10 minutes at the
# defaults on 2 cores (Otava's share is most of it). Otava is installed
# once into ${XDG_CACHE_HOME:-$HOME/.cache}/qpslab-bench/otava-venv.
set -euo pipefail
cd "$(dirname "$0")/.."
py=$(scripts/otava-venv.sh)
work=$(mktemp -d /tmp/qpslab-cpcal-XXXXXX)
trap 'rm -rf "$work"' EXIT
go build -o "$work/changepoint" ./bench/changepoint
"$py" bench/changepoint_calibrate.py "$work/changepoint" "$work"
