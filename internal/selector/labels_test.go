package selector

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/qpslab/qpslab/internal/result"
	"github.com/qpslab/qpslab/internal/store"
)

// The label list filters by text, suite, host and engine, and cuts what
// matches into pages of LabelsPerPage; a page past the last is bad input
// naming the pages there are.
func TestLabels(t *testing.T) {
	ctx := context.Background()
	st, err := store.Open(ctx, "", filepath.Join(t.TempDir(), "qpslab.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	// 120 builds on alpha (every third with MyRocks), 10 on beta.
	var alpha, beta []result.Run
	for i := 0; i < 120; i++ {
		engine := ""
		if i%3 == 0 {
			engine = "rocksdb"
		}
		alpha = append(alpha, testRun(fmt.Sprintf("Nightly%03d", i), "6.1", engine, 1000))
	}
	for i := 0; i < 10; i++ {
		beta = append(beta, testRun(fmt.Sprintf("beta%d", i), "6.2", "", 1000))
	}
	for _, x := range []struct {
		host string
		runs []result.Run
	}{{"alpha", alpha}, {"beta", beta}} {
		if _, err := st.Import(ctx, x.runs, store.Meta{Source: "run", Hostname: x.host}); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		q            LabelQuery
		total, shown int
		first        string
	}{
		{LabelQuery{}, 130, 130, "Nightly000.c:rocksdb"},
		{LabelQuery{Paged: true}, 130, 50, "Nightly000.c:rocksdb"},
		{LabelQuery{Paged: true, Page: 2}, 130, 30, "Nightly100.c"},
		{LabelQuery{Text: "nightly01", Paged: true}, 10, 10, "Nightly010.c"},
		{LabelQuery{Text: "C:ROCKS"}, 40, 40, "Nightly000.c:rocksdb"},
		{LabelQuery{StorageEngine: "rocksdb"}, 40, 40, "Nightly000.c:rocksdb"},
		{LabelQuery{StorageEngine: "innodb", Host: "beta"}, 10, 10, "beta0.c"},
		{LabelQuery{Host: "alpha", Paged: true, Page: 1}, 120, 50, "Nightly050.c"},
		{LabelQuery{Suite: "s", Text: "beta9"}, 1, 1, "beta9.c"},
		{LabelQuery{Suite: "other"}, 0, 0, ""},
		{LabelQuery{Suite: "other", Paged: true}, 0, 0, ""}, // page 0 of nothing: empty, not an error
	} {
		p, err := Labels(ctx, st, c.q)
		first := ""
		if len(p.Labels) > 0 {
			first = p.Labels[0].Label
		}
		if err != nil || p.Total != c.total || len(p.Labels) != c.shown || first != c.first {
			t.Errorf("%+v: %d of %d, the first %q (%v); want %d of %d, the first %q", c.q, len(p.Labels), p.Total, first, err, c.shown, c.total, c.first)
		}
	}
	p, _ := Labels(ctx, st, LabelQuery{})
	if strings.Join(p.Suites, ",") != "s" || strings.Join(p.Hosts, ",") != "alpha,beta" || strings.Join(p.StorageEngines, ",") != "innodb,rocksdb" {
		t.Errorf("facets: %v %v %v", p.Suites, p.Hosts, p.StorageEngines)
	}
	var se *Error
	for _, c := range []struct {
		q    LabelQuery
		want string
	}{
		{LabelQuery{Paged: true, Page: 3}, "page 3 is past the last: 130 label(s) match, on pages 0 to 2"},
		{LabelQuery{Paged: true, Page: 1, Host: "beta"}, "page 1 is past the last: 10 label(s) match, on pages 0 to 0"},
		{LabelQuery{Paged: true, Page: -1}, "page -1: give a page number from 0"},
	} {
		_, err := Labels(ctx, st, c.q)
		if !errors.As(err, &se) || se.NotFound || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%+v: %v, want bad input %q", c.q, err, c.want)
		}
	}
}
