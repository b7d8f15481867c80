package testenv

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// SkipLog is the environment variable naming a file to which Skip appends
// a line, "TestName: why", for each test it skips; `make test` prints them
// at its end, so that no test is skipped without a word.
const SkipLog = "QPSLAB_SKIP_LOG"

// Skip skips t, and names it and why in the file SkipLog names (when it
// names one). Every test of qpslab that skips does so through Skip: the
// machine `make setup` prepares runs them all but the mysql flavor's (no
// MySQL can be had there), and `make test` lists whatever was skipped.
func Skip(t testing.TB, why string) {
	t.Helper()
	why = strings.Join(strings.Fields(why), " ") // one line
	if p := os.Getenv(SkipLog); p != "" {
		// One write of one short line with O_APPEND: the packages' test
		// binaries run in parallel and append to the same file.
		if f, err := os.OpenFile(p, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644); err == nil {
			f.WriteString(t.Name() + ": " + why + "\n")
			f.Close()
		} else {
			t.Logf("%s: %v", SkipLog, err)
		}
	}
	t.Skip(why)
}

// Chromium returns the path of Debian's Chromium (chromium or
// chromium-browser on PATH). Without one it skips t through Skip, saying
// what is not tested (what), or, when QPSLAB_REQUIRE_CHROMIUM=1 (make
// test sets it), fails t.
func Chromium(t testing.TB, what string) string {
	t.Helper()
	for _, n := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(n); err == nil {
			return p
		}
	}
	if os.Getenv("QPSLAB_REQUIRE_CHROMIUM") == "1" {
		t.Fatal("QPSLAB_REQUIRE_CHROMIUM=1 but no chromium on PATH (apt-get install chromium; make setup installs it)")
	}
	Skip(t, "no chromium on PATH: "+what+" (apt-get install chromium; QPSLAB_REQUIRE_CHROMIUM=1 makes this a failure)")
	return ""
}
