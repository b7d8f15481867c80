package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/qpslab/qpslab/internal/label"
	"github.com/qpslab/qpslab/internal/result"
)

// What qpslab serve keeps beside the results (migration 5): its API's
// tokens (hashed), the change points its alerts know of, and its state;
// and the cheap reads its pages list runs, hosts and tests with.

// Token is an API token as stored: never the token itself, only its hash
// (kept apart from this type, so that nothing prints it by mistake).
type Token struct {
	ID       string    `json:"id"`
	Name     string    `json:"name"`
	Scopes   []string  `json:"scopes"`
	Created  time.Time `json:"created"`
	LastUsed time.Time `json:"last_used"`
	Revoked  time.Time `json:"revoked"`
}

// ErrNoToken is TokenByHash's error for a hash no token has.
var ErrNoToken = errors.New("no such token")

func parseTS(s string) time.Time {
	t, _ := time.Parse(time.RFC3339Nano, s)
	return t
}

// AddToken stores a new token under its hash. Its name must not be the
// name of a token that is not revoked.
func (s *Store) AddToken(ctx context.Context, t Token, hash string) error {
	var n int
	if err := s.db.QueryRowContext(ctx, s.q(`SELECT count(*) FROM tokens WHERE name = ? AND revoked = ''`), t.Name).Scan(&n); err != nil {
		return fmt.Errorf("store token: %w", err)
	}
	if n > 0 {
		return fmt.Errorf("a token named %q exists: revoke it first (qpslab tokens revoke %s) or choose another name", t.Name, t.Name)
	}
	_, err := s.db.ExecContext(ctx, s.q(`INSERT INTO tokens (id, name, hash, scopes, created) VALUES (?, ?, ?, ?, ?)`),
		t.ID, t.Name, hash, strings.Join(t.Scopes, ","), ts(t.Created))
	if err != nil {
		return fmt.Errorf("store token: %w", err)
	}
	return nil
}

const tokenCols = `id, name, scopes, created, last_used, revoked`

func scanToken(sc interface{ Scan(...any) error }) (Token, error) {
	var t Token
	var scopes, created, used, revoked string
	if err := sc.Scan(&t.ID, &t.Name, &scopes, &created, &used, &revoked); err != nil {
		return t, err
	}
	if scopes != "" {
		t.Scopes = strings.Split(scopes, ",")
	}
	t.Created, t.LastUsed, t.Revoked = parseTS(created), parseTS(used), parseTS(revoked)
	return t, nil
}

// TokenByHash finds the token whose hash is hash, revoked or not
// (ErrNoToken when none is).
func (s *Store) TokenByHash(ctx context.Context, hash string) (Token, error) {
	t, err := scanToken(s.db.QueryRowContext(ctx, s.q(`SELECT `+tokenCols+` FROM tokens WHERE hash = ?`), hash))
	if errors.Is(err, sql.ErrNoRows) {
		return t, ErrNoToken
	}
	if err != nil {
		return t, fmt.Errorf("read tokens: %w", err)
	}
	return t, nil
}

// TouchToken records that the token id was used at.
func (s *Store) TouchToken(ctx context.Context, id string, at time.Time) error {
	if _, err := s.db.ExecContext(ctx, s.q(`UPDATE tokens SET last_used = ? WHERE id = ?`), ts(at), id); err != nil {
		return fmt.Errorf("store token use: %w", err)
	}
	return nil
}

