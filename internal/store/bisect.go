package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"time"
)

// Bisections (migration 16, qpslab bisect): a walk over a source tree's
// commits between GOOD and BAD, and its steps as a log (a later row for
// the same commit and base supersedes an earlier one).

// Bisection states.
const (
	BisectRunning      = "running"       // walking, or interrupted: re-running the command resumes it
	BisectCannotTell   = "cannot tell"   // a step could not decide: resume with more rounds, or skip it
	BisectFound        = "found"         // the first bad commit (or the range it is in) is known
	BisectNoRegression = "no regression" // BAD is not worse than GOOD beyond the threshold
	BisectFailed       = "failed"        // stopped by an error (GOOD or BAD does not build, …)
)

// Bisection is one bisection's row.
type Bisection struct {
	ID        int64             `json:"id"`
	Src       string            `json:"src"`
	Good      string            `json:"good"`
	Bad       string            `json:"bad"`
	Suite     string            `json:"suite"`
	Test      string            `json:"test"`
	Metric    string            `json:"metric"`
	Threshold float64           `json:"threshold"`
	Params    map[string]string `json:"params,omitempty"`
	State     string            `json:"state"`
	Started   time.Time         `json:"started"`
	Ended     time.Time         `json:"ended,omitzero"`
	Result    string            `json:"result,omitempty"`
}

// BisectStep is one step of a bisection's log: a commit's build measured
// against a base commit's (Rel, Lo, Hi NaN where it was not measured).
type BisectStep struct {
	Seq        int       `json:"seq"`
	Commit     string    `json:"commit"`
	CommitTime time.Time `json:"commit_time,omitzero"`
	Base       string    `json:"base,omitempty"`
	Build      string    `json:"build,omitempty"`
	Plan       string    `json:"plan,omitempty"`
	Kind       string    `json:"kind"`
	Rel        float64   `json:"rel"`
	Lo         float64   `json:"lo"`
	Hi         float64   `json:"hi"`
	Rounds     int       `json:"rounds,omitempty"`
	Note       string    `json:"note,omitempty"`
	At         time.Time `json:"at"`
}

// StartBisection stores a new bisection and returns it with its id.
func (s *Store) StartBisection(ctx context.Context, b Bisection) (Bisection, error) {
	params, err := json.Marshal(b.Params)
	if err != nil {
		return b, err
	}
	if b.Started.IsZero() {
		b.Started = time.Now().UTC()
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return b, fmt.Errorf("store the bisection: %w", err)
	}
	defer tx.Rollback()
	if err := tx.QueryRowContext(ctx, `SELECT COALESCE(MAX(id), 0) + 1 FROM bisections`).Scan(&b.ID); err != nil {
		return b, fmt.Errorf("store the bisection: %w", err)
	}
	if _, err := tx.ExecContext(ctx, s.q(`INSERT INTO bisections (id, src, good, bad, suite, test, metric, threshold, params, state, started)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`), b.ID, b.Src, b.Good, b.Bad, b.Suite, b.Test, b.Metric, b.Threshold, string(params), b.State, ts(b.Started)); err != nil {
		return b, fmt.Errorf("store the bisection: %w", err)
	}
	return b, tx.Commit()
}

const bisectionCols = `id, src, good, bad, suite, test, metric, threshold, params, state, started, ended, result`

func scanBisection(sc interface{ Scan(...any) error }) (Bisection, error) {
	var b Bisection
	var params, started, ended string
	if err := sc.Scan(&b.ID, &b.Src, &b.Good, &b.Bad, &b.Suite, &b.Test, &b.Metric, &b.Threshold, &params, &b.State, &started, &ended, &b.Result); err != nil {
		return b, err
	}
	_ = json.Unmarshal([]byte(params), &b.Params)
	b.Started, b.Ended = parseTS(started), parseTS(ended)
	return b, nil
}

