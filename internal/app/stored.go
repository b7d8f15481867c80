package app

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/qpslab/qpslab/internal/build"
	"github.com/qpslab/qpslab/internal/history"
	"github.com/qpslab/qpslab/internal/importer"
	"github.com/qpslab/qpslab/internal/recorder"
	"github.com/qpslab/qpslab/internal/report"
	"github.com/qpslab/qpslab/internal/result"
	"github.com/qpslab/qpslab/internal/selector"
	"github.com/qpslab/qpslab/internal/store"
)

// ReadStore opens the env's existing store for a command that only reads:
// it creates nothing (store.ErrNoStore when there is none).
func (e Env) ReadStore(ctx context.Context) (*store.Store, error) {
	st, err := store.OpenRead(ctx, e.Store, e.Home.StoreFile())
	return st, e.damaged(err)
}

// WithStore runs f on the env's existing store (ReadStore) and closes it.
func (e Env) WithStore(ctx context.Context, f func(*store.Store) error) error {
	st, err := e.ReadStore(ctx)
	if err != nil {
		return err
	}
	defer st.Close()
	return e.damaged(f(st))
}

// damaged names the home's results folder in a damaged store's error (the
// way back through qpslab import results).
func (e Env) damaged(err error) error {
	if d, ok := store.Damaged(err); ok && d.Results == "" {
		d.Results = e.Home.Results()
	}
	return err
}

// StoreCheckOptions are qpslab store check's flags.
type StoreCheckOptions struct {
	Reindex bool   // rebuild the damaged indexes, where only indexes are
	Salvage string // copy what still reads into a new store at this file
}

// StoreCheck checks the env's store (qpslab store check): SQLite's quick
// check, the damaged indexes rebuilt with Reindex where only indexes are
// damaged; PostgreSQL's page checksums; with Salvage, what still reads of
// a damaged SQLite store copied into a new one. What it finds is printed;
// damage is the error.
func StoreCheck(ctx context.Context, e Env, o StoreCheckOptions) error {
	if o.Salvage != "" {
		return salvage(ctx, e, o.Salvage)
	}
	c, err := store.CheckStore(ctx, e.Store, e.Home.StoreFile(), o.Reindex)
	switch {
	case c == nil:
		return e.damaged(err)
	case c.Postgres && c.Checksums:
		fmt.Fprintf(e.Out, "store %s: PostgreSQL checks each page it reads against its checksum: %d failure(s) counted in its database (pg_stat_database)\n", c.Where, c.Failures)
	case c.Postgres:
		fmt.Fprintf(e.Out, "store %s: PostgreSQL's data checksums are off, so it cannot tell a damaged page: initdb --data-checksums (or pg_checksums --enable on the stopped cluster) turns them on; pg_amcheck checks the indexes\n", c.Where)
	case c.Reindexed:
		fmt.Fprintf(e.Out, "store %s: its damaged indexes (%s) are rebuilt from the tables: nothing was lost, and the quick check finds nothing wrong\n", c.Where, strings.Join(c.Indexes, ", "))
	case c.OK():
		fmt.Fprintf(e.Out, "store %s: ok (SQLite's quick check finds nothing wrong)\n", c.Where)
	default:
		fmt.Fprintf(e.Out, "store %s: SQLite's quick check says:\n", c.Where)
		for _, l := range c.Problems() {
			fmt.Fprintf(e.Out, "  %s\n", l)
		}
	}
	return e.damaged(err)
}

// salvage copies what still reads of the env's store into a new store at
// to, and says what came and what did not.
func salvage(ctx context.Context, e Env, to string) error {
	tables, err := store.Salvage(ctx, e.Store, e.Home.StoreFile(), to)
	if err != nil {
		return err
	}
	var lost []string
	rows := 0
	for _, t := range tables {
		rows += t.Rows
		if t.Lost {
			lost = append(lost, fmt.Sprintf("%s (%d rows read)", t.Table, t.Rows))
		}
	}
	fmt.Fprintf(e.Out, "salvaged %d rows of %d tables into %s: use it with --store %s (or move it over the damaged store)\n", rows, len(tables), to, to)
	if len(lost) > 0 {
		fmt.Fprintf(e.Out, "rows that could not be read are lost in: %s; qpslab import results %s/*.json brings back runs qpslab ran (imported again, a run stored already is skipped)\n",
			strings.Join(lost, ", "), e.Home.Results())
	}
	return nil
}

