#!/usr/bin/env bash
# The fault-injection suite (issue 60, docs/reliability.md), at its full
# size: each fault test of qpslab's own, run against the binary built here,
# with qpslab SIGKILLed at 20 random points of a run of two labels (make
# test kills it at 3). Each test injects its fault into real qpslab runs in
# a home of its own and checks what qpslab promises after it: every run
# that finished is in the store and in its results file, the run the fault
# cut says why on the label it concerns, nothing is left running, no
# partial file is left, and the next run works.
#
#   the full disk      cmd/qpslab TestFaultFullDisk (a sized tmpfs for the
#                      home, filled mid-run), internal/recorder
#                      TestRunCutByFullDisk, internal/atomicfile TestFullDisk
#   a reboot           internal/store TestRebootReapsRuns and
#                      TestOpenKilledStoreOfTheLastRelease (a boot id of the
#                      test's own, under a /proc root it chooses)
#   SIGKILL of qpslab  cmd/qpslab TestFaultKillQpslab (POINTS points)
#   a server killed    cmd/qpslab TestFaultServerKilled and internal/plan
#                      TestServerDiesMidRunTwoLabels (two labels)
#   two runs at once   cmd/qpslab TestFaultTwoRunsAtOnce,
#                      internal/atomicfile TestConcurrentWriters
#
# Needs root (the tmpfs) and make setup's MariaDB. POINTS=20 by default;
# SEED is printed by the kill test for a replay of its points' draw.
# Prints each test's result and the kill points' outcomes; exits non-zero
# when any test fails. About 10 minutes on the project's 2-core VM.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
POINTS=${POINTS:-20}

go build -o "$ROOT/bin/qpslab" ./cmd/qpslab
export QPSLAB_BIN=$ROOT/bin/qpslab QPSLAB_FAULT_POINTS=$POINTS
status=0
log=$(mktemp)
trap 'rm -f "$log"' EXIT
run() { # PACKAGE PATTERN
	echo "== go test $1 -run '$2'"
	if go test -count=1 -timeout 60m -v -run "$2" "$1" >"$log" 2>&1; then :; else status=1; fi
	grep -E '^ *(--- |ok|FAIL)|point [0-9]+:|a whole run takes|the results files:|faults_test.go:[0-9]+: (twin|default):|SKIP' "$log" | cut -c1-240 || true
}
run ./internal/atomicfile/ 'TestFullDisk|TestConcurrentWriters'
run ./internal/recorder/ 'TestRunCutByFullDisk|TestStoreDiskFull|TestFileDiskFull'
run ./internal/store/ 'TestRebootReapsRuns|TestOpenKilledStoreOfTheLastRelease|TestAbortedRuns'
run ./internal/plan/ 'TestServerDiesMidRun'
run ./cmd/qpslab/ 'TestFault'
if [ "$status" = 0 ]; then echo "faults: every test passed"; else echo "faults: a test FAILED (above)"; fi
exit "$status"
