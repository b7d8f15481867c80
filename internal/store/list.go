package store

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/qpslab/qpslab/internal/table"
)

// TokensTable is qpslab tokens list: each token's id, name, scopes, when
// it was made and last used, and whether it is revoked. Never a token
// itself: the store does not have it.
func TokensTable(ts []Token) *table.Table {
	t := table.New("ID", "NAME", "SCOPES", "CREATED", "LAST USED", "REVOKED")
	t.Empty = "no tokens: qpslab tokens create NAME --scope read,ingest makes one"
	day := func(t time.Time) string {
		if t.IsZero() {
			return "-"
		}
		return t.UTC().Format("2006-01-02 15:04")
	}
	for _, tk := range ts {
		t.Add(tk.ID, tk.Name, strings.Join(tk.Scopes, ","), day(tk.Created), day(tk.LastUsed), day(tk.Revoked))
	}
	return t
}

// LabelsTable is qpslab labels: one line per label and suite, with
// the build's version; where names the store for an empty one's line.
func LabelsTable(ls []LabelInfo, where string) *table.Table {
	t := table.New("LABEL", "VERSION", "SUITE", "RUNS", "TESTS", "THREADS", "STATUS", "LAST", "HOSTS / SOURCES")
	t.Empty = fmt.Sprintf("no results in %s yet: run qpslab run SUITE (qpslab suites lists them), or qpslab import", where)
	for _, l := range ls {
		last, version := l.Last, l.Version
		if len(last) > 19 {
			last = last[:19]
		}
		if version == "" {
			version = "-"
		}
		threads := make([]string, len(l.Threads))
		for i, x := range l.Threads {
			threads[i] = strconv.Itoa(x)
		}
		t.Add(l.Label, version, l.Suite, strconv.Itoa(l.Runs), strconv.Itoa(l.Tests), strings.Join(threads, ","), l.Status, last,
			strings.Join(l.Hosts, " ")+" / "+strings.Join(l.Sources, " "))
	}
	return t
}
