#!/usr/bin/env bash
# Regenerates internal/changepoint/testdata/otava/*.json: fixed series (the
# public validation series and seeded synthetic ones) with Apache Otava
# 0.8.0's change points, for internal/changepoint's cross-check test.
#   scripts/otava-vectors.sh [OUTDIR] [VALIDATION_DIR]
# VALIDATION_DIR defaults to the repository's internal/changepoint/testdata/
# validation (its README names each series' public source).
# Extra arguments after those go to scripts/otava-vectors.py, e.g.
#   scripts/otava-vectors.sh /tmp/v "" --fuzz 1000 --seed 7 --fuzz-only
# and CHANGEPOINT_OTAVA_VECTORS=/tmp/v go test ./internal/changepoint/
# runs the cross-check on them as well.
set -euo pipefail
cd "$(dirname "$0")/.."
py=$(scripts/otava-venv.sh)
out=${1:-internal/changepoint/testdata/otava}
vdir=${2:-internal/changepoint/testdata/validation}
shift $(( $# > 2 ? 2 : $# ))
exec "$py" scripts/otava-vectors.py "$out" "$vdir" "$@"
