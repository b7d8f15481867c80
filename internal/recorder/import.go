package recorder

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/qpslab/qpslab/internal/result"
	"github.com/qpslab/qpslab/internal/store"
)

// Import stores every run of an import (qpslab import) in one transaction,
// then says on out what was stored where and what version the build has,
// or on errw that it has none.
func Import(ctx context.Context, st *store.Store, runs []result.Run, out, errw io.Writer) error {
	if err := result.CheckRuns(runs); err != nil { // each figure within its metric's bounds
		return fmt.Errorf("nothing was imported: %w", err)
	}
	src := "import:results" // qpslab's own results files
	if len(runs) > 0 && runs[0].Params["source"] != "" {
		src = runs[0].Params["source"]
	}
	skipped, err := st.Import(ctx, runs, store.Meta{Source: src})
	if err != nil {
		return err
	}
	build := ""
	if len(runs) > 0 && src != "import:results" {
		r := runs[0]
		if r.Version != "" {
			build = fmt.Sprintf(" (build %s: %s)", r.Build, strings.TrimSpace(r.Flavor+" "+r.Version))
		}
	}
	fmt.Fprintf(out, "imported %d result(s) into %s as %s%s\n", len(runs)-skipped, st.Where(), Labels(runs), build)
	if skipped > 0 {
		fmt.Fprintf(out, "%d result(s) were already stored and were skipped\n", skipped)
	}
	if len(runs) > 0 && src != "import:results" && runs[0].Version == "" {
		fmt.Fprintf(errw, "build %s has no version (no --version, and its name is not the reference's, such as ma100244 or my8036): "+
			"its results come after the versioned builds' in history, in name order; import again with --version to place them\n", runs[0].Build)
	}
	return nil
}
