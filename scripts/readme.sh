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
chmod 711 "$work" # the servers run as an unprivileged user, who must reach the home
export QPSLAB_HOME=${QPSLAB_HOME:-$work/home}
if ! "$Q" demo --html "$work/demo.html" > "$work/out.txt" 2> "$work/err.txt"; then
	echo "readme: qpslab demo failed; its last lines:" >&2
	tail -n 20 "$work/err.txt" >&2; tail -n 20 "$work/out.txt" >&2
	exit 1
fi
python3 - "$work/out.txt" "$work/demo.html" <<'PY'
import re, sys
out = open(sys.argv[1], encoding="utf-8").read().rstrip("\n").split("\n")
# Trim: from the tl;dr (its findings, the verdict line and each call) to
# the cost verdict's summary line; the per-run table before it, the cost
# verdict's lines and the tables after it are in the HTML report.
start = next(i for i, l in enumerate(out) if l.startswith("tl;dr:"))
keep = []
for line in out[start:]:
    keep.append(line.rstrip())
    if line.lstrip().startswith("cost (") or line.startswith("TEST ") or len(keep) > 70:
        break
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
[ -z "${KEEP:-}" ] || cp "$work/out.txt" "$KEEP"
echo "README.md and docs/images/demo-relative-qps.svg regenerated from qpslab demo ($(wc -l < "$work/out.txt") lines of output)"
