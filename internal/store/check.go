package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"regexp"
	"slices"
	"strings"

	"golang.org/x/sys/unix"
)

// CheckOnOpen is the largest SQLite store (its file and its WAL) that
// every Open checks (PRAGMA quick_check) before anything reads it. The
// check reads every page: a store of many small runs at 32 MiB costs about
// a tenth of a second on a quiet 2-core host, several times that on a
// busy one (bench/storecheck.sh; docs/reliability.md has the figures). A
// larger store is checked after an unclean stop (a process that had it
// open ended without closing it: a kill, a crash, a power loss) and on
// demand (qpslab store check).
var CheckOnOpen int64 = 32 << 20

// Check is what a check of a store found.
type Check struct {
	Where    string
	Postgres bool
	// SQLite: quick_check's lines ("ok" alone when nothing is wrong), at
	// most 100; IndexOnly when every damage they name is in an index
	// (Indexes), which REINDEX rebuilds from the tables with nothing lost.
	Lines     []string
	IndexOnly bool
	Indexes   []string
	// Reindexed: the damaged indexes were rebuilt (--reindex) and the
	// check run again found nothing.
	Reindexed bool
	// PostgreSQL: whether its data checksums are on, and the checksum
	// failures it counted in the store's database.
	Checksums bool
	Failures  int64
}

// OK says whether the check found nothing wrong.
func (c *Check) OK() bool {
	if c.Postgres {
		return c.Failures == 0
	}
	return len(c.Lines) == 1 && c.Lines[0] == "ok"
}

// headRE is the head quick_check puts before the first problem it finds
// in a database, in the same line.
var headRE = regexp.MustCompile(`^\*\*\* in database \S+ \*\*\*\s*`)

// problems are quick_check's lines without their head, one line each.
func problems(lines []string) []string {
	var out []string
	for _, l := range lines {
		if l = strings.Join(strings.Fields(headRE.ReplaceAllString(l, "")), " "); l != "" {
			out = append(out, l)
		}
	}
	return out
}

// Problems are what the check found, one a line.
func (c *Check) Problems() []string { return problems(c.Lines) }

// Summary is the damage in a few words: quick_check's first problem and
// how many more.
func (c *Check) Summary() string {
	lines := problems(c.Lines)
	if len(lines) == 0 {
		return "nothing found"
	}
	if len(lines) == 1 {
		return lines[0]
	}
	return fmt.Sprintf("%s, and %d more", lines[0], len(lines)-1)
}

// quickCheck runs PRAGMA quick_check on a SQLite store and says what the
// damage it finds is in: btree pages, b-tree root pages ("Tree N") and
// indexes named in its lines are looked up (the dbstat table, the schema);
// when each is an index's, the damage is to indexes only.
func quickCheck(ctx context.Context, db *sql.DB, where string) (*Check, error) {
	c := &Check{Where: where}
	rows, err := db.QueryContext(ctx, `PRAGMA quick_check(100)`)
	if err != nil {
		return nil, checkErr(where, err)
	}
	for rows.Next() {
		var l string
		if err := rows.Scan(&l); err != nil {
			rows.Close()
			return nil, checkErr(where, err)
		}
		c.Lines = append(c.Lines, l)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, checkErr(where, err)
	}
	if !c.OK() {
		c.IndexOnly, c.Indexes = indexOnly(ctx, db, c.Lines)
	}
	return c, nil
}

// checked is quickCheck's finding, or, where the damage stops the check
// itself, what stopped it.
func checked(ctx context.Context, db *sql.DB, where string) (*Check, error) {
	c, err := quickCheck(ctx, db, where)
	if d, ok := Damaged(err); ok {
		what := "the file cannot be read as a database"
		if d.Err != nil {
			what = d.Err.Error()
		}
		return &Check{Where: where, Lines: []string{what}}, nil
	}
	return c, err
}

// checkErr is a check that could not run: a file too damaged to be read
// as a database at all is damage too.
func checkErr(where string, err error) error {
	if d, ok := Damaged(err); ok {
		return d
	}
	return fmt.Errorf("check store %s: %w", where, err)
}

