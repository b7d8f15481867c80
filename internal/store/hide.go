package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/qpslab/qpslab/internal/label"
)

// visibleRuns is what every read of results reads runs from: the runs no
// admin hid (Curate). Runs, Labels, RunList, Hosts, Tests and Generation
// read it, so that a hidden run is left out of every surface (labels,
// compare, history, metrics, detect, export, the dashboard and its API)
// at once; only writes, the import's check for runs already stored and the
// fleet's count of a job's runs read the table itself.
const visibleRuns = `(SELECT * FROM runs WHERE hidden_at = '')`

// What Curate does to a run.
const (
	Hide   = "hide"   // left out of every read until unhidden
	Unhide = "unhide" // read again
	Delete = "delete" // the run and its samples, metrics, stacks and rounds removed
)

// Audit is one line of the run audit: who did what to which run, when.
type Audit struct {
	At      time.Time `json:"at"`
	Action  string    `json:"action"` // hide, unhide or delete
	RunID   string    `json:"run_id"`
	Label   string    `json:"label"`
	Test    string    `json:"test"`
	Threads int       `json:"threads"`
	Who     string    `json:"who"`
}

// NoRunError is Curate's error for an id no stored run has.
type NoRunError struct{ ID, Where string }

func (e *NoRunError) Error() string {
	return fmt.Sprintf("run %q: no such run in %s: give a run's id, the end of its dashboard page's address (/runs/ID) or the id in GET /api/v1/runs", e.ID, e.Where)
}

// Curate hides, unhides or deletes the runs ids in one transaction, with
// an audit line each of who did it at when: all of them, or (for an id no
// run has: a *NoRunError) none. A delete removes the run's samples,
// metrics, stacks and rounds with it.
func (s *Store) Curate(ctx context.Context, action string, ids []string, who string, at time.Time) ([]Audit, error) {
	switch action {
	case Hide, Unhide, Delete:
	default:
		return nil, fmt.Errorf("curate: %q is not hide, unhide or delete", action)
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("store %s: %w", action, err)
	}
	defer tx.Rollback()
	var out []Audit
	for _, id := range ids {
		a := Audit{At: at.UTC(), Action: action, RunID: id, Who: who}
		var build, config, params string
		err := tx.QueryRowContext(ctx, s.q(`SELECT build, config_name, params, test, threads FROM runs WHERE id = ?`), id).Scan(&build, &config, &params, &a.Test, &a.Threads)
		if errors.Is(err, sql.ErrNoRows) {
			return nil, &NoRunError{ID: id, Where: s.where}
		}
		if err != nil {
			return nil, fmt.Errorf("store %s: %w", action, err)
		}
		var p map[string]string
		_ = json.Unmarshal([]byte(params), &p) // unreadable params: no engine, as before
		a.Label = label.Of(build, config, p["engine"]).String()
		var stmts []string
		switch action {
		case Hide:
			stmts = []string{`UPDATE runs SET hidden_at = ?, hidden_by = ? WHERE id = ?`}
		case Unhide:
			stmts = []string{`UPDATE runs SET hidden_at = '', hidden_by = '' WHERE id = ?`}
		case Delete:
			// Each dependent table by name: SQLite enforces ON DELETE
			// CASCADE only with its foreign keys on.
			for _, t := range []string{"samples", "metrics", "stacks", "rounds"} {
				stmts = append(stmts, `DELETE FROM `+t+` WHERE run_id = ?`)
			}
			stmts = append(stmts, `DELETE FROM runs WHERE id = ?`)
		}
		for _, q := range stmts {
			args := []any{id}
			if action == Hide {
				args = []any{ts(at), who, id}
			}
			if _, err := tx.ExecContext(ctx, s.q(q), args...); err != nil {
				return nil, fmt.Errorf("store %s: %w", action, err)
			}
		}
		if _, err := tx.ExecContext(ctx, s.q(`INSERT INTO run_audit (id, at, action, run_id, label, test, threads, who) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`),
			newID(), ts(at), action, id, a.Label, a.Test, a.Threads, who); err != nil {
			return nil, fmt.Errorf("store %s: audit: %w", action, err)
		}
		out = append(out, a)
	}
	if err := tx.Commit(); err != nil {
		return nil, fmt.Errorf("store %s: %w", action, err)
	}
	return out, nil
}

// AuditLog is the run audit, oldest first.
func (s *Store) AuditLog(ctx context.Context) ([]Audit, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT at, action, run_id, label, test, threads, who FROM run_audit ORDER BY at, id`)
	if err != nil {
		return nil, fmt.Errorf("read store %s: %w", s.where, err)
	}
	defer rows.Close()
	var out []Audit
	for rows.Next() {
		var a Audit
		var at string
		if err := rows.Scan(&at, &a.Action, &a.RunID, &a.Label, &a.Test, &a.Threads, &a.Who); err != nil {
			return nil, fmt.Errorf("read store %s: %w", s.where, err)
		}
		a.At = parseTS(at)
		out = append(out, a)
	}
	return out, rows.Err()
}
