// Package store owns where results live: SQLite in the qpslab home by
// default (WAL, so readers never wait and two writers take turns), or a
// shared PostgreSQL. One schema and one set of migrations (goose) serve
// both. It keeps hosts (fingerprints), builds, configs (name and content),
// runs (written as they go: a run is inserted when it starts, its samples
// each second, its totals and hardware cost when it ends), and reads them
// back as result.Run values by label. It never stores a password: the
// connection string is used, not kept.
package store

import (
	"context"
	"crypto/rand"
	"database/sql"
	"embed"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	_ "github.com/jackc/pgx/v5/stdlib" // database/sql driver "pgx"
	"github.com/pressly/goose/v3"
	"github.com/pressly/goose/v3/lock"
	"github.com/prometheus/procfs"
	"golang.org/x/sys/unix"
	"modernc.org/sqlite"             // database/sql driver "sqlite"
	sqlite3 "modernc.org/sqlite/lib" // its result codes

	"github.com/qpslab/qpslab/internal/client"
	"github.com/qpslab/qpslab/internal/host"
	"github.com/qpslab/qpslab/internal/result"
)

//go:embed migrations/*.sql
var migrations embed.FS

// Store is an open results database.
type Store struct {
	db       *sql.DB
	postgres bool
	where    string // for messages: the file, or postgres (never the password)
	hostname string
	mark     *openMark // a SQLite store's: open by this process (check.go)
}

// Open opens (creating and migrating as needed) the store named by dsn:
// "" or a file path for SQLite (def is the default file), postgres://… or
// postgresql://… for PostgreSQL.
func Open(ctx context.Context, dsn, def string) (*Store, error) {
	return openDSN(ctx, dsn, def, true)
}

// ErrNoStore is OpenRead's error for a SQLite store that does not exist.
var ErrNoStore = errors.New("no store")

// OpenRead opens an existing store for commands that only read: a SQLite
// file that is not there is ErrNoStore (wrapped, naming the file), and
// nothing is created.
func OpenRead(ctx context.Context, dsn, def string) (*Store, error) {
	return openDSN(ctx, dsn, def, false)
}

// checkDSN refuses a store that is neither a file path nor PostgreSQL: a
// URL of another scheme would otherwise become a file of that name.
func checkDSN(dsn string) error {
	scheme, _, ok := strings.Cut(dsn, "://")
	if !ok || scheme == "postgres" || scheme == "postgresql" {
		return nil
	}
	return fmt.Errorf("--store %s: qpslab stores results in a SQLite file (give its path) or in PostgreSQL (postgres://user@host/db), not in %s", redact(dsn), scheme)
}

// isPostgres says whether dsn names a PostgreSQL store.
func isPostgres(dsn string) bool {
	return strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://")
}

// sqlitePath is the file of a SQLite store dsn names (def for none).
func sqlitePath(dsn, def string) string {
	if path := strings.TrimPrefix(dsn, "sqlite:"); path != "" {
		return path
	}
	return def
}

// sqliteDSN is how modernc's driver opens the store at path. WAL: readers
// do not block the writer; busy_timeout: a second writer waits its turn;
// BEGIN IMMEDIATE: a transaction takes the write lock at its start, so it
// never fails halfway on a busy database.
func sqliteDSN(path string) string {
	return "file:" + path + "?_pragma=journal_mode(WAL)&_pragma=busy_timeout(60000)&_pragma=foreign_keys(1)&_pragma=synchronous(NORMAL)&_txlock=immediate"
}