var (
	pageRE  = regexp.MustCompile(`(?i)\b(?:page|tree) (\d+)`)
	indexRE = regexp.MustCompile(`\bindex (\S+)$`)
)

// indexOnly says whether every line of quick_check's names damage in an
// index, and which indexes. A line that names neither a page nor an index
// (a freelist's count, a page never used) could be any table's: not
// index-only.
func indexOnly(ctx context.Context, db *sql.DB, lines []string) (bool, []string) {
	kinds := map[string]string{} // schema name → type
	rows, err := db.QueryContext(ctx, `SELECT name, type FROM sqlite_schema`)
	if err != nil {
		return false, nil
	}
	for rows.Next() {
		var n, t string
		if rows.Scan(&n, &t) == nil {
			kinds[n] = t
		}
	}
	rows.Close()
	// Each line's names: the index it names, the b-tree of each page.
	type problem struct {
		index string
		pages []string
	}
	var ps []problem
	var pages []string
	for _, l := range problems(lines) {
		var p problem
		if m := indexRE.FindStringSubmatch(l); m != nil {
			p.index = m[1]
		}
		for _, m := range pageRE.FindAllStringSubmatch(l, -1) {
			p.pages = append(p.pages, m[1])
		}
		if p.index == "" && len(p.pages) == 0 {
			return false, nil
		}
		ps = append(ps, p)
		pages = append(pages, p.pages...)
	}
	// One pass of dbstat (it walks every b-tree) finds the pages' owners.
	owner := map[string]string{}
	if len(pages) > 0 {
		rows, err := db.QueryContext(ctx, `SELECT DISTINCT pageno, name FROM dbstat WHERE pageno IN (`+strings.Join(pages, ", ")+`)`)
		if err != nil {
			return false, nil
		}
		for rows.Next() {
			var pg, name string
			if rows.Scan(&pg, &name) == nil {
				owner[pg] = name
			}
		}
		rows.Close()
	}
	var indexes []string
	for _, p := range ps {
		names := []string{}
		if p.index != "" {
			names = append(names, p.index)
		}
		for _, pg := range p.pages {
			names = append(names, owner[pg])
		}
		for _, n := range names {
			if kinds[n] != "index" {
				return false, nil
			}
			if !slices.Contains(indexes, n) {
				indexes = append(indexes, n)
			}
		}
	}
	slices.Sort(indexes)
	return len(indexes) > 0, indexes
}

// reindex rebuilds the indexes c names and checks again.
func reindex(ctx context.Context, db *sql.DB, c *Check) (*Check, error) {
	for _, ix := range c.Indexes {
		if _, err := db.ExecContext(ctx, `REINDEX "`+strings.ReplaceAll(ix, `"`, `""`)+`"`); err != nil {
			return nil, fmt.Errorf("store %s: REINDEX %s: %w", c.Where, ix, err)
		}
	}
	again, err := quickCheck(ctx, db, c.Where)
	if err != nil {
		return nil, err
	}
	again.Reindexed, again.Indexes = again.OK(), c.Indexes
	return again, nil
}

// CheckStore checks the store dsn names (def: the default file) without
// opening it as Open does (no migration, nothing written): SQLite's quick
// check, and with reindex the damaged indexes rebuilt when the damage is
// in indexes only; PostgreSQL's data checksums and the checksum failures
// it counted. A SQLite store that is damaged is a *DamagedError whose
// Check says how.
func CheckStore(ctx context.Context, dsn, def string, reindexToo bool) (*Check, error) {
	if err := checkDSN(dsn); err != nil {
		return nil, err
	}
	if isPostgres(dsn) {
		return checkPostgres(ctx, dsn)
	}
	path := sqlitePath(dsn, def)
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%w: %s does not exist", ErrNoStore, path)
	}
	db, err := openSQLite(sqliteDSN(path), path)
	if err != nil {
		return nil, fmt.Errorf("open store %s: %w", path, err)
	}
	defer db.Close()
	c, err := checked(ctx, db, path)
	if err != nil {
		return nil, err
	}
	if !c.OK() && c.IndexOnly && reindexToo {
		if c, err = reindex(ctx, db, c); err != nil {
			return nil, err
		}
	}
	if !c.OK() {
		return c, &DamagedError{Where: path, Check: c}
	}
	return c, nil
}