// Tokens lists every token, the oldest first.
func (s *Store) Tokens(ctx context.Context) ([]Token, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT `+tokenCols+` FROM tokens ORDER BY created, id`)
	if err != nil {
		return nil, fmt.Errorf("read tokens: %w", err)
	}
	defer rows.Close()
	var out []Token
	for rows.Next() {
		t, err := scanToken(rows)
		if err != nil {
			return nil, fmt.Errorf("read tokens: %w", err)
		}
		out = append(out, t)
	}
	return out, rows.Err()
}

// RevokeToken revokes the token named by its id, or by its name when no
// id is that, and ends its sessions; it returns the token. Revoking a revoked token is an error.
func (s *Store) RevokeToken(ctx context.Context, idOrName string, at time.Time) (Token, error) {
	all, err := s.Tokens(ctx)
	if err != nil {
		return Token{}, err
	}
	var found []Token
	for _, t := range all {
		if t.ID == idOrName {
			found = []Token{t}
			break
		}
		if t.Name == idOrName && t.Revoked.IsZero() {
			found = append(found, t)
		}
	}
	switch len(found) {
	case 0:
		return Token{}, fmt.Errorf("no token has the id or name %q that is not revoked: see qpslab tokens list", idOrName)
	case 1:
	default:
		return Token{}, fmt.Errorf("%d tokens are named %q: revoke one by its id (qpslab tokens list)", len(found), idOrName)
	}
	t := found[0]
	if !t.Revoked.IsZero() {
		return t, fmt.Errorf("token %s (%s) was revoked on %s already", t.ID, t.Name, t.Revoked.Format(time.RFC3339))
	}
	// Its sessions end with it (a session of a revoked token is refused
	// anyway: this records when).
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return t, fmt.Errorf("revoke token %s: %w", t.ID, err)
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, s.q(`UPDATE tokens SET revoked = ? WHERE id = ? AND revoked = ''`), ts(at), t.ID); err != nil {
		return t, fmt.Errorf("revoke token %s: %w", t.ID, err)
	}
	if err := s.revokeSessionsOf(ctx, tx, t.ID, at); err != nil {
		return t, err
	}
	if err := tx.Commit(); err != nil {
		return t, fmt.Errorf("revoke token %s: %w", t.ID, err)
	}
	t.Revoked = at
	return t, nil
}

// Alert is a change point the alerts know of, and what was done about it.
type Alert struct {
	Key       string    `json:"key"`
	Series    string    `json:"series"`
	Kind      string    `json:"kind"`
	Magnitude float64   `json:"magnitude"`
	Arrived   string    `json:"arrived"`
	State     string    `json:"state"` // AlertKnown, AlertPending, AlertSent, AlertFailed
	Attempts  int       `json:"attempts"`
	Error     string    `json:"error,omitempty"`
	Created   time.Time `json:"created"`
	Sent      time.Time `json:"sent"`
}

// The states of an alert.
const (
	AlertKnown   = "known"   // stored before alerts began: never sent
	AlertPending = "pending" // being sent
	AlertSent    = "sent"
	AlertFailed  = "failed" // the webhook refused it or could not be reached; tried again
)

// alertsBaseline is serve_state's record that the change points stored
// before alerts began have been taken as known.
const alertsBaseline = "alerts_baseline"

// AlertsBaseline takes the change points in known as known, once per
// store: it returns false, storing nothing, when that was done before (by
// this or another process).
func (s *Store) AlertsBaseline(ctx context.Context, known []Alert, at time.Time) (bool, error) {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return false, fmt.Errorf("store alerts: %w", err)
	}
	defer tx.Rollback()
	res, err := tx.ExecContext(ctx, s.q(`INSERT INTO serve_state (name, value) VALUES (?, ?) ON CONFLICT (name) DO NOTHING`), alertsBaseline, ts(at))
	if err != nil {
		return false, fmt.Errorf("store alerts: %w", err)
	}
	if n, err := res.RowsAffected(); err != nil || n == 0 {
		return false, err
	}
	for _, a := range known {
		a.State = AlertKnown
		if _, err := s.addAlert(ctx, tx, a, at); err != nil {
			return false, err
		}
	}
	if err := tx.Commit(); err != nil {
		return false, fmt.Errorf("store alerts: %w", err)
	}
	return true, nil
}

// HasAlertsBaseline says whether AlertsBaseline was done.
func (s *Store) HasAlertsBaseline(ctx context.Context) (bool, error) {
	var n int
	if err := s.db.QueryRowContext(ctx, s.q(`SELECT count(*) FROM serve_state WHERE name = ?`), alertsBaseline).Scan(&n); err != nil {
		return false, fmt.Errorf("read alerts: %w", err)
	}
	return n > 0, nil
}

func (s *Store) addAlert(ctx context.Context, x execer, a Alert, at time.Time) (bool, error) {
	res, err := x.ExecContext(ctx, s.q(`INSERT INTO alerts (key, series, kind, magnitude, arrived, state, created) VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (key) DO NOTHING`),
		a.Key, a.Series, a.Kind, a.Magnitude, a.Arrived, a.State, ts(at))
	if err != nil {
		return false, fmt.Errorf("store alert %s: %w", a.Series, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, fmt.Errorf("store alert %s: %w", a.Series, err)
	}
	return n == 1, nil
}

// AddAlert records a change point as pending, unless it is recorded
// already: added says whether this call recorded it, so that of two
// processes seeing one change point only one alerts.
func (s *Store) AddAlert(ctx context.Context, a Alert, at time.Time) (added bool, err error) {
	a.State = AlertPending
	return s.addAlert(ctx, s.db, a, at)
}

// ClaimAlert takes a failed alert for another attempt (its state becomes
// pending), unless another process took it first or it has had attempts
// already.
func (s *Store) ClaimAlert(ctx context.Context, key string, attempts int) (bool, error) {
	res, err := s.db.ExecContext(ctx, s.q(`UPDATE alerts SET state = ? WHERE key = ? AND state = ? AND attempts < ?`), AlertPending, key, AlertFailed, attempts)
	if err != nil {
		return false, fmt.Errorf("store alert: %w", err)
	}
	n, err := res.RowsAffected()
	return n == 1, err
}

// AlertDone records an attempt: sent, or failed with why.
func (s *Store) AlertDone(ctx context.Context, key string, sendErr error, at time.Time) error {
	state, msg, sent := AlertSent, "", ts(at)
	if sendErr != nil {
		state, msg, sent = AlertFailed, sendErr.Error(), ""
	}
	if _, err := s.db.ExecContext(ctx, s.q(`UPDATE alerts SET state = ?, error = ?, sent = ?, attempts = attempts + 1 WHERE key = ?`), state, msg, sent, key); err != nil {
		return fmt.Errorf("store alert: %w", err)
	}
	return nil
}

// Alerts lists the change points the alerts know of, the newest first.
func (s *Store) Alerts(ctx context.Context) ([]Alert, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT key, series, kind, magnitude, arrived, state, attempts, error, created, sent FROM alerts ORDER BY created DESC, key`)
	if err != nil {
		return nil, fmt.Errorf("read alerts: %w", err)
	}
	defer rows.Close()
	var out []Alert
	for rows.Next() {
		var a Alert
		var created, sent string
		if err := rows.Scan(&a.Key, &a.Series, &a.Kind, &a.Magnitude, &a.Arrived, &a.State, &a.Attempts, &a.Error, &created, &sent); err != nil {
			return nil, fmt.Errorf("read alerts: %w", err)
		}
		a.Created, a.Sent = parseTS(created), parseTS(sent)
		out = append(out, a)
	}
	return out, rows.Err()
}

