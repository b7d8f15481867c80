package report

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/qpslab/qpslab/internal/store"
)

// Tokens writes qpslab tokens list: each token's id, name, scopes, when it
// was made and last used, and whether it is revoked. Never a token itself:
// the store does not have it.
func Tokens(w io.Writer, ts []store.Token) error {
	if len(ts) == 0 {
		_, err := fmt.Fprintln(w, "no tokens: qpslab tokens create NAME --scope read,ingest makes one")
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tNAME\tSCOPES\tCREATED\tLAST USED\tREVOKED")
	day := func(t time.Time) string {
		if t.IsZero() {
			return "-"
		}
		return t.UTC().Format("2006-01-02 15:04")
	}
	for _, t := range ts {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", t.ID, t.Name, strings.Join(t.Scopes, ","), day(t.Created), day(t.LastUsed), day(t.Revoked))
	}
	return tw.Flush()
}