// Labels prints the stored result sets (qpslab labels), or says there are
// none yet.
func Labels(ctx context.Context, e Env, format string) error {
	err := e.WithStore(ctx, func(st *store.Store) error {
		ls, err := st.Labels(ctx)
		if err != nil {
			return err
		} else if format == "json" {
			return report.JSON(e.Out, ls)
		}
		return report.Print(e.Out, store.LabelsTable(ls, st.Where()), "text")
	})
	if errors.Is(err, store.ErrNoStore) {
		fmt.Fprintf(e.Out, "no results yet (%v)\n", err)
		return nil
	}
	return err
}

// Import stores the runs an import read (qpslab import …): read's error,
// or what importer.Validate finds, is reported one problem a line and
// nothing is stored.
func Import(ctx context.Context, e Env, runs []result.Run, err error) error {
	if err == nil {
		err = importer.Validate(runs)
	}
	if err != nil {
		return importer.Report(e.Err, err)
	}
	st, err := e.openStore(ctx)
	if err != nil {
		return err
	}
	defer st.Close()
	return recorder.Import(ctx, st, runs, e.Out, e.Err)
}

// CompareOptions are what qpslab compare and qpslab report take.
type CompareOptions struct {
	Sel                  selector.Selection
	Groups, Format, HTML string
	Summary              string
	Tables               bool // compare's tables; report writes the HTML report only
}

// Compare compares the labels' stored runs (the first the base): compare's
// tables, and with HTML the report.
func Compare(ctx context.Context, e Env, labels []string, o CompareOptions) error {
	if !o.Tables && o.HTML == "" {
		return fmt.Errorf("name the report file with --html FILE")
	}
	return e.WithStore(ctx, func(st *store.Store) error {
		cmp, sets, err := o.Sel.Compare(ctx, st, labels, o.Groups, e.Err)
		if err == nil && o.Tables {
			err = report.ComparisonAs(e.Out, sets, cmp, o.Format, o.Summary)
		}
		if err == nil && o.HTML != "" {
			err = report.HTMLReport(e.Err, o.HTML, sets, cmp, selector.Content(ctx, st))
		}
		return err
	})
}

// Detect finds the change points of q's series (qpslab detect: the store's,
// or --input's files) and prints them in format; given says which flags
// the user set (the settings file fills the others).
func Detect(ctx context.Context, e Env, q selector.DetectQuery, given func(string) bool, format string) error {
	if q.SettingsFile == "" {
		q.SettingsFile = e.Home.DetectSettings()
	}
	q.Given = given
	d, err := selector.Detect(ctx, func() (*store.Store, error) { return e.ReadStore(ctx) }, q)
	if err != nil {
		return err
	}
	fmt.Fprint(e.Err, d.TooShort())
	return report.DetectOut(e.Out, e.Err, report.NewDetection(d.Series, d.Changes, d.Builds, d.Gate), format)
}

// Export writes q's series as files of format (otava-csv, nyrkio-json)
// under dir and says how many and where (qpslab export).
func Export(ctx context.Context, e Env, q selector.HistoryQuery, format, dir string) error {
	if err := history.CheckExport(format); err != nil {
		return err
	}
	return e.WithStore(ctx, func(st *store.Store) error {
		series, err := selector.History(ctx, st, q)
		if err != nil {
			return err
		}
		files, err := history.Write(dir, format, series)
		if err == nil {
			fmt.Fprintf(e.Out, "%d series in %d file(s) under %s\n%s\n", len(series), len(files), dir, strings.Join(files, "\n"))
		}
		return err
	})
}

// Builds prints qpslab builds list: the registered builds, or with
// available what each source offers to fetch.
func Builds(ctx context.Context, e Env, available bool) error {
	r := e.Registry()
	if available {
		offers := r.Available(ctx, func(f string, a ...any) { fmt.Fprintf(e.Err, f+"\n", a...) })
		return report.Print(e.Out, build.AvailableTable(offers), "text")
	}
	bs, err := r.List(ctx)
	if err != nil {
		return err
	}
	return report.Print(e.Out, build.ListTable(bs), "text")
}