// Bisections are the stored bisections, the newest first.
func (s *Store) Bisections(ctx context.Context) ([]Bisection, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT `+bisectionCols+` FROM bisections ORDER BY id DESC`)
	if err != nil {
		return nil, fmt.Errorf("read bisections: %w", err)
	}
	defer rows.Close()
	var out []Bisection
	for rows.Next() {
		b, err := scanBisection(rows)
		if err != nil {
			return nil, fmt.Errorf("read bisections: %w", err)
		}
		out = append(out, b)
	}
	return out, rows.Err()
}

// ErrNoBisection is Bisection's error for an id no bisection has.
var ErrNoBisection = errors.New("no such bisection")

// Bisection is one bisection and its steps' log in order.
func (s *Store) Bisection(ctx context.Context, id int64) (Bisection, []BisectStep, error) {
	b, err := scanBisection(s.db.QueryRowContext(ctx, s.q(`SELECT `+bisectionCols+` FROM bisections WHERE id = ?`), id))
	if errors.Is(err, sql.ErrNoRows) {
		return b, nil, fmt.Errorf("bisection %d: %w (qpslab bisect status lists them)", id, ErrNoBisection)
	}
	if err != nil {
		return b, nil, fmt.Errorf("read bisection %d: %w", id, err)
	}
	rows, err := s.db.QueryContext(ctx, s.q(`SELECT seq, commit_hash, commit_time, base, build, plan, kind, rel, lo, hi, rounds, note, at
		FROM bisect_steps WHERE bisection = ? ORDER BY seq`), id)
	if err != nil {
		return b, nil, fmt.Errorf("read bisection %d's steps: %w", id, err)
	}
	defer rows.Close()
	var steps []BisectStep
	for rows.Next() {
		var st BisectStep
		var ct, at string
		var rel, lo, hi sql.NullFloat64
		if err := rows.Scan(&st.Seq, &st.Commit, &ct, &st.Base, &st.Build, &st.Plan, &st.Kind, &rel, &lo, &hi, &st.Rounds, &st.Note, &at); err != nil {
			return b, nil, fmt.Errorf("read bisection %d's steps: %w", id, err)
		}
		st.CommitTime, st.At = parseTS(ct), parseTS(at)
		st.Rel, st.Lo, st.Hi = nanOf(rel), nanOf(lo), nanOf(hi)
		steps = append(steps, st)
	}
	return b, steps, rows.Err()
}

// FindBisection is the newest bisection of the same question as q (its
// source tree, GOOD, BAD, suite and test), for re-running a command to
// resume it.
func (s *Store) FindBisection(ctx context.Context, q Bisection) (Bisection, bool, error) {
	b, err := scanBisection(s.db.QueryRowContext(ctx, s.q(`SELECT `+bisectionCols+` FROM bisections
		WHERE src = ? AND good = ? AND bad = ? AND suite = ? AND test = ? ORDER BY id DESC LIMIT 1`), q.Src, q.Good, q.Bad, q.Suite, q.Test))
	if errors.Is(err, sql.ErrNoRows) {
		return b, false, nil
	}
	if err != nil {
		return b, false, fmt.Errorf("read bisections: %w", err)
	}
	return b, true, nil
}

// AddBisectStep appends a step to bisection id's log (its Seq is the
// next) and returns it.
func (s *Store) AddBisectStep(ctx context.Context, id int64, st BisectStep) (BisectStep, error) {
	if st.At.IsZero() {
		st.At = time.Now().UTC()
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return st, fmt.Errorf("store the bisection's step: %w", err)
	}
	defer tx.Rollback()
	if err := tx.QueryRowContext(ctx, s.q(`SELECT COALESCE(MAX(seq), 0) + 1 FROM bisect_steps WHERE bisection = ?`), id).Scan(&st.Seq); err != nil {
		return st, fmt.Errorf("store the bisection's step: %w", err)
	}
	if _, err := tx.ExecContext(ctx, s.q(`INSERT INTO bisect_steps (bisection, seq, commit_hash, commit_time, base, build, plan, kind, rel, lo, hi, rounds, note, at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`), id, st.Seq, st.Commit, ts(st.CommitTime), st.Base, st.Build, st.Plan, st.Kind,
		nullNaN(st.Rel), nullNaN(st.Lo), nullNaN(st.Hi), st.Rounds, st.Note, ts(st.At)); err != nil {
		return st, fmt.Errorf("store the bisection's step: %w", err)
	}
	return st, tx.Commit()
}

// SetBisection stores a bisection's state, threshold, params (resume
// --rounds changes them), result and end (zero while it runs).
func (s *Store) SetBisection(ctx context.Context, b Bisection) error {
	params, err := json.Marshal(b.Params)
	if err != nil {
		return err
	}
	if _, err := s.db.ExecContext(ctx, s.q(`UPDATE bisections SET state = ?, threshold = ?, params = ?, result = ?, ended = ? WHERE id = ?`),
		b.State, b.Threshold, string(params), b.Result, ts(b.Ended), b.ID); err != nil {
		return fmt.Errorf("store bisection %d: %w", b.ID, err)
	}
	return nil
}

func nullNaN(v float64) any {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return nil
	}
	return v
}

func nanOf(v sql.NullFloat64) float64 {
	if !v.Valid {
		return math.NaN()
	}
	return v.Float64
}
