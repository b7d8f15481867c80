package store

import (
	"database/sql"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/qpslab/qpslab/internal/result"
	"github.com/qpslab/qpslab/internal/testenv"
)

// twoLabels is a SQLite store holding the runs of two labels (b1.default
// and b2.default), closed: its WAL folded into the file.
func twoLabels(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "qpslab.db")
	s, err := Open(ctx, path, path)
	if err != nil {
		t.Fatal(err)
	}
	var runs []result.Run
	for _, b := range []string{"b1", "b2"} {
		r := finished(meta("point-query_range=100", 2), result.OK, 1000, 3)
		r.Build = b
		runs = append(runs, r)
	}
	if _, err := s.Import(ctx, runs, Meta{Source: "run"}); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path + "-wal"); err == nil {
		t.Fatal("the WAL is still there after the store closed")
	}
	return path
}

// spoil changes the root page of the b-tree called name in the SQLite
// file at path, as a torn or misdirected write would.
func spoil(t *testing.T, path, name string, change func(page []byte)) {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	var size, root int64
	err1 := db.QueryRow(`PRAGMA page_size`).Scan(&size)
	err2 := db.QueryRow(`SELECT rootpage FROM sqlite_schema WHERE name = ?`, name).Scan(&root)
	db.Close()
	if err := errors.Join(err1, err2); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	page := make([]byte, size)
	if _, err := f.ReadAt(page, (root-1)*size); err != nil {
		t.Fatal(err)
	}
	change(page)
	if _, err := f.WriteAt(page, (root-1)*size); err != nil {
		t.Fatal(err)
	}
}

// dropCell takes the last cell off a b-tree leaf (its cell count, at
// offset 3): the page stays readable, its last entry is gone.
func dropCell(page []byte) {
	n := binary.BigEndian.Uint16(page[3:5])
	binary.BigEndian.PutUint16(page[3:5], n-1)
}

