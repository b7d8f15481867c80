#!/usr/bin/env bash
# Calibration of qpslab's change point detector (internal/changepoint).
#
# 1. Sweeps (changepoint.DetectSweep: histories of 4 to 60 builds, one to a
#    few runs each): on generated sweeps whose truth is known, the smallest
#    step and the shortest dip found at 80 % recall by builds, runs per
#    build and noise, false alarms on flat sweeps, and recall and precision
#    over the goal region of issue 59 (bench/changepoint/sweeps.go). SWEEPS
#    (default 200) sweeps per size and cell, FLAT (default 2000) flat sweeps
#    per cell. About 5 minutes on 2 cores.
# 2. Long series, against Apache Otava 0.8.0 on the same seeded series:
#    false change points per 1,000 points of white, autocorrelated and
#    outlier-ridden noise, and recall of 2 %, 5 % and 10 % steps (within ±2
#    and ±5 points) at noise CV 1 %, 2 % and 5 %, for Otava, qpslab
#    --method otava and qpslab's calibrated default. See
#    bench/changepoint_calibrate.py for the series and the scoring;
#    NOISE_SERIES and STEP_SERIES change how many. About 10 minutes at the
#    defaults on 2 cores (Otava's share is most of it). Otava is installed
#    once into ${XDG_CACHE_HOME:-$HOME/.cache}/qpslab-bench/otava-venv.
#    SWEEPS_ONLY=1 skips this part.
set -euo pipefail
cd "$(dirname "$0")/.."
work=$(mktemp -d /tmp/qpslab-cpcal-XXXXXX)
trap 'rm -rf "$work"' EXIT
go build -o "$work/changepoint" ./bench/changepoint
"$work/changepoint" -mode sweeps -sweeps "${SWEEPS:-200}" -flat "${FLAT:-2000}"
if [ "${SWEEPS_ONLY:-0}" = 1 ]; then
	exit 0
fi
echo
py=$(scripts/otava-venv.sh)
"$py" bench/changepoint_calibrate.py "$work/changepoint" "$work"