// checkPostgres is what applies to a PostgreSQL store: PostgreSQL checks
// each page it reads against its checksum when the cluster has them
// (initdb --data-checksums), and counts each failure per database.
func checkPostgres(ctx context.Context, dsn string) (*Check, error) {
	s, err := openDSN(ctx, dsn, "", false)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	c := &Check{Where: s.where, Postgres: true}
	var on string
	if err := s.db.QueryRowContext(ctx, `SHOW data_checksums`).Scan(&on); err != nil {
		return nil, fmt.Errorf("check store %s: %w", s.where, err)
	}
	c.Checksums = on == "on"
	var failures sql.NullInt64
	if err := s.db.QueryRowContext(ctx, `SELECT checksum_failures FROM pg_stat_database WHERE datname = current_database()`).Scan(&failures); err != nil {
		return nil, fmt.Errorf("check store %s: %w", s.where, err)
	}
	c.Failures = failures.Int64
	if c.Failures > 0 {
		return c, fmt.Errorf("store %s: PostgreSQL counted %d page checksum failure(s) in its database (pg_stat_database): restore it from a backup, or find the damaged relations with pg_amcheck", s.where, c.Failures)
	}
	return c, nil
}

// checkOnOpen checks a SQLite store as Open opens it, when CheckOnOpen
// says so or an unclean stop left it (unclean): a damaged store is a
// *DamagedError, and nothing reads it.
func (s *Store) checkOnOpen(ctx context.Context, path string, unclean bool) error {
	var size int64
	for _, p := range []string{path, path + "-wal"} {
		if fi, err := os.Stat(p); err == nil {
			size += fi.Size()
		}
	}
	if size == 0 || (size > CheckOnOpen && !unclean) {
		return nil
	}
	c, err := checked(ctx, s.db, path)
	if err != nil {
		return err
	}
	if !c.OK() {
		return &DamagedError{Where: path, Check: c}
	}
	return nil
}

// openMark is this process's mark on a SQLite store it has open (the
// file <store>.open-lock): a shared lock while it is open, and the word
// "open" in the file from the first opener's open to the last one's close.
// A process that ends without closing (a kill, a crash, a power loss)
// leaves the word behind and its lock released, and the next process to
// open the store alone finds both: an unclean stop, after which the store
// is checked whatever its size.
type openMark struct{ f *os.File }

const markOpen = "open"

// mark marks the store at path open; unclean says an earlier process left
// it without closing it. A mark that cannot be made (a read-only folder)
// is none: the store opens all the same.
func mark(path string) (m *openMark, unclean bool) {
	f, err := os.OpenFile(path+".open-lock", os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, false
	}
	if unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB) == nil {
		// No one else has it open: a mark left is an unclean stop's.
		b := make([]byte, len(markOpen))
		n, _ := io.ReadFull(f, b)
		unclean = string(b[:n]) == markOpen
		if !unclean {
			_, err = f.WriteAt([]byte(markOpen), 0)
			if err == nil {
				err = f.Sync() // a power loss must not lose the mark
			}
		}
		if err != nil {
			f.Close()
			return nil, unclean
		}
	}
	if unix.Flock(int(f.Fd()), unix.LOCK_SH) != nil {
		f.Close()
		return nil, unclean
	}
	return &openMark{f: f}, unclean
}

// close clears the mark when this process is the last to have the store
// open, and lets go of it.
func (m *openMark) close() {
	if m == nil {
		return
	}
	if unix.Flock(int(m.f.Fd()), unix.LOCK_EX|unix.LOCK_NB) == nil {
		m.f.Truncate(0)
	}
	m.f.Close() // releases the lock
}

// release lets go of the mark and leaves it: a store that could not be
// opened (a damaged one above all) is checked again at the next open.
func (m *openMark) release() {
	if m != nil {
		m.f.Close()
	}
}
