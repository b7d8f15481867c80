package curate

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/qpslab/qpslab/internal/result"
	"github.com/qpslab/qpslab/internal/store"
)

// Apply does each id once, refuses an action it does not know and an
// empty id, and Command says what it did in one line a run, as the OS
// user.
func TestApplyAndCommand(t *testing.T) {
	ctx := context.Background()
	st, err := store.Open(ctx, "", filepath.Join(t.TempDir(), "qpslab.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	run := result.Run{SchemaVersion: result.SchemaVersion, Suite: "sysbench", Test: "point-query_range=100", Build: "b", Config: "c@01",
		Threads: 4, Loop: "closed", Status: result.OK, Params: map[string]string{"engine": "rocksdb"}, Started: time.Now().UTC()}
	if _, err := st.Import(ctx, []result.Run{run}, store.Meta{Source: "test"}); err != nil {
		t.Fatal(err)
	}
	list, _, err := st.RunList(ctx, store.RunQuery{})
	if err != nil || len(list) != 1 {
		t.Fatalf("%d runs, %v", len(list), err)
	}
	id := list[0].ID
	if _, err := Apply(ctx, st, store.Audit{Action: "purge", Who: "x", At: time.Now()}, []string{id}); err == nil {
		t.Error("an unknown action done")
	}
	if _, err := Apply(ctx, st, store.Audit{Action: store.Hide, Who: "x", At: time.Now()}, []string{" "}); err == nil {
		t.Error("an empty id taken")
	}
	var out strings.Builder
	if err := Command(ctx, st, store.Hide, []string{id, id}, &out); err != nil {
		t.Fatal(err)
	}
	want := "hid run " + id + " (b.c:rocksdb point-query_range=100, 4 thread(s)) by cli "
	if !strings.HasPrefix(out.String(), want) || strings.Count(out.String(), "\n") != 1 {
		t.Errorf("%q, want one line starting %q", out.String(), want)
	}
	if log, _ := st.AuditLog(ctx); len(log) != 1 || log[0].Who != CLI() || log[0].Label != "b.c:rocksdb" {
		t.Errorf("audit: %+v", log)
	}
	if Token("0123", "ci") != "token 0123 (ci)" {
		t.Error(Token("0123", "ci"))
	}
}