func openDSN(ctx context.Context, dsn, def string, create bool) (*Store, error) {
	if err := checkDSN(dsn); err != nil {
		return nil, err
	}
	s := &Store{}
	s.hostname, _ = os.Hostname()
	if isPostgres(dsn) {
		db, err := sql.Open("pgx", dsn)
		if err != nil {
			return nil, fmt.Errorf("open store: %w", err)
		}
		s.db, s.postgres, s.where = db, true, redact(dsn)
		if err := db.PingContext(ctx); err != nil {
			db.Close()
			return nil, fmt.Errorf("open store %s: %w", s.where, err)
		}
		locker, err := lock.NewPostgresSessionLocker()
		if err != nil {
			db.Close()
			return nil, err
		}
		if err := s.migrate(ctx, goose.DialectPostgres, goose.WithSessionLocker(locker)); err != nil {
			db.Close()
			return nil, err
		}
	} else {
		path := sqlitePath(dsn, def)
		if fi, err := os.Stat(path); err == nil && fi.IsDir() {
			return nil, fmt.Errorf("--store %s is a directory: give the store's file, e.g. %s", path, filepath.Join(path, "qpslab.db"))
		}
		if !create {
			if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
				return nil, fmt.Errorf("%w: %s does not exist yet: run qpslab run SUITE (qpslab suites lists them), or qpslab import", ErrNoStore, path)
			}
		}
		if err := createPrivate(path, path == def); err != nil {
			return nil, err
		}
		db, err := openSQLite(sqliteDSN(path), path)
		if err != nil {
			return nil, fmt.Errorf("open store %s: %w", path, err)
		}
		s.db, s.where = db, path
		// Checked before anything reads it (check.go): a small store each
		// time, a large one after an unclean stop.
		m, unclean := mark(path)
		err = s.checkOnOpen(ctx, path, unclean)
		if err == nil {
			err = s.migrateLocked(ctx, path)
		}
		if err != nil {
			m.release()
			db.Close()
			return nil, err
		}
		s.mark = m
	}
	if err := s.upgradeRuns(ctx); err != nil {
		s.db.Close()
		s.mark.release()
		return nil, err
	}
	s.reapStale(ctx)
	return s, nil
}

