package store

import (
	"context"
	"fmt"
	"math"
	"time"
)

// Kinds of comparison a test's variance components were measured in: an
// A/A ratio has no repeat effect (both labels take the same state
// changes), so only an A/B comparison measures one.
const (
	ComponentsAA = "a/a"
	ComponentsAB = "a/b"
)

// VarianceComponents are one test's variance components as one of this
// host's comparisons measured them (analysis.Components, per test).
type VarianceComponents struct {
	HostID     string    `json:"host_id"`
	Suite      string    `json:"suite"`
	Test       string    `json:"test"`
	Threads    int       `json:"threads"`
	Conditions string    `json:"conditions"`
	Kind       string    `json:"kind"` // ComponentsAA or ComponentsAB
	Pool       string    `json:"pool"` // reads or writes
	Slice      float64   `json:"slice_seconds"`
	Within     float64   `json:"sigma_within"`
	Between    float64   `json:"sigma_between"`
	Rounds     int       `json:"rounds"`
	Repeats    int       `json:"repeats"`
	Plan       string    `json:"plan"`
	Measured   time.Time `json:"measured"`
}

// SaveComponents keeps cs, each replacing what its host had for the same
// test and kind of comparison: the newest wins. Figures that are not
// finite and ≥ 0 (a slice > 0) are refused.
func (s *Store) SaveComponents(ctx context.Context, cs []VarianceComponents) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("store variance components: %w", err)
	}
	defer tx.Rollback()
	for _, c := range cs {
		for _, v := range []float64{c.Slice, c.Within, c.Between} {
			if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
				return fmt.Errorf("store the variance components of %s: %v is not a finite figure ≥ 0", c.Test, v)
			}
		}
		if c.Slice == 0 || c.Kind != ComponentsAA && c.Kind != ComponentsAB {
			return fmt.Errorf("store the variance components of %s: slice %v s, kind %q", c.Test, c.Slice, c.Kind)
		}
		_, err = tx.ExecContext(ctx, s.q(`INSERT INTO variance_components (host_id, suite, test, threads, conditions, kind, pool, slice_seconds, sigma_within, sigma_between, rounds, repeats, plan_id, measured)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
			ON CONFLICT (host_id, suite, test, threads, conditions, kind) DO UPDATE SET pool = excluded.pool, slice_seconds = excluded.slice_seconds,
			sigma_within = excluded.sigma_within, sigma_between = excluded.sigma_between, rounds = excluded.rounds, repeats = excluded.repeats,
			plan_id = excluded.plan_id, measured = excluded.measured`),
			c.HostID, c.Suite, c.Test, c.Threads, c.Conditions, c.Kind, c.Pool, c.Slice, c.Within, c.Between, c.Rounds, c.Repeats, c.Plan, ts(c.Measured))
		if err != nil {
			return fmt.Errorf("store the variance components of %s: %w", c.Test, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("store variance components: %w", err)
	}
	return nil
}

// Components reads the variance components of the host whose fingerprint
// id is hostID for suite, by test.
func (s *Store) Components(ctx context.Context, hostID, suite string) ([]VarianceComponents, error) {
	rows, err := s.db.QueryContext(ctx, s.q(`SELECT host_id, suite, test, threads, conditions, kind, pool, slice_seconds, sigma_within, sigma_between, rounds, repeats, plan_id, measured
		FROM variance_components WHERE host_id = ? AND suite = ? ORDER BY test, threads, conditions, kind`), hostID, suite)
	if err != nil {
		return nil, fmt.Errorf("read variance components: %w", err)
	}
	defer rows.Close()
	var out []VarianceComponents
	for rows.Next() {
		var c VarianceComponents
		var measured string
		if err := rows.Scan(&c.HostID, &c.Suite, &c.Test, &c.Threads, &c.Conditions, &c.Kind, &c.Pool, &c.Slice, &c.Within, &c.Between, &c.Rounds, &c.Repeats, &c.Plan, &measured); err != nil {
			return nil, fmt.Errorf("read variance components: %w", err)
		}
		c.Measured = parseTS(measured)
		out = append(out, c)
	}
	return out, rows.Err()
}
