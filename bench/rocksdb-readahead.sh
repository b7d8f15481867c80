#!/usr/bin/env bash
# The readahead study of RocksDB issue 12038 (issue 62, docs/dbbench.md
# "The readahead study"), end to end, as its post runs it:
#  1. RocksDB's source of each Debian suite in SOURCES (bookworm's 7.8.3,
#     trixie's 9.10.0: Debian has no 8.x, so these bracket the post's
#     8.5.4 → 8.7.3 change), fetched with qpslab builds source (apt-get
#     source through qpslab's private apt state, or the upstream tarball
#     alone, checked against the suite's signed Sources index, where the
#     mirror lacks the .dsc);
#  2. compiled with qpslab builds compile TARBALL (make
#     DISABLE_WARNING_AS_ERROR=1 PORTABLE=1 DEBUG_LEVEL=0 db_bench), each
#     compile's wall and CPU time into compiles.tsv; with CCACHE_STUDY=1,
#     the first version compiled twice more from a clean build folder,
#     with ccache warm and with ccache off (CCACHE_DISABLE=1), for what
#     ccache saves on a rebuild;
#  3. one qpslab run: the builds × the option sets default, cra96k,
#     cra512k, cra8m (above this host's max_sectors_kb) and odirect
#     (O_DIRECT), cached and IO-bound, over TESTS (overwriteandwait, the
#     post's, and the read steps), timed;
#  4. its tables into OUT: qpslab compare (the relative QPS per test and
#     group), qpslab metrics (per op: readahead_kb, max_sectors_kb,
#     rareq-sz, r/o, the IO-bound verdict's block cache misses), and the
#     HTML report with the relative QPS charts.
# BUILDS names builds to sweep instead of compiling (e.g. rocksdb-system,
# Debian's 7.8.3 binary). The compiles take long on a small host (RocksDB
# is ~330 C++ files: about 25 CPU minutes a version here); a compile that
# is interrupted resumes where it stopped (its build folder and ccache are
# kept in QPSLAB_HOME). Needs apt-get and Debian's mirror, and RocksDB's
# build dependencies (qpslab builds compile names what is missing).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
Q=${QPSLAB_BIN:-$ROOT/bin/qpslab}

# ---- What the run does: the lead adjusts these at merge. ------------------
SOURCES=${SOURCES:-"bookworm:rocksdb=7.8.3-2:rx783 trixie:rocksdb=9.10.0-1:rx9100"}
BUILDS=${BUILDS:-}                 # set: sweep these builds, compile nothing
CONFIGS=${CONFIGS:-default,cra96k,cra512k,cra8m,odirect}
WORKLOADS=${WORKLOADS:-cached,iobound}
TESTS=${TESTS:-readrandom,fwdrange,overwriteandwait}
SIZE=${SIZE:-0.5}                  # million keys (420 bytes each, raw)
SECONDS_PER_STEP=${SECONDS_PER_STEP:-20}
CCACHE_STUDY=${CCACHE_STUDY:-0}
JOBS=${JOBS:-$(nproc)}
OUT=${OUT:-$ROOT/bench/.work/rocksdb-readahead}
export QPSLAB_HOME=${QPSLAB_HOME:-$ROOT/bench/.work/rocksdb-readahead/home}
# ---------------------------------------------------------------------------

mkdir -p "$OUT/src" "$QPSLAB_HOME"
[ -x "$Q" ] || { echo "build qpslab first: make build" >&2; exit 1; }
say() { printf '%s %s\n' "$(date -u +%H:%M:%S)" "$*" >&2; }

# timed NAME CMD...: runs CMD, appends NAME, wall seconds, CPU seconds of
# it and its children (user+sys) to compiles.tsv.
timed() {
	local name=$1; shift
	local tf; tf=$(mktemp)
	/usr/bin/time -f '%e %U %S' -o "$tf" "$@"
	read -r wall user sys < "$tf"; rm -f "$tf"
	printf '%s\t%s\t%.0f\n' "$name" "$wall" "$(echo "$user + $sys" | bc)" >> "$OUT/compiles.tsv"
	say "$name: ${wall} s wall"
}

if [ -z "$BUILDS" ]; then
	[ -f "$OUT/compiles.tsv" ] || printf 'compile\twall_s\tcpu_s\n' > "$OUT/compiles.tsv"
	first=""
	for s in $SOURCES; do
		IFS=: read -r suite spec name <<< "$s"
		tarball=$("$Q" builds source "$spec" --suite "$suite" --into "$OUT/src")
		say "compiling $tarball as $name"
		timed "$name" nice -n 10 "$Q" builds compile "$tarball" --name "$name" --jobs "$JOBS" --replace
		BUILDS=${BUILDS:+$BUILDS,}$name
		first=${first:-$name:$tarball}
	done
	if [ "$CCACHE_STUDY" = 1 ] && command -v ccache > /dev/null; then
		IFS=: read -r name tarball <<< "$first"
		for mode in warm off; do
			# A clean rebuild of the same tree in the same folder: ccache's
			# hash includes the folder (-g), so only this one can hit.
			rm -rf "$QPSLAB_HOME"/cache/src/"$(basename "$(sed -n 's/^src: //p' "$QPSLAB_HOME/builds/$name.yaml")")"-*/build
			ccache -z > /dev/null
			if [ $mode = off ]; then
				timed "$name-rebuild-ccache-off" env CCACHE_DISABLE=1 nice -n 10 "$Q" builds compile "$tarball" --name "$name" --jobs "$JOBS" --replace
			else
				timed "$name-rebuild-ccache-warm" nice -n 10 "$Q" builds compile "$tarball" --name "$name" --jobs "$JOBS" --replace
			fi
			ccache -s > "$OUT/ccache-$mode.txt"
		done
	fi
fi

say "sweep: $BUILDS × $CONFIGS × $WORKLOADS, tests $TESTS, size $SIZE, $SECONDS_PER_STEP s a step"
start=$(date +%s)
nice -n 10 "$Q" run db_bench --build "$BUILDS" --config "$CONFIGS" --workload "$WORKLOADS" --size "$SIZE" \
	--seconds "$SECONDS_PER_STEP" --settle-secs 0 --tests "$TESTS" --out "$OUT/runs.json" > "$OUT/run.txt" 2>&1
echo "sweep wall time: $(( $(date +%s) - start )) s" | tee -a "$OUT/run.txt" >&2

labels=()
IFS=, read -ra bs <<< "$BUILDS"
IFS=, read -ra cs <<< "$CONFIGS"
for b in "${bs[@]}"; do for c in "${cs[@]}"; do labels+=("$b.$c"); done; done
"$Q" compare "${labels[@]}" --format md > "$OUT/compare.md"
"$Q" metrics "${labels[@]}" --format md > "$OUT/metrics.md"
"$Q" report --html "$OUT/report.html" "${labels[@]}" > /dev/null
"$Q" builds list > "$OUT/builds.txt"
say "tables in $OUT (compare.md, metrics.md, report.html, compiles.tsv)"