// Generation changes whenever what history is made of changes: a run
// ending ok or imported, a build taking a version, a run hidden, unhidden
// or deleted (Curate). Caches of what is concluded from history compare
// it, rather than the results themselves.
func (s *Store) Generation(ctx context.Context) (string, error) {
	g, err := s.Generations(ctx)
	return g.Global, err
}

// TestKey names one test of one suite.
type TestKey struct{ Suite, Test string }

// Generations is Generation for the whole store (Global, the same string)
// and for each test with ok runs (Tests): a test's moves when one of its
// runs ends ok, is imported, hidden, unhidden or deleted, or one of its
// builds takes a version (its count of versioned builds and of audit lines
// are part of it). A cache of what one test's
// history concludes keeps its answer while the test's generation holds,
// whatever other tests received: one read, grouped by test.
type Generations struct {
	Global string
	Tests  map[TestKey]string
}

func (s *Store) Generations(ctx context.Context) (Generations, error) {
	var versioned, audited int
	if err := s.db.QueryRowContext(ctx, `SELECT (SELECT count(*) FROM builds WHERE version <> ''), (SELECT count(*) FROM run_audit)`).Scan(&versioned, &audited); err != nil {
		return Generations{}, fmt.Errorf("read store %s: %w", s.where, err)
	}
	rows, err := s.db.QueryContext(ctx, s.q(`SELECT r.suite, r.test, count(*), COALESCE(max(r.ended), ''), COALESCE(max(r.started), ''),
		count(DISTINCT CASE WHEN b.version <> '' THEN b.name END), (SELECT count(*) FROM run_audit a WHERE a.test = r.test)
		FROM `+visibleRuns+` r JOIN builds b ON b.name = r.build WHERE r.status = ? GROUP BY r.suite, r.test`), result.OK)
	if err != nil {
		return Generations{}, fmt.Errorf("read store %s: %w", s.where, err)
	}
	defer rows.Close()
	g := Generations{Tests: map[TestKey]string{}}
	total, ended, started := 0, "", ""
	for rows.Next() {
		var k TestKey
		var n, v, a int
		var e, st string
		if err := rows.Scan(&k.Suite, &k.Test, &n, &e, &st, &v, &a); err != nil {
			return Generations{}, fmt.Errorf("read store %s: %w", s.where, err)
		}
		g.Tests[k] = fmt.Sprintf("%d/%s/%s/%d/%d", n, e, st, v, a)
		total, ended, started = total+n, max(ended, e), max(started, st)
	}
	if err := rows.Err(); err != nil {
		return Generations{}, fmt.Errorf("read store %s: %w", s.where, err)
	}
	g.Global = fmt.Sprintf("%d/%s/%s/%d/%d", total, ended, started, versioned, audited)
	return g, nil
}