// upgradeRuns fills the suite columns of runs stored before schema 3 from
// their params (result.Upgrade), once: an upgraded run has schema_version 3.
func (s *Store) upgradeRuns(ctx context.Context) error {
	rows, err := s.db.QueryContext(ctx, `SELECT id, test, params, reported_unit, totals FROM runs WHERE schema_version < 3`)
	if err != nil {
		return fmt.Errorf("store %s: upgrade runs: %w", s.where, err)
	}
	type up struct {
		id, groups, totals string
		step               int
		role               string
	}
	var ups []up
	for rows.Next() {
		var id, params, totals string
		r := result.Run{SchemaVersion: 2, Suite: "sysbench"}
		if err := rows.Scan(&id, &r.Test, &params, &r.Totals.ReportedUnit, &totals); err != nil {
			rows.Close()
			return fmt.Errorf("store %s: upgrade runs: %w", s.where, err)
		}
		if err := json.Unmarshal([]byte(params), &r.Params); err != nil {
			rows.Close()
			return fmt.Errorf("store %s: upgrade run %s: params: %w", s.where, id, err)
		}
		var tot map[string]any
		if err := json.Unmarshal([]byte(totals), &tot); err != nil {
			rows.Close()
			return fmt.Errorf("store %s: upgrade run %s: totals: %w", s.where, id, err)
		}
		result.Upgrade(&r)
		tot["series"] = r.Totals.Series
		g, err1 := json.Marshal(r.Groups)
		t, err2 := json.Marshal(tot)
		if err := errors.Join(err1, err2); err != nil {
			rows.Close()
			return fmt.Errorf("store %s: upgrade run %s: %w", s.where, id, err)
		}
		ups = append(ups, up{id: id, groups: string(g), totals: string(t), step: r.Step, role: r.Role})
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("store %s: upgrade runs: %w", s.where, err)
	}
	if len(ups) == 0 {
		return nil
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("store %s: upgrade runs: %w", s.where, err)
	}
	defer tx.Rollback()
	for _, u := range ups {
		if _, err := tx.ExecContext(ctx, s.q(`UPDATE runs SET step = ?, role = ?, groups = ?, totals = ?, schema_version = 3 WHERE id = ? AND schema_version < 3`),
			u.step, u.role, u.groups, u.totals, u.id); err != nil {
			return fmt.Errorf("store %s: upgrade run %s: %w", s.where, u.id, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("store %s: upgrade runs: %w", s.where, err)
	}
	return nil
}

// createPrivate creates a SQLite store's file 0600 (SQLite creates its
// -wal and -shm files with the file's mode) and the folders missing above
// it 0700, so that no other user of the host reads the results or the
// hashes of tokens and sessions. What exists keeps its mode: a file or
// folder someone made is theirs to set. The home's folder (home is true:
// the store is the home's default file) is created 0711 instead, so that
// the unprivileged user qpslab runs database servers as can still reach
// their data folders under it (home.RootDefault); it lists nothing to that
// user, and the file is 0600 either way.
func createPrivate(path string, home bool) error {
	mode := os.FileMode(0o700)
	if home {
		mode = 0o711
	}
	if err := os.MkdirAll(filepath.Dir(path), mode); err != nil {
		return fmt.Errorf("open store: %w", err)
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("open store: %w", err)
	}
	return f.Close()
}

// migrateLocked migrates a SQLite store under a file lock, so that two
// processes opening a new store at once do not both create its tables.
func (s *Store) migrateLocked(ctx context.Context, path string) error {
	f, err := os.OpenFile(path+".migrate-lock", os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return fmt.Errorf("open store %s: %w", path, err)
	}
	defer f.Close()
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX); err != nil {
		return fmt.Errorf("lock store %s: %w", path, err)
	}
	defer unix.Flock(int(f.Fd()), unix.LOCK_UN)
	return s.migrate(ctx, goose.DialectSQLite3)
}

func (s *Store) migrate(ctx context.Context, d goose.Dialect, opts ...goose.ProviderOption) error {
	opts = append(opts, goose.WithGoMigrations(goose.NewGoMigration(4, &goose.GoFunc{RunTx: s.migrate4}, nil),
		goose.NewGoMigration(8, &goose.GoFunc{RunDB: s.migrate8}, nil)),
		// A migration missing below the store's version is applied, not
		// refused: each stands on its own, and a store that a build
		// with a later one migrated (or one whose migration is re-run, as
		// the tests of migration 4 do) still gets it.
		goose.WithAllowOutofOrder(true))
	p, err := goose.NewProvider(d, s.db, mustSub(migrations, "migrations"), opts...)
	if err != nil {
		return fmt.Errorf("store %s: migrations: %w", s.where, err)
	}
	if err := s.notNewer(ctx, p); err != nil {
		return err
	}
	if _, err := p.Up(ctx); err != nil {
		return fmt.Errorf("store %s: migrate: %w", s.where, err)
	}
	return nil
}

// notNewer refuses a store that a later qpslab migrated past the
// migrations this one knows: its tables may lack columns this one writes
// (migration 11 drops the metrics table's per-op columns), so writing
// would fail after a whole run. Refused at open, before anything runs.
func (s *Store) notNewer(ctx context.Context, p *goose.Provider) error {
	cur, err := p.GetDBVersion(ctx)
	if err != nil {
		return nil // a new store: no version table yet
	}
	var known int64
	for _, m := range p.ListSources() {
		known = max(known, m.Version)
	}
	if cur > known {
		return fmt.Errorf("store %s has schema version %d, newer than this qpslab's %d: upgrade qpslab on this host (every host of a fleet shares the store's schema)", s.where, cur, known)
	}
	return nil
}

// Close closes the store.
func (s *Store) Close() error {
	err := s.db.Close()
	s.mark.close()
	return err
}

// Where names the store for messages (a file, or a PostgreSQL URL without
// its password).
func (s *Store) Where() string { return s.where }

// redact drops the password from a PostgreSQL URL, in its user part or as
// a password= parameter.
func redact(dsn string) string {
	if q := strings.Index(dsn, "?"); q >= 0 {
		params := strings.Split(dsn[q+1:], "&")
		for i, p := range params {
			if strings.HasPrefix(strings.ToLower(p), "password=") {
				params[i] = "password=…"
			}
		}
		dsn = dsn[:q+1] + strings.Join(params, "&")
	}
	at := strings.LastIndex(dsn, "@")
	scheme := strings.Index(dsn, "://")
	if at < 0 || scheme < 0 {
		return dsn
	}
	userinfo := dsn[scheme+3 : at]
	if i := strings.Index(userinfo, ":"); i >= 0 {
		userinfo = userinfo[:i]
	}
	return dsn[:scheme+3] + userinfo + dsn[at:]
}

// q turns ? placeholders into PostgreSQL's $n (its dialect's Rebind).
func (s *Store) q(query string) string {
	if !s.postgres {
		return query
	}
	return client.PostgresDialect.Rebind(query)
}

// timeLayout is RFC 3339 with a fixed nine-digit fraction, so that stored
// times sort as text (RFC3339Nano trims zeros: "…00Z" would sort after
// "…00.1Z").
const timeLayout = "2006-01-02T15:04:05.000000000Z07:00"

func now() string { return time.Now().UTC().Format(timeLayout) }

func ts(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(timeLayout)
}

func newID() string {
	b := make([]byte, 10)
	rand.Read(b)
	return time.Now().UTC().Format("20060102T150405") + "-" + hex.EncodeToString(b)
}

// HostID is a fingerprint's identity: host.ID, a hash of its stable facts
// only (machine, kernel, CPU speed state; never steal, free memory, current
// frequencies or the risks' text).
func HostID(fp json.RawMessage) (string, error) { return host.ID(fp) }

// Meta is what a run's row needs beyond the result: the config's content
// (nil when unknown, as for imports) and where the run came from.
type Meta struct {
	ConfigContent []byte
	Source        string // "run", or the importer: "sysbench-1.0", "mytools", …
	// Hostname is where a run ran, if not this machine's hostname: a fleet
	// agent's name (docs/fleet.md).
	Hostname string
	// Job and JobAttempt name the fleet job and its attempt a run belongs
	// to ("" and 0 outside the fleet; SupersedeJob).
	Job        string
	JobAttempt int
}

type execer interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

// begin inserts the run's row (status running unless r says otherwise)
// and what it refers to.
func (s *Store) insertRun(ctx context.Context, x execer, id string, r result.Run, m Meta) error {
	var hostID any
	if len(r.Host) > 0 {
		h, err := HostID(r.Host)
		if err != nil {
			return err
		}
		if _, err := x.ExecContext(ctx, s.q(`INSERT INTO hosts (id, fingerprint, first_seen) VALUES (?, ?, ?) ON CONFLICT (id) DO NOTHING`), h, string(r.Host), now()); err != nil {
			return fmt.Errorf("store host: %w", err)
		}
		hostID = h
	}
	if err := s.insertBuild(ctx, x, r); err != nil {
		return err
	}
	cfgName := result.ConfigName(r.Config)
	var content any
	if m.ConfigContent != nil {
		content = string(m.ConfigContent)
	}
	if _, err := x.ExecContext(ctx, s.q(`INSERT INTO configs (id, name, content) VALUES (?, ?, ?) ON CONFLICT (id) DO NOTHING`), r.Config, cfgName, content); err != nil {
		return fmt.Errorf("store config: %w", err)
	}
	params, err := json.Marshal(r.Params)
	if err != nil {
		return fmt.Errorf("store run %s: params: %w", r.Test, err)
	}
	status := r.Status
	if status == "" {
		status = "running"
	}
	hostname := s.hostname
	if m.Hostname != "" {
		hostname = m.Hostname
	}
	if m.Source != "run" {
		hostname = "" // an import says nothing of where it ran
	}
	groups, err := json.Marshal(r.Groups)
	if err != nil {
		return fmt.Errorf("store run: groups: %w", err)
	}
	if r.Suite == "" {
		return fmt.Errorf("store run %s: it names no suite", r.Test)
	}
	runner, machine := runnerOf(os.Getpid()), machineID()
	if m.Source != "run" {
		machine = ""
	}
	_, err = x.ExecContext(ctx, s.q(`INSERT INTO runs (id, suite, test, build, config, config_name, host_id, hostname, threads, loop_mode, rate, arrivals,
		params, seed, status, error, started, ended, warmup, duration, qpslab_version, schema_version, source, pid, reported, reported_unit, totals, runner,
		step, role, groups, job, job_attempt, plan_id, pairing, machine)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`),
		id, r.Suite, r.Test, r.Build, r.Config, cfgName, hostID, hostname, r.Threads, r.Loop, r.Rate, r.Arrivals,
		string(params), strconv.FormatUint(r.Seed, 10), status, r.Error, ts(r.Started), ts(r.Ended), r.Warmup, r.Duration,
		r.QpslabVersion, result.SchemaVersion, m.Source, os.Getpid(), 0.0, r.Totals.ReportedUnit, "{}", runner,
		r.Step, r.Role, string(groups), m.Job, m.JobAttempt, r.Plan, r.Pairing, machine)
	if err != nil {
		return fmt.Errorf("store run: %w", err)
	}
	return nil
}

// insertBuild records a run's build: a new build with the run's flavor and
// version, and a build stored without a version (imported before its version
// was known) takes the run's. A version once recorded is kept.
func (s *Store) insertBuild(ctx context.Context, x execer, r result.Run) error {
	_, err := x.ExecContext(ctx, s.q(`INSERT INTO builds (name, flavor, version) VALUES (?, ?, ?)
		ON CONFLICT (name) DO UPDATE SET flavor = excluded.flavor, version = excluded.version WHERE builds.version = '' AND excluded.version <> ''`),
		r.Build, r.Flavor, r.Version)
	if err != nil {
		return fmt.Errorf("store build: %w", err)
	}
	// A build compiled from a commit: its commit, commit time and flags
	// (migration 15), rewritten by a run at another commit (the name was
	// compiled again with --replace) unless a run of the build started
	// later (an older run imported after it).
	if c := r.Params["commit"]; c != "" {
		_, err = x.ExecContext(ctx, s.q(`UPDATE builds SET "commit" = ?, commit_time = ?, flags = ? WHERE name = ? AND "commit" <> ?
			AND NOT EXISTS (SELECT 1 FROM runs WHERE build = ? AND started > ?)`),
			c, r.Params["commit_time"], r.Params["build_flags"], r.Build, c, r.Build, ts(r.Started))
		if err != nil {
			return fmt.Errorf("store build %s: its commit: %w", r.Build, err)
		}
	}
	return nil
}

func (s *Store) insertSample(ctx context.Context, x execer, id string, smp result.Sample) error {
	lat, err := json.Marshal(map[string]result.Latency{"response": smp.Response, "service": smp.Service})
	if err != nil {
		return fmt.Errorf("store sample %d: latency: %w", smp.Second, err)
	}
	var ops any
	if len(smp.Ops) > 0 {
		b, err := json.Marshal(smp.Ops)
		if err != nil {
			return fmt.Errorf("store sample %d: per-kind figures: %w", smp.Second, err)
		}
		ops = string(b)
	}
	_, err = x.ExecContext(ctx, s.q(`INSERT INTO samples (run_id, second, events, statements, n_rows, errors, retries, late, latency, response_hist, service_hist, ops, backlog, dur)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (run_id, second) DO NOTHING`),
		id, smp.Second, smp.Events, smp.Statements, smp.Rows, smp.Errors, smp.Retries, smp.Late, string(lat), nullBytes(smp.ResponseHist), nullBytes(smp.ServiceHist), ops, smp.Backlog, smp.Dur)
	if err != nil {
		return fmt.Errorf("store sample: %w", err)
	}
	return nil
}

func nullBytes(b []byte) any {
	if len(b) == 0 {
		return nil
	}
	return b
}

// finishRun writes the run's end: status, totals, hardware cost, and any
// sample not written yet.
func (s *Store) finishRun(ctx context.Context, x execer, id string, r result.Run) error {
	t := r.Totals
	rh, sh := t.ResponseHist, t.ServiceHist
	t.ResponseHist, t.ServiceHist = nil, nil
	tot, err := json.Marshal(t)
	if err != nil {
		return fmt.Errorf("store run %s: totals: %w", r.Test, err)
	}
	params, err := json.Marshal(r.Params)
	if err != nil {
		return fmt.Errorf("store run %s: params: %w", r.Test, err)
	}
	verdicts, err := json.Marshal(r.Verdicts)
	if err != nil {
		return fmt.Errorf("store run %s: verdicts: %w", r.Test, err)
	}
	_, err = x.ExecContext(ctx, s.q(`UPDATE runs SET status = ?, error = ?, started = ?, ended = ?, duration = ?, params = ?, reported = ?, reported_unit = ?,
		totals = ?, response_hist = ?, service_hist = ?, verdicts = ? WHERE id = ?`),
		r.Status, r.Error, ts(r.Started), ts(r.Ended), r.Duration, string(params), t.Reported, t.ReportedUnit, string(tot), nullBytes(rh), nullBytes(sh), string(verdicts), id)
	if err != nil {
		return fmt.Errorf("store run: %w", err)
	}
	for _, smp := range r.Samples {
		if err := s.insertSample(ctx, x, id, smp); err != nil {
			return err
		}
	}
	if _, err := x.ExecContext(ctx, s.q(`UPDATE runs SET plan_id = ?, pairing = ? WHERE id = ?`), r.Plan, r.Pairing, id); err != nil {
		return fmt.Errorf("store run: %w", err)
	}
	if len(r.Parts) > 0 {
		b, err := json.Marshal(r.Parts)
		if err != nil {
			return fmt.Errorf("store run %s: its parts: %w", r.Test, err)
		}
		if _, err := x.ExecContext(ctx, s.q(`UPDATE runs SET parts = ? WHERE id = ?`), string(b), id); err != nil {
			return fmt.Errorf("store run: %w", err)
		}
	}
	for _, rd := range r.Rounds {
		fig, err := json.Marshal(rd.Figures)
		if err != nil || rd.Figures == nil {
			fig = []byte("{}")
		}
		_, err = x.ExecContext(ctx, s.q(`INSERT INTO rounds (run_id, repeat_no, round_no, started, seconds, events, statements, n_rows, value, idle_cpu, figures)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (run_id, repeat_no, round_no) DO NOTHING`),
			id, rd.Repeat, rd.Round, ts(rd.Started), rd.Seconds, rd.Events, rd.Statements, rd.Rows, rd.Value, rd.IdleCPU, string(fig))
		if err != nil {
			return fmt.Errorf("store round %d.%d: %w", rd.Repeat, rd.Round, err)
		}
	}
	for _, st := range r.Stacks {
		b, err := json.Marshal(st)
		if err != nil {
			return fmt.Errorf("store run %s: %s stacks: %w", r.Test, st.Source, err)
		}
		if _, err := x.ExecContext(ctx, s.q(`INSERT INTO stacks (run_id, source, data) VALUES (?, ?, ?) ON CONFLICT (run_id, source) DO NOTHING`), id, st.Source, string(b)); err != nil {
			return fmt.Errorf("store stacks: %w", err)
		}
	}
	if hw := r.HW; hw != nil {
		b, err := json.Marshal(hw)
		if err != nil {
			return fmt.Errorf("store run %s: hardware figures: %w", r.Test, err)
		}
		_, err = x.ExecContext(ctx, s.q(`INSERT INTO metrics (run_id, op, hw) VALUES (?, ?, ?) ON CONFLICT (run_id) DO NOTHING`), id, hw.Op, string(b))
		if err != nil {
			return fmt.Errorf("store metrics: %w", err)
		}
	}
	return nil
}

// Writer keeps one run as it goes. Sample never blocks the caller (the
// engine's collector): samples queue and a goroutine writes them, each in
// its own short transaction. Done writes the end and waits for the queue.
type Writer struct {
	s     *Store
	id    string
	mu    sync.Mutex
	q     []result.Sample
	wake  chan struct{}
	done  chan struct{}
	err   error
	onErr func(error)
}

// Begin inserts a run that is starting (r holds what is known before it
// runs: suite, test, build, config, threads, params, host).
func (s *Store) Begin(ctx context.Context, r result.Run, m Meta) (*Writer, error) {
	if m.Source == "" {
		m.Source = "run"
	}
	id := newID()
	r.Status = ""
	if err := s.insertRun(ctx, s.db, id, r, m); err != nil {
		return nil, err
	}
	w := &Writer{s: s, id: id, wake: make(chan struct{}, 1), done: make(chan struct{})}
	go w.loop()
	return w, nil
}

// ID is the run's key in the store.
func (w *Writer) ID() string { return w.id }

// Sample queues one second's sample.
func (w *Writer) Sample(smp result.Sample) {
	w.mu.Lock()
	w.q = append(w.q, smp)
	w.mu.Unlock()
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

func (w *Writer) loop() {
	defer close(w.done)
	for range w.wake {
		w.mu.Lock()
		q := w.q
		w.q = nil
		w.mu.Unlock()
		for _, smp := range q {
			if err := w.s.insertSample(context.Background(), w.s.db, w.id, smp); err != nil {
				if w.err == nil {
					w.err = err
				}
				w.mu.Lock()
				f := w.onErr
				w.mu.Unlock()
				if f != nil {
					f(err)
				}
			}
		}
	}
}

// Done writes the run's end in one transaction, after the queued samples.
// When the end cannot be written (a full disk), it still tries to mark the
// run failed with why, so that the store does not later call it aborted
// for another reason; the error is the first failure. After a failure,
// Retry and Fail may follow (the recorder's, once it made room).
func (w *Writer) Done(ctx context.Context, r result.Run) error {
	close(w.wake)
	<-w.done
	err := w.finish(ctx, r)
	if err != nil {
		w.Fail(ctx, "its result could not be stored: "+err.Error())
	}
	return err
}

// Retry writes the run's end again after Done failed (finishRun's writes
// skip what is there already): the whole run, or nothing of its end.
func (w *Writer) Retry(ctx context.Context, r result.Run) error { return w.finish(ctx, r) }

// Fail marks the run failed with why (a run whose end could not be
// written): one small write, which a full disk leaves room for sooner
// than the run's samples. A run stored ok is left as it is.
func (w *Writer) Fail(ctx context.Context, why string) error {
	_, err := w.s.db.ExecContext(ctx, w.s.q(`UPDATE runs SET status = 'failed', error = ?, ended = ? WHERE id = ? AND status IN ('running', 'failed')`),
		why, now(), w.id)
	if err != nil {
		return fmt.Errorf("store run: %w", err)
	}
	return nil
}

// OnError has f told each failure to write a sample as it happens (the
// run's end writes them again): a full disk is found while the run still
// runs, not at its end.
func (w *Writer) OnError(f func(error)) {
	w.mu.Lock()
	w.onErr = f
	w.mu.Unlock()
}

// IsFull says whether err is the store's disk being full: SQLite's
// SQLITE_FULL, PostgreSQL's disk_full (53100), or ENOSPC.
func IsFull(err error) bool {
	var se *sqlite.Error
	if errors.As(err, &se) && se.Code()&0xff == sqlite3.SQLITE_FULL {
		return true
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) && pe.Code == "53100" { // disk_full
		return true
	}
	return errors.Is(err, syscall.ENOSPC)
}

func (w *Writer) finish(ctx context.Context, r result.Run) error {
	tx, err := w.s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("store run: %w", err)
	}
	defer tx.Rollback()
	if err := w.s.finishRun(ctx, tx, w.id, r); err != nil {
		return err
	}
	// A sample whose streamed write failed was written again in this
	// transaction (finishRun writes every sample): the run is whole.
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("store run: %w", err)
	}
	return nil
}

