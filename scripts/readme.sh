#!/usr/bin/env bash
# Regenerates what README.md shows of the demo (make readme): runs
# `qpslab demo` in a home of its own, puts its output, trimmed to the
# verdict and the findings, between README.md's demo-output markers, and
# the first relative-QPS chart of the HTML report it writes, with the
# report's style, into docs/images/demo-relative-qps.svg. Run it after a
# change to what the demo prints (the verdicts, the findings).
set -euo pipefail
cd "$(dirname "$0")/.."
Q=${QPSLAB_BIN:-$PWD/bin/qpslab}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export QPSLAB_HOME=${QPSLAB_HOME:-$work/home}
"$Q" demo --html "$work/demo.html" > "$work/out.txt" 2> "$work/err.txt"
python3 - "$work/out.txt" "$work/demo.html" <<'PY'
import re, sys
out = open(sys.argv[1], encoding="utf-8").read().rstrip("\n").split("\n")
# Trim: the verdict line and the tl;dr with its findings, then the table's
# first rows; the rest is in the HTML report.
keep, rows = [], 0
for line in out:
    if len(keep) >= 45:
        break
    keep.append(line.rstrip())
text = "\n".join("    " + l if l else "" for l in keep) + "\n    …\n"
readme = open("README.md", encoding="utf-8").read()
a, b = "<!-- demo-output -->\n", "<!-- /demo-output -->"
i, j = readme.index(a) + len(a), readme.index(b)
open("README.md", "w", encoding="utf-8").write(readme[:i] + "\n" + text + "\n" + readme[j:])
page = open(sys.argv[2], encoding="utf-8").read()
svg = re.search(r'<svg[^>]*class="chart"[^>]*data-chart="rel:[^"]*".*?</svg>', page, re.S).group(0)
style = re.search(r"<style[^>]*>(.*?)</style>", page, re.S).group(1)
svg = svg.replace('role="img">', 'role="img"><style><![CDATA[' + style + "]]></style><rect width=\"100%\" height=\"100%\" fill=\"white\"/>", 1)
open("docs/images/demo-relative-qps.svg", "w", encoding="utf-8").write(svg + "\n")
PY
echo "README.md and docs/images/demo-relative-qps.svg regenerated from qpslab demo ($(wc -l < "$work/out.txt") lines of output)"
