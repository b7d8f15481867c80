package selector

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/qpslab/qpslab/internal/result"
	"github.com/qpslab/qpslab/internal/store"
)

// A layout file groups a comparison only where the surface allows files
// (the commands): the API's selection takes the same path as a layout's
// name and refuses it, without reading the file.
func TestLayoutFilesOnlyForCommands(t *testing.T) {
	ctx := context.Background()
	st, err := store.Open(ctx, "", filepath.Join(t.TempDir(), "qpslab.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if _, err := st.Import(ctx, []result.Run{testRun("b", "6.1", "", 1000), testRun("d", "6.1", "", 1100)}, store.Meta{Source: "run", Hostname: "alpha"}); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "mine.yaml")
	if err := os.WriteFile(file, []byte("name: mine\ngroups:\n  - name: all-of-t\n    members: [t]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cmp, _, err := Selection{LayoutFiles: true}.Compare(ctx, st, []string{"b.c", "d.c"}, file, nil)
	if err != nil || cmp.Layout != "mine" || len(cmp.Rows) != 1 || cmp.Rows[0].Group != "all-of-t" {
		t.Fatalf("with files: %+v %v", cmp, err)
	}
	_, _, err = Selection{}.Compare(ctx, st, []string{"b.c", "d.c"}, file, nil)
	if err == nil || !strings.Contains(err.Error(), "--groups "+file) || strings.Contains(err.Error(), "\n") {
		t.Errorf("without files: %v; want the path refused as a layout's name", err)
	}
}