// Import stores finished runs in one transaction: all or none. A run that
// is already stored (the same build, config, test, threads, seed, start and
// figure: an import repeated, or a results file of runs qpslab stored as
// they ran) is skipped, so that no value counts twice; skipped says how many.
// A skipped run still gives its build a version the store lacked (results
// imported again once their version is known).
func (s *Store) Import(ctx context.Context, runs []result.Run, m Meta) (skipped int, err error) {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return 0, fmt.Errorf("store import: %w", err)
	}
	defer tx.Rollback()
	for _, r := range runs {
		var n int
		err := tx.QueryRowContext(ctx, s.q(`SELECT count(*) FROM runs WHERE build = ? AND config_name = ? AND test = ? AND threads = ? AND seed = ? AND started = ? AND reported = ?`),
			r.Build, result.ConfigName(r.Config), r.Test, r.Threads, strconv.FormatUint(r.Seed, 10), ts(r.Started), r.Totals.Reported).Scan(&n)
		if err != nil {
			return 0, fmt.Errorf("store import: %w", err)
		}
		if n > 0 {
			skipped++
			if err := s.insertBuild(ctx, tx, r); err != nil {
				return 0, err
			}
			continue
		}
		id := newID()
		if err := s.insertRun(ctx, tx, id, r, m); err != nil {
			return 0, err
		}
		if err := s.finishRun(ctx, tx, id, r); err != nil {
			return 0, err
		}
	}
	if err := tx.Commit(); err != nil {
		return 0, fmt.Errorf("store import: %w", err)
	}
	return skipped, nil
}

