package testenv

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Skip names the test and why in the skip log, one line each, and skips
// it. The skipping tests run in a child test binary (TestSkipProcess), so
// that this run itself skips nothing.
func TestSkipLog(t *testing.T) {
	log := filepath.Join(t.TempDir(), "skips")
	cmd := exec.Command(os.Args[0], "-test.run=^TestSkipProcess$", "-test.v", "-test.count=1")
	cmd.Env = append(os.Environ(), SkipLog+"="+log, "QPSLAB_SKIP_PROCESS=1", "QPSLAB_REQUIRE_CHROMIUM=", "PATH="+t.TempDir())
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the child test binary: %v\n%s", err, out)
	}
	for _, want := range []string{"--- SKIP: TestSkipProcess/plain", "--- SKIP: TestSkipProcess/chromium"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("the child's output lacks %q:\n%s", want, out)
		}
	}
	b, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	want := "TestSkipProcess/plain: no widget here (install one)\n" +
		"TestSkipProcess/chromium: no chromium on PATH: the widget is not drawn (apt-get install chromium; QPSLAB_REQUIRE_CHROMIUM=1 makes this a failure)\n"
	if string(b) != want {
		t.Errorf("the skip log:\n%s\nwant:\n%s", b, want)
	}
}

// TestSkipProcess is not a test of its own: TestSkipLog runs it in a child
// test binary, where it skips. Run without QPSLAB_SKIP_PROCESS (any other
// run) it returns at once, and is no skip.
func TestSkipProcess(t *testing.T) {
	if os.Getenv("QPSLAB_SKIP_PROCESS") != "1" {
		return // a subprocess helper of TestSkipLog
	}
	t.Run("plain", func(t *testing.T) {
		Skip(t, "no widget here\n(install one)") // said in one line
		t.Error("Skip did not stop the test")
	})
	t.Run("chromium", func(t *testing.T) {
		Chromium(t, "the widget is not drawn") // PATH holds no chromium
		t.Error("Chromium did not skip the test")
	})
}
