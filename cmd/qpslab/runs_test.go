package main_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/qpslab/qpslab/internal/result"
	"github.com/qpslab/qpslab/internal/store"
)

// qpslab runs hide takes a run out of labels and compare, unhide brings it
// back, delete removes it; each says what it did in one line, an unknown
// id is one error line, and the audit keeps who ("cli" and the OS user).
func TestRunsHideUnhideDelete(t *testing.T) {
	h := newHome(t)
	// No store yet: one line, and none made.
	oneErrorLine(t, h, []string{"runs", "hide", "nope"}, []string{"does not exist yet"})
	if _, err := os.Stat(filepath.Join(h.Root, "qpslab.db")); err == nil {
		t.Error("runs hide made a store")
	}
	if r := qpslab(t, h, "import", "results", filepath.Join("testdata", "detect", "mariadb-10.2.11-vs-10.11.json")); r.code != 0 {
		t.Fatalf("import: %s", r.stderr)
	}
	ids := func(build string) []string {
		st, err := store.OpenRead(context.Background(), "", filepath.Join(h.Root, "qpslab.db"))
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		list, _, err := st.RunList(context.Background(), store.RunQuery{Build: build})
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, r := range list {
			out = append(out, r.ID)
		}
		return out
	}
	old := ids("mariadb-10.2.11")
	if len(old) == 0 {
		t.Fatal("no runs of mariadb-10.2.11")
	}
	labels := func() string {
		r := qpslab(t, h, "labels", "--format", "json")
		if r.code != 0 {
			t.Fatalf("labels: %s", r.stderr)
		}
		return r.stdout
	}
	if !strings.Contains(labels(), `"mariadb-10.2.11.default"`) {
		t.Fatal("the label is not listed before")
	}

	r := qpslab(t, h, append([]string{"runs", "hide"}, old...)...)
	if r.code != 0 || strings.Count(r.stdout, "\n") != len(old) || !strings.HasPrefix(r.stdout, "hid run "+old[0]+" (mariadb-10.2.11.default ") || !strings.Contains(r.stdout, " by cli ") {
		t.Fatalf("hide: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if strings.Contains(labels(), `"mariadb-10.2.11.default"`) {
		t.Error("a hidden label is still listed")
	}
	oneErrorLine(t, h, []string{"compare", "mariadb-10.2.11.default", "mariadb-system.default"}, []string{"no ok results for mariadb-10.2.11.default"})

	if r := qpslab(t, h, append([]string{"runs", "unhide"}, old...)...); r.code != 0 || !strings.HasPrefix(r.stdout, "unhid run ") {
		t.Fatalf("unhide: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if !strings.Contains(labels(), `"mariadb-10.2.11.default"`) {
		t.Error("an unhidden label is not listed")
	}
	if r := qpslab(t, h, "compare", "mariadb-10.2.11.default", "mariadb-system.default"); r.code != 0 {
		t.Errorf("compare after unhide: %s", r.stderr)
	}

	// An unknown id: one line, and nothing deleted.
	oneErrorLine(t, h, []string{"runs", "delete", old[0], "nope"}, []string{`run "nope": no such run in`, "/runs/ID"})
	if got := ids("mariadb-10.2.11"); len(got) != len(old) {
		t.Fatalf("%d runs left after a refused delete, want %d", len(got), len(old))
	}
	if r := qpslab(t, h, "runs", "delete", old[0]); r.code != 0 || !strings.HasPrefix(r.stdout, "deleted run "+old[0]) {
		t.Fatalf("delete: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if got := ids("mariadb-10.2.11"); len(got) != len(old)-1 {
		t.Errorf("%d runs left after a delete, want %d", len(got), len(old)-1)
	}

	st, err := store.OpenRead(context.Background(), "", filepath.Join(h.Root, "qpslab.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	log, err := st.AuditLog(context.Background())
	if err != nil || len(log) != 2*len(old)+1 {
		t.Fatalf("audit: %d lines, %v", len(log), err)
	}
	if w := log[len(log)-1]; w.Action != store.Delete || !strings.HasPrefix(w.Who, "cli ") || w.RunID != old[0] {
		b, _ := json.Marshal(w)
		t.Errorf("audit of the delete: %s", b)
	}
}

// qpslab import refuses what the ingest API refuses (importer.Validate):
// each problem a line on stderr naming the file, field and run, then one
// line counting them, and nothing imported.
func TestImportValidated(t *testing.T) {
	h := newHome(t)
	rf := filepath.Join(t.TempDir(), "r.json")
	bad := result.Run{SchemaVersion: result.SchemaVersion, Suite: "sysbench", Test: "point-query_range=100", Build: "abc\u202Eexe.png",
		Version: "10.11.14", Config: "a.b@0123456789ab", Threads: 0, Loop: "closed", Status: "pwned", Totals: result.Totals{Reported: 1000, ReportedUnit: "qps"}}
	if err := result.Write(rf, []result.Run{bad}); err != nil {
		t.Fatal(err)
	}
	r := qpslab(t, h, "import", "results", rf)
	lines := strings.Split(strings.TrimSpace(r.stderr), "\n")
	if r.code == 0 || len(lines) != 5 || lines[4] != "qpslab: nothing was imported: 4 problem(s), listed above, one a line; fix the results and import again" {
		t.Fatalf("exit %d:\n%s", r.code, r.stderr)
	}
	for _, w := range []string{rf + `: runs[0].status = "pwned"`, rf + ": runs[0].threads = 0", rf + ": runs[0].build", "U+202E", rf + `: runs[0].config = "a.b": a config name cannot hold '.'`} {
		if !strings.Contains(r.stderr, w) {
			t.Errorf("no %q in\n%s", w, r.stderr)
		}
	}
	if r := qpslab(t, h, "labels"); strings.Contains(r.stdout, "exe.png") {
		t.Errorf("imported:\n%s", r.stdout)
	}
}