// proc is where the kernel's process and boot facts are read: /proc, or
// for the tests a root they choose (a boot id of their own: a reboot),
// as prometheus/procfs reads any root.
var proc = "/proc"

// machineIDFile names this machine for ever (systemd's machine id).
var machineIDFile = "/etc/machine-id"

// bootID is this boot of this machine's id ("" where it cannot be read).
func bootID() string {
	b, err := os.ReadFile(filepath.Join(proc, "sys/kernel/random/boot_id"))
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// machineID is this machine's id ("" where it has none).
func machineID() string {
	b, err := os.ReadFile(machineIDFile)
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// runnerOf names a process for ever: this boot of this machine, its pid
// and its start time ("" where /proc cannot say).
func runnerOf(pid int) string {
	boot := bootID()
	if boot == "" {
		return ""
	}
	fs, err := procfs.NewFS(proc)
	if err != nil {
		return ""
	}
	p, err := fs.Proc(pid)
	if err != nil {
		return ""
	}
	st, err := p.Stat()
	if err != nil {
		return ""
	}
	return boot + "/" + strconv.Itoa(pid) + "/" + strconv.FormatUint(st.Starttime, 10)
}

// reapStale marks runs still "running" whose writer is gone (killed without
// a chance to say so) as aborted, saying why; their samples stay. Runs
// written in this boot of this machine are judged by their process; runs
// of an earlier boot (the machine restarted, or lost its power, while they
// ran) are gone with it: this machine's runs (its machine id), and in a
// SQLite store, which is one machine's, the runs stored before qpslab
// recorded machines. Another machine's runs, in a store hosts share, are
// left to it.
func (s *Store) reapStale(ctx context.Context) {
	boot := bootID()
	if boot == "" {
		return
	}
	rows, err := s.db.QueryContext(ctx, s.q(`SELECT id, pid, runner, machine FROM runs WHERE status = 'running' AND runner <> ''`))
	if err != nil {
		return
	}
	me := machineID()
	type stale struct{ id, why string }
	var gone []stale
	for rows.Next() {
		var id, runner, machine string
		var pid int
		if rows.Scan(&id, &pid, &runner, &machine) != nil {
			continue
		}
		was, _, _ := strings.Cut(runner, "/")
		switch {
		case was == boot:
			if runnerOf(pid) != runner {
				gone = append(gone, stale{id, "the qpslab process that ran it ended without finishing it"})
			}
		case (me != "" && machine == me) || (machine == "" && !s.postgres):
			gone = append(gone, stale{id, "the machine restarted while it ran (its boot " + was + " ended; this is boot " + boot + "): the qpslab process that ran it ended with it"})
		}
	}
	rows.Close()
	for _, g := range gone {
		s.db.ExecContext(ctx, s.q(`UPDATE runs SET status = 'aborted', error = ? WHERE id = ? AND status = 'running'`), g.why, g.id)
	}
}