// RunInfo is a run's row without its figures: what lists of runs show.
type RunInfo struct {
	ID       string    `json:"id"`
	Suite    string    `json:"suite"`
	Test     string    `json:"test"`
	Build    string    `json:"build"`
	Version  string    `json:"version"`
	Config   string    `json:"config"` // the name
	ConfigID string    `json:"config_id"`
	Threads  int       `json:"threads"`
	Status   string    `json:"status"`
	Error    string    `json:"error,omitempty"`
	Started  time.Time `json:"started"`
	Ended    time.Time `json:"ended"`
	Reported float64   `json:"reported"`
	Unit     string    `json:"unit"`
	HostID   string    `json:"host_id,omitempty"`
	Hostname string    `json:"hostname,omitempty"`
	Source   string    `json:"source"`
	Role     string    `json:"role,omitempty"`
	Step     int       `json:"step"`
	// StorageEngine is the storage engine the run's tables were created in, as
	// it records it ("innodb", "rocksdb"; "" for none: PostgreSQL, and
	// the MySQL family before --engine, which was InnoDB).
	StorageEngine string `json:"engine,omitempty"`
	Conditions    string `json:"-"`
}

// Label is how the run's results are addressed, as result.Run.Label
// says it: build.config, with :engine for an engine other than InnoDB.
func (r RunInfo) Label() string { return r.LabelOf().String() }

// LabelOf is the run's label.
func (r RunInfo) LabelOf() label.Label { return label.Of(r.Build, r.Config, r.StorageEngine) }

// RunQuery selects runs to list: each field narrows ("" or 0: any).
type RunQuery struct {
	ID, Suite, Build, Config, Test, Host, Status string
	StorageEngine                                string // "": any; else that storage engine only (runs that record none count as InnoDB's)
	Threads                                      int
	Limit, Offset                                int // Limit 0: all
}

// RunList lists the runs q selects, the newest first, and how many it
// selects in all (beyond Limit).
func (s *Store) RunList(ctx context.Context, q RunQuery) ([]RunInfo, int, error) {
	where := []string{"1 = 1"}
	var args []any
	add := func(cond string, v ...any) {
		where = append(where, cond)
		args = append(args, v...)
	}
	for _, f := range []struct{ col, v string }{{"r.id", q.ID}, {"r.suite", q.Suite}, {"r.build", q.Build}, {"r.config_name", q.Config}, {"r.test", q.Test}, {"r.status", q.Status}} {
		if f.v != "" {
			add(f.col+" = ?", f.v)
		}
	}
	if q.Threads > 0 {
		add("r.threads = ?", q.Threads)
	}
	if q.Host != "" {
		add("(r.hostname = ? OR r.host_id LIKE ?)", q.Host, q.Host+"%")
	}
	switch e := label.OtherStorageEngine(q.StorageEngine); {
	case q.StorageEngine == "":
	case e == "": // params are json.Marshal's: no spaces
		add(`(r.params NOT LIKE ? OR r.params LIKE ?)`, `%"engine":%`, `%"engine":"`+label.InnoDB+`"%`)
	default:
		// The engine's name as a literal: its _ and % are no wildcards.
		lit := strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(e)
		add(`r.params LIKE ? ESCAPE '\'`, `%"engine":"`+lit+`"%`)
	}
	cond := strings.Join(where, " AND ")
	var total int
	if err := s.db.QueryRowContext(ctx, s.q(`SELECT count(*) FROM `+visibleRuns+` r WHERE `+cond), args...).Scan(&total); err != nil {
		return nil, 0, fmt.Errorf("read store %s: %w", s.where, err)
	}
	query := `SELECT r.id, r.suite, r.test, r.build, b.version, r.config_name, r.config, r.threads, r.status, r.error, r.started, r.ended,
		r.reported, r.reported_unit, COALESCE(r.host_id, ''), r.hostname, r.source, r.role, r.step, r.params
		FROM ` + visibleRuns + ` r JOIN builds b ON b.name = r.build WHERE ` + cond + ` ORDER BY r.started DESC, r.id DESC`
	if q.Limit > 0 {
		query += ` LIMIT ? OFFSET ?`
		args = append(args, q.Limit, max(q.Offset, 0))
	}
	rows, err := s.db.QueryContext(ctx, s.q(query), args...)
	if err != nil {
		return nil, 0, fmt.Errorf("read store %s: %w", s.where, err)
	}
	defer rows.Close()
	var out []RunInfo
	for rows.Next() {
		var r RunInfo
		var started, ended, params string
		if err := rows.Scan(&r.ID, &r.Suite, &r.Test, &r.Build, &r.Version, &r.Config, &r.ConfigID, &r.Threads, &r.Status, &r.Error, &started, &ended,
			&r.Reported, &r.Unit, &r.HostID, &r.Hostname, &r.Source, &r.Role, &r.Step, &params); err != nil {
			return nil, 0, fmt.Errorf("read store %s: %w", s.where, err)
		}
		// The engine is a param (as the store's filters read it), not a
		// column: only it is decoded.
		var p struct {
			StorageEngine string `json:"engine"`
		}
		if err := json.Unmarshal([]byte(params), &p); err != nil {
			return nil, 0, fmt.Errorf("read store %s: params of run %s: %w", s.where, r.ID, err)
		}
		r.Started, r.Ended, r.StorageEngine = parseTS(started), parseTS(ended), p.StorageEngine
		out = append(out, r)
	}
	return out, total, rows.Err()
}