// The case: one damaged index page (the one the labels are read
// through) and qpslab labels listed 1 of the store's 2 labels, exit 0.
// The store's open now checks it and refuses it, naming the file and the
// way back (the damage is in an index only: REINDEX, nothing lost), and
// store check --reindex brings both labels back.
func TestDamagedIndexPageSaysSo(t *testing.T) {
	path := twoLabels(t)
	spoil(t, path, "runs_label", dropCell)
	s, err := OpenRead(ctx, path, path)
	if err == nil {
		ls, _ := s.Labels(ctx)
		s.Close()
		t.Fatalf("the damaged store opened, and lists %d label(s)", len(ls))
	}
	d, ok := Damaged(err)
	if !ok {
		t.Fatalf("not a damaged store's error: %v", err)
	}
	if !d.Check.IndexOnly || strings.Join(d.Check.Indexes, ",") != "runs_label" {
		t.Errorf("the damage is in %v, index only %v: %q", d.Check.Indexes, d.Check.IndexOnly, d.Check.Lines)
	}
	testenv.WantErr(t, err, "store "+path+" is damaged", "only its indexes (runs_label)", "nothing is lost", "qpslab store check --reindex")

	// store check says the same, and with --reindex rebuilds the index.
	_, err = CheckStore(ctx, path, path, false)
	testenv.WantErr(t, err, "store "+path+" is damaged", "runs_label")
	c, err := CheckStore(ctx, path, path, true)
	if err != nil || !c.OK() || !c.Reindexed {
		t.Fatalf("store check --reindex: %+v, %v", c, err)
	}
	s, err = OpenRead(ctx, path, path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ls, err := s.Labels(ctx)
	if err != nil || len(ls) != 2 {
		t.Fatalf("after REINDEX: %d labels, %v", len(ls), err)
	}
}

// Damage to a table is not an index's: the way back is SQLite's recover,
// or the results files, and the error says what those cannot bring back.
func TestDamagedTablePageSaysSo(t *testing.T) {
	path := twoLabels(t)
	spoil(t, path, "runs", func(p []byte) { p[0] = 0x07 }) // no b-tree page's type
	_, err := OpenRead(ctx, path, path)
	d, ok := Damaged(err)
	if !ok {
		t.Fatalf("not a damaged store's error: %v", err)
	}
	if d.Check != nil && d.Check.IndexOnly {
		t.Errorf("table damage taken for an index's: %q", d.Check.Lines)
	}
	d.Results = "/h/results"
	testenv.WantErr(t, d, "store "+path+" is damaged", "qpslab store check --salvage "+path+".salvaged", "sqlite3 "+path+" .recover", "qpslab import results /h/results/*.json",
		"not imports, hidden runs, tokens, sessions or bisections")
	_, err = CheckStore(ctx, path, path, true)
	testenv.WantErr(t, err, "is damaged", "--salvage")
}

// A store above CheckOnOpen opened after a clean stop is not checked; a
// read that meets its damage is one error naming the file, never a short
// answer. After an unclean stop (a process that had it open was killed:
// its mark left), it is checked whatever its size.
func TestDamageOfALargeStore(t *testing.T) {
	defer func(n int64) { CheckOnOpen = n }(CheckOnOpen)
	CheckOnOpen = 1 // every store is large

	path := twoLabels(t)
	spoil(t, path, "samples", func(p []byte) { p[0] = 0x07 }) // a table the open does not read
	s, err := OpenRead(ctx, path, path)
	if err != nil {
		t.Fatalf("a large store after a clean stop is checked at open: %v", err)
	}
	_, err = s.Runs(ctx, Filter{Samples: true})
	s.Close()
	if _, ok := Damaged(err); !ok {
		t.Fatalf("a read of the damaged table: %v", err)
	}
	testenv.WantErr(t, err, "store "+path+" is damaged", "qpslab store check")

	path = twoLabels(t)
	spoil(t, path, "runs_label", dropCell)
	if err := os.WriteFile(path+".open-lock", []byte(markOpen), 0o600); err != nil { // a killed process's mark
		t.Fatal(err)
	}
	_, err = OpenRead(ctx, path, path)
	testenv.WantErr(t, err, "is damaged", "runs_label")
}

// The mark: made at the first open, kept while any has the store open,
// cleared by the last close.
func TestOpenMark(t *testing.T) {
	path := filepath.Join(t.TempDir(), "qpslab.db")
	read := func() string { b, _ := os.ReadFile(path + ".open-lock"); return string(b) }
	a, err := Open(ctx, path, path)
	if err != nil {
		t.Fatal(err)
	}
	b, err := Open(ctx, path, path)
	if err != nil {
		t.Fatal(err)
	}
	if read() != markOpen {
		t.Fatalf("the mark of an open store: %q", read())
	}
	a.Close()
	if read() != markOpen {
		t.Fatalf("cleared while another has the store open: %q", read())
	}
	b.Close()
	if read() != "" {
		t.Fatalf("left after the last close: %q", read())
	}
}

// A salvage copies what still reads: of a table with a damaged leaf page,
// the rows before it and after it (read backwards from the end), every
// other table whole; the new store opens and checks clean, and the
// damaged one is left as it was.
func TestSalvage(t *testing.T) {
	path := filepath.Join(t.TempDir(), "qpslab.db")
	s, err := Open(ctx, path, path)
	if err != nil {
		t.Fatal(err)
	}
	var runs []result.Run
	for i := 0; i < 300; i++ {
		r := finished(meta("point-query_range=100", 1+i%4), result.OK, 1000, 2)
		r.Started = r.Started.Add(time.Duration(i) * time.Second)
		r.Error = strings.Repeat("x", 200) // a few runs a page
		runs = append(runs, r)
	}
	if _, err := s.Import(ctx, runs, Meta{Source: "run"}); err != nil {
		t.Fatal(err)
	}
	s.Close()
	// A leaf page of the runs table in the middle of it.
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	var leaves []int64
	rows, err := db.Query(`SELECT pageno FROM dbstat WHERE name = 'runs' AND pagetype = 'leaf' ORDER BY path`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var p int64
		rows.Scan(&p)
		leaves = append(leaves, p)
	}
	rows.Close()
	db.Close()
	if len(leaves) < 5 {
		t.Fatalf("the runs table has %d leaf pages", len(leaves))
	}
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteAt([]byte{0x07}, (leaves[len(leaves)/2]-1)*4096) // no b-tree page's type
	f.Close()
	before, _ := os.ReadFile(path)

	to := filepath.Join(t.TempDir(), "salvaged.db")
	tables, err := Salvage(ctx, path, path, to)
	if err != nil {
		t.Fatal(err)
	}
	for _, tb := range tables {
		switch {
		case tb.Table == "runs" && (!tb.Lost || tb.Rows == 0 || tb.Rows >= 300):
			t.Errorf("runs: %+v", tb)
		case tb.Table != "runs" && tb.Lost:
			t.Errorf("%s lost rows: %+v", tb.Table, tb)
		case tb.Table == "samples" && tb.Rows != 600:
			t.Errorf("samples: %+v", tb)
		}
	}
	if c, err := CheckStore(ctx, to, "", false); err != nil || !c.OK() {
		t.Fatalf("the salvaged store: %+v %v", c, err)
	}
	got, err := OpenRead(ctx, to, "")
	if err != nil {
		t.Fatal(err)
	}
	defer got.Close()
	rs, err := got.Runs(ctx, Filter{})
	if err != nil || len(rs) == 0 || len(rs) >= 300 {
		t.Fatalf("the salvaged store reads %d runs: %v", len(rs), err)
	}
	first, last := rs[0].Started, rs[len(rs)-1].Started
	if !first.Equal(runs[0].Started) || !last.Equal(runs[299].Started) {
		t.Errorf("the salvaged runs run from %s to %s: the first and the last rows should be read", first, last)
	}
	if after, _ := os.ReadFile(path); string(after) != string(before) {
		t.Error("the damaged store was written")
	}
	_, err = Salvage(ctx, path, path, to)
	testenv.WantErr(t, err, "exists: name a new file")
}

// On PostgreSQL, store check says whether its data checksums are on and
// the failures it counted; nothing is salvaged from it.
func postgresCheck(t *testing.T, dsn string) {
	t.Helper()
	c, err := CheckStore(ctx, dsn, "", false)
	if err != nil || !c.Postgres || c.Failures != 0 || !c.OK() {
		t.Errorf("store check on PostgreSQL: %+v %v", c, err)
	}
	if strings.Contains(c.Where, "sekrit") {
		t.Errorf("store check names %s", c.Where)
	}
	_, err = Salvage(ctx, dsn, "", filepath.Join(t.TempDir(), "x.db"))
	testenv.WantErr(t, err, "a PostgreSQL store is restored from its backups")
}
