#!/usr/bin/env bash
# Prints the path of a Python interpreter that has Apache Otava installed,
# creating the virtualenv first if needed (idempotent). Used by
# scripts/otava-vectors.sh, bench/changepoint.sh and
# bench/changepoint-calibrate.sh.
#   OTAVA_VERSION  (default 0.8.0)
#   OTAVA_VENV     (default ${XDG_CACHE_HOME:-$HOME/.cache}/qpslab-bench/otava-venv)
set -euo pipefail
ver=${OTAVA_VERSION:-0.8.0}
venv=${OTAVA_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/qpslab-bench/otava-venv}
py=$venv/bin/python
if ! "$py" -c "import importlib.metadata as m, sys; sys.exit(m.version('apache-otava') != '$ver')" 2>/dev/null; then
  echo "otava-venv: installing apache-otava==$ver into $venv" >&2
  mkdir -p "$(dirname "$venv")"
  python3 -m venv "$venv" >&2
  "$py" -m pip install -q --disable-pip-version-check "apache-otava==$ver" >&2
fi
echo "$py"