// HostInfo is a stored host: its fingerprint, the hostnames its runs were
// written under, and its runs.
type HostInfo struct {
	ID          string          `json:"id"`
	Fingerprint json.RawMessage `json:"fingerprint"`
	FirstSeen   time.Time       `json:"first_seen"`
	Hostnames   []string        `json:"hostnames"`
	Runs        int             `json:"runs"`
	Last        time.Time       `json:"last"`
}

// Hosts lists the stored hosts, the one with the latest run first.
func (s *Store) Hosts(ctx context.Context) ([]HostInfo, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT h.id, h.fingerprint, h.first_seen, count(r.id), COALESCE(max(r.started), '')
		FROM hosts h LEFT JOIN `+visibleRuns+` r ON r.host_id = h.id GROUP BY h.id, h.fingerprint, h.first_seen ORDER BY 5 DESC, h.id`)
	if err != nil {
		return nil, fmt.Errorf("read store %s: %w", s.where, err)
	}
	var out []HostInfo
	idx := map[string]int{}
	for rows.Next() {
		var h HostInfo
		var fp, first, last string
		if err := rows.Scan(&h.ID, &fp, &first, &h.Runs, &last); err != nil {
			rows.Close()
			return nil, fmt.Errorf("read store %s: %w", s.where, err)
		}
		h.Fingerprint, h.FirstSeen, h.Last = json.RawMessage(fp), parseTS(first), parseTS(last)
		idx[h.ID] = len(out)
		out = append(out, h)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read store %s: %w", s.where, err)
	}
	names, err := s.db.QueryContext(ctx, `SELECT DISTINCT host_id, hostname FROM `+visibleRuns+` r WHERE host_id IS NOT NULL AND hostname <> '' ORDER BY host_id, hostname`)
	if err != nil {
		return nil, fmt.Errorf("read store %s: %w", s.where, err)
	}
	defer names.Close()
	for names.Next() {
		var id, name string
		if err := names.Scan(&id, &name); err != nil {
			return nil, fmt.Errorf("read store %s: %w", s.where, err)
		}
		if i, ok := idx[id]; ok {
			out[i].Hostnames = append(out[i].Hostnames, name)
		}
	}
	return out, names.Err()
}

// TestInfo is one suite's test as history has it: its ok runs.
type TestInfo struct {
	Suite string    `json:"suite"`
	Test  string    `json:"test"`
	Step  int       `json:"step"` // its position in the suite's order
	Role  string    `json:"role,omitempty"`
	Runs  int       `json:"runs"`
	Last  time.Time `json:"last"`
}

// Tests lists the tests with ok runs that are not warm-ups, per suite in
// the suite's order.
func (s *Store) Tests(ctx context.Context) ([]TestInfo, error) {
	rows, err := s.db.QueryContext(ctx, s.q(`SELECT suite, test, min(step), max(role), count(*), COALESCE(max(started), '') FROM `+visibleRuns+` r
		WHERE status = ? AND role <> ? GROUP BY suite, test ORDER BY suite, 3, test`), result.OK, result.RoleWarm)
	if err != nil {
		return nil, fmt.Errorf("read store %s: %w", s.where, err)
	}
	defer rows.Close()
	var out []TestInfo
	for rows.Next() {
		var t TestInfo
		var last string
		if err := rows.Scan(&t.Suite, &t.Test, &t.Step, &t.Role, &t.Runs, &last); err != nil {
			return nil, fmt.Errorf("read store %s: %w", s.where, err)
		}
		t.Last = parseTS(last)
		out = append(out, t)
	}
	return out, rows.Err()
}
